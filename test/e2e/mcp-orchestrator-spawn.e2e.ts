// D45 from a real orchestrator's seat: `claude -p` (Claude Code 2.1.332) with `aep-steer mcp` in its
// project's .mcp.json (written by `aep-steer install mcp claude-code`) spawns a Claude Code worker in
// a worktree of a scratch repository through the `spawn` tool, then calls `wait` for the worker's
// turn and `read` for its answer. The orchestrator's mock model is scripted to make those three
// calls in order (reading the session from the spawn's result), so what its model gets back is what
// the tools answer. Both CLIs talk to one mock Anthropic API on loopback; the worker's requests are
// told apart by its worktree. The orchestrator's hooks put its own session on the relay, and the
// worker is spawned_by it (the MCP server names it, the relay verifies it) and listed under it by
// `sessions --tree`. Stopping the adapter ends the worker and leaves no process of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installMcp } from '../../src/mcp/install.js';
import { runSessions, SESSIONS_EXIT } from '../../src/cli/sessions-command.js';
import { textSink } from '../support/tui.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { claudeSpawnEnv, claudeWorkerProcesses } from '../support/spawned-servers.js';
import { strings } from '../support/vendor-e2e.js';
import { scratchRepo } from '../support/scratch-repo.js';
import type { MessagesBody, RecordedRequest, Turn } from '../support/mock-anthropic.js';

const ANSWER = 'WORKER-ORCH-ANSWER: the worktree is clean.';
const e2e = e2eSuite('claude-code', {
  label: 'mcp-orchestrator-spawn',
  env: claudeSpawnEnv,
  flags: (home) => ({ spawnRoot: home.root }),
});

/** The tool results in a model request, in order, each as the facts the tool gave (its JSON). */
function results(body: MessagesBody | undefined): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const m of body?.messages ?? []) {
    if (m.role !== 'user' || !Array.isArray(m.content)) continue;
    for (const b of m.content as Record<string, unknown>[]) {
      if (b['type'] !== 'tool_result') continue;
      const c = b['content'];
      // The CLI appends a reminder after the tool's own text.
      const text = (typeof c === 'string' ? c : strings(c).join('')).split(/\n\s*<system-reminder>/)[0]!.trim();
      out.push(JSON.parse(text) as Record<string, unknown>);
    }
  }
  return out;
}

const call = (name: string, input: Record<string, unknown>): Turn => ({
  content: [{ type: 'tool_use', name: `mcp__aep-steer__${name}`, input }],
  stop_reason: 'tool_use',
});

if (e2e.installed) {
  test('an orchestrator claude -p spawns a worker, waits for its turn and reads its answer through aep-steer mcp', async () => {
    const repo = scratchRepo(e2e.home.project);
    // Its hooks put the orchestrator's own session on the relay, so its spawns can name it.
    const lead = await e2e.workspace();
    const tokenFile = join(lead.root, 'orchestrator-token');
    writeFileSync(tokenFile, `${e2e.stack.relayToken}\n`, { mode: 0o600 });
    assert.ok(installMcp('claude-code', { project: lead.project, relay: e2e.stack.relayUrl, tokenFile }).changed);

    const isLead = (r: RecordedRequest) => r.raw.includes(lead.project);
    const leadScript = (body: MessagesBody): Turn => {
      const got = results(body);
      const session = got[0]?.['session'];
      switch (got.length) {
        case 0:
          return call('spawn', {
            vendor: 'claude-code',
            cwd: repo,
            worktree: 'worker/orch',
            prompt: 'w-orch: look around',
          });
        case 1:
          return call('wait', { session, for: ['turn-end'], wait_ms: 180_000 });
        case 2:
          return call('read', { session });
        default:
          return { content: [{ type: 'text', text: 'The worker answered.' }], stop_reason: 'end_turn' };
      }
    };
    e2e.mock.setScript((body, r) =>
      isLead(r) ? leadScript(body) : { content: [{ type: 'text', text: ANSWER }], stop_reason: 'end_turn' },
    );

    const o = await e2e.run(lead, 'Start a worker on the scratch repository and tell me what it finds.', {
      killAfterMs: 300_000,
    });
    assert.is(o.code, 0, o.stderr);
    const last = e2e.requests().filter(isLead).at(-1);
    const [spawned, waited, read] = results(last?.body);
    assert.ok(spawned && waited && read, `three tool results: ${JSON.stringify(results(last?.body))}`);
    const session = spawned!['session'] as string;
    assert.type(session, 'string');
    assert.match(String(spawned!['worktree']), /worker-orch$/);
    assert.match(String(spawned!['message']), /wait/);
    assert.is(waited!['outcome'], 'turn-ended', JSON.stringify(waited));
    assert.match(JSON.stringify(read), ANSWER);
    // On the record: the worker described with its spawner, the spawn the orchestrator's server sent.
    const described = await e2e.stack.waitFor('spawned_by', () =>
      e2e.stack.events.find((e) => e.session === session && e.data?.['spawned_by'] !== undefined),
    );
    const by = described.data?.['spawned_by'] as { command?: string; parent?: string } | undefined;
    assert.is(by?.command, spawned!['command']);
    // The MCP server named its orchestrator's session (CLAUDE_CODE_SESSION_ID), which the relay verified.
    const leadSession = o.lines.find((l) => l['type'] === 'system')?.['session_id'];
    assert.type(leadSession, 'string');
    assert.is(by?.parent, leadSession, 'the worker is spawned_by the orchestrator session');
    const out = textSink();
    const code = await runSessions(
      { relay: e2e.stack.relayUrl, token: e2e.stack.relayToken, sender: 'e2e-roster', tree: true, all: true },
      { out: out.stream },
    );
    assert.is(code, SESSIONS_EXIT.ok, out.text());
    const rows = out.text().split('\n');
    const leadRow = rows.findIndex((r) => r.includes(leadSession as string));
    const workerRow = rows.findIndex((r) => r.includes(`└ ${session}`));
    assert.ok(leadRow >= 0 && workerRow > leadRow, `the worker listed under its orchestrator:\n${out.text()}`);

    assert.ok(claudeWorkerProcesses(session).length > 0, 'the worker runs until stopped');
    await e2e.stack.running.close();
    assert.equal(claudeWorkerProcesses(session), [], 'no process of the worker is left');
    await e2e.stack.waitFor('the worker ended on the stream', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'session.ended'),
    );
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
