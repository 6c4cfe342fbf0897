// D45 on the real GitHub Copilot CLI 1.0.102 against the loopback mock Chat Completions API (BYOK,
// no GitHub login), as an orchestrator sees it: the Copilot adapter runs with `--spawn-root`, and
// the official MCP client calls `aep-steer mcp`'s `spawn` in the suite's project (its hooks
// installed, the folder trusted), then `wait` for the worker's turn and `read` for its answer (the mock's text). The worker is a session hosted on a headless server of its own
// (`session.create`), joined to the adapter's server lane; the spawn's answer names that session.
// Stopping the adapter ends the worker's server: none is left running.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { startMcp, type McpClient } from '../mcp/support.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { waitAndRead } from '../support/mcp-spawn.js';
import { until } from '../support/until.js';

const e2e = e2eSuite('copilot', {
  label: 'copilot-spawn-mcp',
  env: (home, e2e) => ({ ...home.env, AEP_COPILOT_BIN: e2e.binary }),
  flags: (home) => ({ spawnRoot: home.root, maxSpawned: '2' }),
});

/** Headless Copilot servers running in a folder (the worker's server runs in its project). */
function serversIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
        return argv.includes('--headless') && readlinkSync(`/proc/${pid}/cwd`) === dir ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
}

let mcp: McpClient;

if (e2e.installed) {
  test.before(async () => {
    // The worker's session comes onto the stream through the project's hooks: the folder is trusted.
    mkdirSync(join(e2e.home.home, '.copilot'), { recursive: true });
    writeFileSync(
      join(e2e.home.home, '.copilot', 'config.json'),
      JSON.stringify({ trustedFolders: [e2e.home.project] }),
    );
    mcp = await startMcp(['--relay', e2e.stack.relayUrl, '--token', e2e.stack.relayToken, '--wait-ms', '240000']);
    e2e.defer(() => mcp.close());
  });

  test('spawn through MCP: the session id, wait for its turn, read it; the adapter stop ends its server', async () => {
    const spawned = await mcp.call('spawn', {
      vendor: 'copilot',
      cwd: e2e.home.project,
      prompt: '[[TURN]] [[TOOLS:0]] w-copilot-spawn say hello',
    });
    assert.not.ok(spawned.isError, spawned.text);
    const session = spawned.facts['session'] as string;
    assert.type(session, 'string');
    assert.match(spawned.text, /Next: call wait/);
    const read = await waitAndRead(mcp, e2e.stack, spawned);
    // The hosted session's agentStop hook names its transcript, where the adapter reads the answer.
    assert.match(read.text, `Turn 1 of 1 in session ${session} finished`, read.text);
    assert.match(read.text, /final answer:\nMOCK_DONE \d+/, read.text);
    assert.ok(
      e2e.mock.modelRequests().some((r) => r.text.includes('w-copilot-spawn')),
      'the first prompt reached the model',
    );

    // The audit of the adapter's log while the worker runs is clean. (Stopping the adapter ends the
    // worker on the stream from the spawning side, which its own session machine does not follow.)
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(audit.violations, [], renderText(audit));

    // The `copilot` loader and the native binary it starts, both with the server's arguments.
    assert.ok(serversIn(e2e.home.project).length > 0, "the worker's own headless server runs");
    await e2e.stack.running.close();
    await until(() => serversIn(e2e.home.project).length === 0, "the worker's server gone", 30_000);
    await e2e.stack.waitFor('the worker ended on the stream', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'session.ended'),
    );
  });
}

test.run();
