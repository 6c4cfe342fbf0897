// Away from the desk with Claude Code 2.1.332: the real CLI runs headless against the mock model
// API in default permission mode, so a Bash call raises PermissionRequest; the console pushes it
// to a loopback server standing in for ntfy; a POST to the push's Allow action (what the ntfy app
// sends on a tap) answers through the console, the tool runs, and the model's next request carries
// its output. A second tap is refused and answers nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installClaudeCode } from '../../src/adapters/claude-code/installer.js';
import { adapterConfig, runAdapter, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { parseTarget } from '../../src/notify/targets.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { loadTokensFile } from '../../src/relay/acl.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { bodyHas, pollFor, vendorMissing } from '../support/e2e-helpers.js';
import { claudeBinary, claudeWorkspace, runClaude, type ClaudeWorkspace } from '../support/claude-cli.js';
import { bashThenText, startMockAnthropic, type MockAnthropic } from '../support/mock-anthropic.js';
import { startPushServer, type PushServer } from '../support/push-server.js';

const ADAPTER_TOKEN = 'e2e-notify-adapter-token';
const CONSOLE_TOKEN = 'e2e-notify-console-token';
const WATCHER_TOKEN = 'e2e-notify-watcher-token';
const TOKENS_FILE = {
  tokens: [
    { token: ADAPTER_TOKEN, identity: 'e2e-claude-adapter', emit: ['claude-code'] },
    { token: CONSOLE_TOKEN, identity: 'aep-steer-console', commands: ['control.attention.respond'] },
    { token: WATCHER_TOKEN, identity: 'e2e-watcher' },
  ],
};
const SESSION_HEADER = 'x-claude-code-session-id';

let mock: MockAnthropic;
let relay: RelayHandle;
let running: RunningAdapter;
let watcher: RelayConsumer;
let push: PushServer;
let konsole: ConsoleHandle;
let stateDir = '';
let ws: ClaudeWorkspace | undefined;
const events: AepEvent[] = [];
const waitFor = pollFor(events);

const binary = claudeBinary();
const missing = 'Claude Code 2.1.332 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh claude-code';

if (!vendorMissing(binary, 'claude-code notify', missing)) {
  test.before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'aep-cc-notify-'));
    mock = await startMockAnthropic();
    const tokensFile = join(stateDir, 'tokens.json');
    writeFileSync(tokensFile, JSON.stringify(TOKENS_FILE), { mode: 0o600 });
    relay = await startRelay({ port: 0, storePath: ':memory:', tokens: loadTokensFile(tokensFile) });
    const cfg = adapterConfig(
      'claude-code',
      {
        port: '0',
        relay: relay.socketUrl,
        token: ADAPTER_TOKEN,
        log: join(stateDir, 'adapter.jsonl'),
        attentionTimeoutMs: '40000',
      },
      { AEP_STATE_DIR: stateDir },
    );
    running = await runAdapter(cfg, () => {});
    watcher = await RelayConsumer.connect({ url: relay.socketUrl, token: WATCHER_TOKEN, agent: 'e2e-watcher' });
    await watcher.subscribe({}, { onEvent: (e) => events.push(e) });
    push = await startPushServer();
    konsole = await startConsole({
      relay: relay.socketUrl,
      token: CONSOLE_TOKEN,
      port: 0,
      notify: [parseTarget(`ntfy:${push.url}/phone-topic`)],
    });
    await konsole.follower.ready;
    ws = claudeWorkspace();
    installClaudeCode({
      project: ws.project,
      port: running.adapter.port,
      secret: cfg.secret,
      neutral: {},
      attentionTimeoutMs: 55_000,
      env: { AEP_STATE_DIR: stateDir },
    });
  });

  test.after(async () => {
    await konsole?.close();
    await push?.close();
    await watcher?.close();
    await running?.close();
    await relay?.close();
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  test('a PermissionRequest is pushed once; a tap on Allow runs the tool and the model reads its output', async () => {
    const target = join(ws!.project, 'from-phone.txt');
    const command = `touch ${target} && printf 'ran %s' ok-from-phone`;
    mock.setScript(bashThenText([command]));
    const run = runClaude({
      ws: ws!,
      mockUrl: mock.url,
      prompt: 'Create from-phone.txt with bash.',
      bypassPermissions: false,
      killAfterMs: 120_000,
    });
    const requested = await waitFor(
      'attention.requested',
      () => events.find((e) => e.type === 'attention.requested'),
      60_000,
    );
    const session = requested.session!;
    const n = await push.next((p) => String(p.body['click']).includes(`request=${requested.id}`), 5000);
    assert.ok(
      n.at - Date.parse(requested.time) < 1000,
      `pushed within a second of the request (${n.at - Date.parse(requested.time)} ms)`,
    );
    const body = n.body as {
      title: string;
      message: string;
      click: string;
      actions: { label: string; url: string; method: string }[];
    };
    assert.match(body.message, 'requests permission: Bash');
    assert.not.match(JSON.stringify(n.body), 'ok-from-phone', 'the metadata ceiling kept the command out of the push');
    assert.match(body.click, `#session=${session}&request=${requested.id}`);
    const allow = body.actions.find((a) => a.label === 'Allow')!;
    assert.is(allow.method, 'POST');

    const tapped = await fetch(allow.url, { method: 'POST' });
    assert.is(tapped.status, 200, await tapped.clone().text());
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    assert.ok(existsSync(target), 'the command ran');
    const reqs = mock.messages().filter((q) => q.headers[SESSION_HEADER] === session);
    assert.ok(
      reqs.some((q) => bodyHas(q, 'ran ok-from-phone')),
      "the model's request carries the tool's output",
    );
    const answered = await waitFor('attention.answered', () =>
      events.find((e) => e.type === 'attention.answered' && e.subject === requested.id),
    );
    assert.is(answered.data?.['via'], 'control');
    const respond = events.filter((e) => e.type === 'control.attention.respond' && e.subject === requested.id);
    assert.is(respond.length, 1);
    assert.is(respond[0]!.agent, 'aep-steer-console');

    const again = await fetch(allow.url, { method: 'POST' });
    assert.is(again.status, 409);
    assert.match(await again.text(), 'already answered from a link');
    await new Promise((res) => setTimeout(res, 200));
    assert.is(
      events.filter((e) => e.type === 'control.attention.respond' && e.subject === requested.id).length,
      1,
      'nothing more was sent',
    );
    assert.is(
      push.received.filter((p) => String(p.body['click']).includes(requested.id)).length,
      1,
      'one push for the request',
    );
  });
}

test.run();
