// D45 end to end on Claude Code, as an orchestrator sees it: the Claude Code adapter runs with
// `--spawn-root`, and the official MCP client calls `aep-steer mcp`'s `spawn` (a worktree of a
// scratch repository whose hook settings are committed), then `wait` for the worker's turn and
// `read` for its final answer (the mock model's text, from the Stop hook). Stopping the adapter
// ends the worker on the stream and leaves no process of it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { startMcp, type McpClient } from '../mcp/support.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { claudeSpawnEnv, claudeWorkerProcesses } from '../support/spawned-servers.js';
import { scratchRepo } from '../support/scratch-repo.js';

const e2e = e2eSuite('claude-code', {
  label: 'claude-spawn-mcp',
  // The worker runs with the suite home's settings, as a user's adapter would start it.
  env: claudeSpawnEnv,
  flags: (home) => ({ spawnRoot: home.root }),
});

let mcp: McpClient;

if (e2e.installed) {
  test.before(async () => {
    e2e.mock.setScript(() => ({ content: [{ type: 'text', text: 'WORKER-ANSWER from the worktree.' }] }));
    mcp = await startMcp(['--relay', e2e.stack.relayUrl, '--token', e2e.stack.relayToken, '--wait-ms', '240000']);
    e2e.defer(() => mcp.close());
  });

  test('spawn a Claude Code worker through MCP: wait for its turn, read its answer; the adapter stop ends it, nothing left', async () => {
    // The project is the scratch repository, its hook settings committed: a worktree of it has them.
    const repo = scratchRepo(e2e.home.project);
    const spawned = await mcp.call('spawn', {
      vendor: 'claude-code',
      cwd: repo,
      worktree: 'worker/mcp',
      prompt: 'w-claude-mcp: say hello',
    });
    assert.not.ok(spawned.isError, spawned.text);
    const session = spawned.facts['session'] as string;
    assert.ok(String(spawned.facts['worktree']).endsWith('worker-mcp'), String(spawned.facts['worktree']));
    const waited = await mcp.call('wait', { session, for: ['turn-end'] });
    assert.is(waited.facts['outcome'], 'turn-ended', waited.text);
    const read = await mcp.call('read', { session });
    assert.match(read.text, /WORKER-ANSWER from the worktree/);
    assert.ok(claudeWorkerProcesses(session).length > 0, 'the worker runs until stopped');
    await e2e.stack.running.close();
    assert.equal(claudeWorkerProcesses(session), [], 'no process of the worker is left');
    await e2e.stack.waitFor('the worker ended on the stream', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'session.ended'),
    );
    assert.ok(existsSync(String(spawned.facts['worktree'])), 'the worktree is kept');
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
