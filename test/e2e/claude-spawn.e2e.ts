// D45 on the real Claude Code 2.1.332 against the loopback mock Anthropic API: the adapter's
// spawner starts a headless stream-json worker in a git worktree of a scratch repository. The
// session id the spawn answers is the one the hooks and the lane speak of; a steer sent while its
// tool runs lands in the same turn's next request; the turn's final answer is on run.finished;
// stopping the spawner leaves no CLI running.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { claudeLauncher } from '../../src/adapters/claude-code/stream-json/spawn.js';
import { uuidFor } from '../../src/adapters/claude-code/stream-json/stream.js';
import { openAdapterLanes } from '../../src/cli/run-command.js';
import { processTable } from '../../src/adapters/tool-processes.js';
import { spawner, type Spawner } from '../../src/streams/spawner.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { scratchRepo } from '../support/scratch-repo.js';
import { toolResultCount } from '../support/mock-anthropic.js';
import { bodyHas } from '../support/vendor-e2e.js';

const e2e = e2eSuite('claude-code', { label: 'claude-spawn' });
let workers: Spawner;
let repo: string;
/** What the workers printed on their stdout. */
const printed: Record<string, unknown>[] = [];

/** Processes whose command line names the session (the worker's `--session-id`), still alive. */
const workerProcesses = (session: string): number[] =>
  (processTable() ?? []).filter((p) => p.state !== 'Z' && p.argv.includes(session)).map((p) => p.pid);

if (e2e.installed) {
  test.before(async () => {
    e2e.mock.setScript((body) => {
      if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { content: [{ type: 'text', text: 'ok' }] };
      const gate = /\[\[GATE:([^\]]+)\]\]/.exec(JSON.stringify(body.messages?.[0] ?? ''))?.[1];
      if (gate === undefined || toolResultCount(body) > 0)
        return { content: [{ type: 'text', text: `WORKER-ANSWER after ${toolResultCount(body)} tool result(s).` }] };
      const cmd = `while [ ! -f '${gate}' ]; do sleep 0.1; done; echo TOOL_RAN`;
      return {
        content: [{ type: 'tool_use', name: 'Bash', input: { command: cmd, description: 'wait for the gate' } }],
      };
    });
    const ws = await e2e.workspace();
    // The project is the scratch repository, its hook settings committed: a worktree of it has them.
    repo = scratchRepo(ws.project);
    const env = e2e.runEnv(ws);
    workers = spawner({
      roots: [ws.root],
      // The launcher as the Claude Code table makes it, with the worker's stdout followed here;
      // the worker's Bash call needs no one's permission.
      launch: claudeLauncher({
        bin: env.AEP_CLAUDE_BIN || e2e.binary,
        env,
        args: ['--permission-mode', 'bypassPermissions'],
        onLine: (_session, line) => printed.push(line),
        open: async () => {
          const opened = await openAdapterLanes(e2e.stack.running.adapter.port, e2e.stack.secret);
          const lane = (opened as Record<string, { address?: string } | undefined>)['stream-json'];
          if (lane?.address === undefined) throw new Error(`no stream-json lane: ${JSON.stringify(opened)}`);
          return lane.address;
        },
      }),
    });
    e2e.defer(() => workers.stopAll());
  });

  test("a Claude Code worker spawned in a worktree: its session on the stream, a steer in the same turn's next request, its final answer, its stop leaves nothing running", async () => {
    const gate = join(repo, '..', 'claude-spawn.go');
    const r = await workers.spawn({
      prompt: `w-claude: run the slow command [[GATE:${gate}]]`,
      cwd: repo,
      worktree: 'worker/claude',
      model: 'claude-sonnet-4-5',
      commandId: 'SPAWNCLAUDE1',
    });
    assert.ok(r.ok, JSON.stringify(r));
    if (!r.ok) return;
    const session = r.session;
    assert.ok(r.worktree?.endsWith('worker-claude'), r.worktree);
    const all = (type: string): AepEvent[] => e2e.stack.events.filter((e) => e.session === session && e.type === type);
    await e2e.stack.waitFor('the hooks under the spawned session id', () => all('session.started')[0], 60_000);
    await e2e.stack.waitFor("the worker's slow tool call", () => all('tool.requested')[0]);
    await e2e.stack.waitFor('the lane reaches the worker', () =>
      all('x.claude-code.session.described').find((e) =>
        (e.data?.['lanes'] as string[] | undefined)?.includes('stream-json'),
      ),
    );
    const text = `STEER-SPAWNED-${session.slice(0, 8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.claude-code.control.instruct', { text, delivery: 'steer' });
    await e2e.stack.waitFor('the CLI took it', () =>
      printed.find((l) => l.type === 'command_lifecycle' && l.state === 'queued' && l.command_uuid === uuidFor(cmd.id)),
    );
    writeFileSync(gate, '');
    const d = await e2e.stack.waitFor('delivered', () =>
      e2e.stack.find(session, 'x.claude-code.instruction.delivered', cmd.id),
    );
    assert.is(d.data?.['lane'], 'stream-json');
    const end = await e2e.stack.waitFor('the turn finished', () => all('run.finished')[0]);
    assert.match(String(end.data?.['summary'] ?? ''), /WORKER-ANSWER after 1 tool result/);
    const reqs = e2e.requestsIn(session).filter((q) => (q.body?.tools ?? []).some((t) => t.name === 'Bash'));
    assert.ok(reqs.length >= 2, `a tool round (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.ok(bodyHas(reqs[1]!.body, text), "in the same turn's next request");
    assert.ok(workerProcesses(session).length > 0, 'the worker runs until stopped');
    await workers.stopAll();
    assert.equal(workers.running(), []);
    assert.equal(workerProcesses(session), [], 'no process of the worker is left');
    assert.ok(existsSync(r.worktree!), 'the worktree is kept');
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
