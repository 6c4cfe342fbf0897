// D45 end to end for a Qwen Code worker, as an orchestrator sees it: the Qwen Code adapter runs
// with `--spawn-root`, and the official MCP client calls `aep-steer mcp`'s `spawn` in a worktree of
// a scratch repository. The worker is a session on a `qwen serve` daemon of its own, started in the
// worktree (a daemon serves one folder) and followed on the adapter's serve lane; `wait` sees its
// turn end and `read` gives the mock model's answer. Stopping the adapter ends the worker on the
// stream and leaves no process in the worktree; a second worker is ended before that by the `stop`
// tool with none of its processes left; the log passes `aep-steer audit`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { auditFiles } from '../../src/audit/audit.js';
import { startMcp, type McpClient } from '../mcp/support.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { waitAndRead } from '../support/mcp-spawn.js';
import { spawnInWorktree } from '../support/mcp-worktree.js';
import { processesIn } from '../support/qwen-workers.js';

const e2e = e2eSuite('qwen-code', {
  label: 'qwen-spawn-mcp',
  // No one is there to grant the worker's shell call.
  env: (home, e2e) => ({ ...home.env, AEP_QWEN_BIN: e2e.binary, AEP_QWEN_SPAWN_APPROVAL_MODE: 'yolo' }),
  flags: (home) => ({ spawnRoot: home.root, maxSpawned: '2' }),
});

let mcp: McpClient;

if (e2e.installed) {
  test.before(async () => {
    mcp = await startMcp(['--relay', e2e.stack.relayUrl, '--token', e2e.stack.relayToken, '--wait-ms', '240000']);
    e2e.defer(() => mcp.close());
  });

  test('spawn through MCP on a daemon of its own: wait for its turn, read its answer; the adapter stop leaves no process', async () => {
    const { repo, spawned, session, worktree } = await spawnInWorktree(
      mcp,
      e2e.home.root,
      'qwen-code',
      '[[TURN]] w-qwenspawn look around the worktree',
    );
    const read = await waitAndRead(mcp, e2e.stack, spawned);
    assert.match(read.text, /MOCK_DONE/, read.text);
    // The serve lane names the session once its poll of the worker's daemon has seen it, which
    // may come after a short first turn has ended.
    await e2e.stack.waitFor('the adapter follows the worker on its serve lane', () =>
      e2e.stack.events.find(
        (e) => e.session === session && (e.data?.['lanes'] as string[] | undefined)?.includes('serve'),
      ),
    );

    // A second worker, stopped through MCP while the adapter runs: its daemon goes, the first stays.
    const other = await mcp.call('spawn', {
      vendor: 'qwen-code',
      cwd: repo,
      prompt: '[[TURN]] w-qwenstop look around',
    });
    assert.not.ok(other.isError, other.text);
    await waitAndRead(mcp, e2e.stack, other);
    assert.ok(processesIn(repo).length > 0, "the second worker's daemon runs in the repository");
    const stopped = await mcp.call('stop', { session: other.facts['session'] as string });
    assert.not.ok(stopped.isError, stopped.text);
    assert.equal(processesIn(repo), [], 'no process of the stopped worker is left');

    assert.ok(processesIn(worktree).length > 0, "the worker's daemon runs in its worktree");
    await e2e.stack.running.close();
    assert.equal(processesIn(worktree), [], 'no process of the worker is left');
    await e2e.stack.waitFor('the worker ended on the stream', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'session.ended'),
    );
    assert.ok(existsSync(worktree), 'the worktree is kept');
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(audit.violations, [], 'aep-steer audit finds nothing wrong in the log');
  });
}

test.run();
