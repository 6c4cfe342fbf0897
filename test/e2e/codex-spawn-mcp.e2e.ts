// D45 end to end, as an orchestrator sees it: the Codex adapter runs with `--spawn-root`, and the
// official MCP client calls `aep-steer mcp`'s `spawn` (a worktree of a scratch repository), then
// `wait` for the worker's turn and `read` for its answer (the mock model's text). The spawn went
// to the adapter's home session through the relay; its ack named the session, which the relay's
// roster shows spawned by the MCP server's sender. Stopping the adapter ends the worker on the
// stream and leaves no app-server of it running; `stop` ends one worker before that, while the
// adapter runs on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startMcp, type McpClient } from '../mcp/support.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { waitAndRead } from '../support/mcp-spawn.js';
import { spawnInWorktree } from '../support/mcp-worktree.js';
import { alive, spawnedServers } from '../support/spawned-servers.js';
import { scratchRepo } from '../support/scratch-repo.js';

const e2e = e2eSuite('codex', {
  label: 'codex-spawn-mcp',
  env: (home, e2e) => ({ ...home.env, AEP_CODEX_BIN: e2e.binary }),
  flags: (home) => ({ spawnRoot: home.root, maxSpawned: '2' }),
});

/** The app-servers the adapter's spawns started, running now. */
const servers = (): number[] => spawnedServers(e2e.stack.stateDir);

let mcp: McpClient;

if (e2e.installed) {
  test.before(async () => {
    mcp = await startMcp(['--relay', e2e.stack.relayUrl, '--token', e2e.stack.relayToken, '--wait-ms', '240000']);
    e2e.defer(() => mcp.close());
  });

  test('stop through MCP ends one worker while the adapter runs: session.ended names who, no app-server left', async () => {
    const repo = scratchRepo(join(e2e.home.root, 'scratch-stop'));
    const spawned = await mcp.call('spawn', { vendor: 'codex', cwd: repo, prompt: '[[TURN]] w-stopmcp look around' });
    assert.not.ok(spawned.isError, spawned.text);
    const session = spawned.facts['session'] as string;
    await waitAndRead(mcp, e2e.stack, spawned);
    const pids = servers();
    assert.is(pids.length, 1, "the worker's own app-server runs");
    const stopped = await mcp.call('stop', { session, reason: 'done with it' });
    assert.not.ok(stopped.isError, stopped.text);
    assert.match(stopped.text, /Stopped session/);
    // The stop's record: session.ended, or x.codex.session.closed where the agent ended it first.
    const record = await e2e.stack.waitFor("the stop's record", () =>
      e2e.stack.events.find((e) => e.id === stopped.facts['ended']),
    );
    assert.is(record.cause, stopped.facts['command']);
    assert.is(record.data?.['reason'], 'killed');
    assert.is((record.data?.['stopped_by'] as { command?: string } | undefined)?.command, stopped.facts['command']);
    await e2e.stack.waitFor('the worker ended on the stream', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'session.ended'),
    );
    assert.equal(pids.filter(alive), [], 'its app-server is gone');
  });

  test('spawn through MCP: the session id, wait for its turn, read its answer; the adapter stop ends it, nothing left', async () => {
    const { spawned, session, worktree } = await spawnInWorktree(
      mcp,
      e2e.home.root,
      'codex',
      '[[TURN]] w-spawnmcp look around the worktree',
    );
    assert.match(spawned.text, /Next: call wait/);
    const read = await waitAndRead(mcp, e2e.stack, spawned);
    assert.match(read.text, /MOCK_DONE/);

    assert.is(servers().length, 1, "the worker's own app-server runs");
    const pids = servers();
    await e2e.stack.running.close();
    assert.equal(pids.filter(alive), [], 'its app-server is gone');
    await e2e.stack.waitFor('the worker ended on the stream', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'session.ended'),
    );
    assert.ok(existsSync(worktree), 'the worktree is kept');
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
