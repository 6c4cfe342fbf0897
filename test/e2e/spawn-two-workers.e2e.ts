// D45 as the issue shows it, with the official MCP client against the mock models: one relay, a
// Claude Code adapter and a Codex adapter each run with `--spawn-root`, and `aep-steer mcp`'s tools
// spawn a Claude Code worker and a Codex worker in two worktrees of one scratch repository, wait for
// both turns and read both final answers (the mocks' texts). The Codex worker is steered mid-turn
// through `instruct` (the steer is in the same turn's next model request); then it is given a second
// turn, which `cancel` stops. Stopping both adapters (what `down` does) ends both workers on the
// stream, and no process of either is left.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterConfig, runAdapter, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { startMcp, type McpClient } from '../mcp/support.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { VENDORS } from '../support/e2e-vendors.js';
import type { MockOpenAi } from '../support/mock-openai.js';
import { scratchRepo } from '../support/scratch-repo.js';
import { alive, spawnedServers, claudeSpawnEnv, claudeWorkerProcesses } from '../support/spawned-servers.js';
import { bodyHas, vendorBinary, workspace } from '../support/vendor-e2e.js';

const CLAUDE_ANSWER = 'CLAUDE-WORKER-ANSWER from its worktree.';
const e2e = e2eSuite('claude-code', {
  label: 'spawn-two-workers',
  env: claudeSpawnEnv,
  flags: (home) => ({ spawnRoot: home.root, maxSpawned: '2' }),
});
const codexBin = vendorBinary('codex');

let mcp: McpClient;
let codexMock: MockOpenAi;
let codex: RunningAdapter;
let codexState: string;

/** The Codex model requests of the turn whose prompt carries `tag`, those that offer tools. */
const codexTurn = (tag: string) =>
  VENDORS.codex.api
    .requests(codexMock)
    .filter((r) => VENDORS.codex.api.turnOf(r.body).includes(tag))
    .filter((r) => Array.isArray((r.body as { tools?: unknown[] } | undefined)?.tools));

if (e2e.installed && codexBin === undefined)
  test('Codex 0.171.0 is installed in .vendor-clis', () => assert.unreachable());

if (e2e.installed && codexBin !== undefined) {
  test.before(async () => {
    e2e.mock.setScript(() => ({ content: [{ type: 'text', text: CLAUDE_ANSWER }] }));
    // The Codex adapter joins the suite's relay, as a second `aep-steer up` on the machine would.
    codexMock = await VENDORS.codex.api.start();
    const ws = workspace('aep-codex-two-');
    const env = await VENDORS.codex.setUp(ws, codexMock, codexBin);
    codexState = mkdtempSync(join(tmpdir(), 'aep-codex-two-state-'));
    const cfg = adapterConfig(
      'codex',
      {
        instruct: true,
        port: '0',
        relay: e2e.stack.relayUrl,
        token: e2e.stack.relayToken,
        log: join(codexState, 'adapter.jsonl'),
        spawnRoot: e2e.home.root,
      },
      { ...env, AEP_CODEX_BIN: codexBin, AEP_STATE_DIR: codexState },
    );
    codex = await runAdapter(
      cfg,
      () => undefined,
      () => undefined,
    );
    // Codex's hooks (user-level, in its CODEX_HOME) post to this adapter, as its installer writes them.
    VENDORS.codex.install(
      { ...ws, env },
      { port: codex.adapter.port, secret: cfg.secret, stateDir: codexState },
      codexBin,
    );
    e2e.deferAfterAdapter(async () => {
      await codex.close();
      await codexMock.close();
      rmSync(ws.root, { recursive: true, force: true });
      rmSync(codexState, { recursive: true, force: true });
    });
    mcp = await startMcp(['--relay', e2e.stack.relayUrl, '--token', e2e.stack.relayToken, '--wait-ms', '240000']);
    e2e.defer(() => mcp.close());
  });

  test('two workers on two vendors: spawn, wait, read both answers, steer Codex mid-turn, cancel its next turn; the stop leaves nothing', async () => {
    // The project is the scratch repository, its hook settings committed: a worktree of it has them.
    const repo = scratchRepo(e2e.home.project);
    const gate = join(e2e.home.root, 'codex-one.go');
    const spawn = (vendor: string, worktree: string, prompt: string) =>
      mcp.call('spawn', { vendor, cwd: repo, worktree, prompt });
    const [claudeSpawned, codexSpawned] = await Promise.all([
      spawn('claude-code', 'worker/claude', 'w-two-claude: say hello'),
      spawn('codex', 'worker/codex', `[[TURN]] [[WAITFILE:${gate}]] w-two-codex run the slow command`),
    ]);
    assert.not.ok(claudeSpawned.isError, claudeSpawned.text);
    assert.not.ok(codexSpawned.isError, codexSpawned.text);
    const claudeSession = claudeSpawned.facts['session'] as string;
    const codexSession = codexSpawned.facts['session'] as string;
    for (const s of [claudeSpawned, codexSpawned]) assert.ok(existsSync(String(s.facts['worktree'])), s.text);
    assert.is.not(claudeSpawned.facts['worktree'], codexSpawned.facts['worktree']);

    // Claude Code: its turn ends, its answer is the mock's text.
    const claudeWaited = await mcp.call('wait', { session: claudeSession, for: ['turn-end'] });
    assert.is(claudeWaited.facts['outcome'], 'turn-ended', claudeWaited.text);
    assert.match((await mcp.call('read', { session: claudeSession })).text, CLAUDE_ANSWER);

    // Codex: steered while its slow shell call waits; the steer is in the same turn's next request.
    await e2e.stack.waitFor("the Codex worker's slow tool call", () =>
      e2e.stack.events.find((e) => e.session === codexSession && e.type === 'tool.requested'),
    );
    const text = `STEER-TWO-${codexSession.slice(-8)}`;
    const steered = mcp.call('instruct', { session: codexSession, text, delivery: 'steer' });
    await e2e.stack.waitFor('the steer accepted', () =>
      e2e.stack.events.find(
        (e) => e.session === codexSession && e.type === 'control.accepted' && e.cause !== undefined,
      ),
    );
    writeFileSync(gate, '');
    const delivered = await steered;
    assert.not.ok(delivered.isError, delivered.text);
    assert.is(delivered.facts['outcome'], 'delivered', delivered.text);
    const codexWaited = await mcp.call('wait', { session: codexSession, for: ['turn-end'] });
    assert.is(codexWaited.facts['outcome'], 'turn-ended', codexWaited.text);
    assert.match((await mcp.call('read', { session: codexSession })).text, /MOCK_DONE/);
    const reqs = codexTurn('w-two-codex');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.ok(bodyHas(reqs[1]!.body, text), "in the same turn's next request");

    // Stop one: a second Codex turn, started through instruct, stopped by cancel.
    const gate2 = join(e2e.home.root, 'codex-two.go');
    const from = e2e.stack.events.length;
    const started = mcp.call('instruct', {
      session: codexSession,
      text: `[[TURN]] [[WAITFILE:${gate2}]] w-two-again run the slow command`,
      idle: 'start',
    });
    await e2e.stack.waitFor('the second turn at its slow call', () =>
      e2e.stack.events.slice(from).find((e) => e.session === codexSession && e.type === 'tool.requested'),
    );
    assert.not.ok((await started).isError);
    const cancelled = await mcp.call('cancel', { session: codexSession, kill_tools: true });
    assert.not.ok(cancelled.isError, cancelled.text);
    assert.is(cancelled.facts['outcome'], 'cancelled', cancelled.text);
    await e2e.stack.waitFor('run.cancelled', () =>
      e2e.stack.events.slice(from).find((e) => e.session === codexSession && e.type === 'run.cancelled'),
    );
    writeFileSync(gate2, '');

    // The adapters stop (what `down` does): both workers end on the stream, nothing of them runs.
    assert.ok(claudeWorkerProcesses(claudeSession).length > 0, 'the Claude Code worker runs until stopped');
    const servers = spawnedServers(codexState);
    assert.is(servers.length, 1, "the Codex worker's own app-server runs");
    await Promise.all([e2e.stack.running.close(), codex.close()]);
    assert.equal(claudeWorkerProcesses(claudeSession), [], 'no process of the Claude Code worker is left');
    assert.equal(servers.filter(alive), [], "the Codex worker's app-server is gone");
    for (const session of [claudeSession, codexSession])
      await e2e.stack.waitFor(`${session} ended on the stream`, () =>
        e2e.stack.events.find((e) => e.session === session && e.type === 'session.ended'),
      );
  });
}

test.run();
