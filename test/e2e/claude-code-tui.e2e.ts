// Claude Code 2.1.332's own terminal UI, driven in tmux with `send-keys` like a person at the
// keyboard, against the loopback mock Anthropic API; this project's relay and adapter run
// in-process and the real installer writes the hooks. A held PermissionRequest answered in
// Claude's own dialog ends the request on the stream at once (D34): Yes as `attention.answered
// {via:"oob"}` (2.1.332 keeps the held hook running and reports the call with PostToolUse), Esc as
// dismissed (Claude ends the hook); a later `aep-steer respond` exits "not pending" and nothing
// is recorded as answered. The request says what the tool will do (D35) to the operator, and only
// the tool name to a watch-only watcher.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installClaudeCode } from '../../src/adapters/claude-code/installer.js';
import { adapterConfig, runAdapter, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { loadTokensFile } from '../../src/relay/acl.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { claudeBinary, claudeEnv, claudeWorkspace, type ClaudeWorkspace } from '../support/claude-cli.js';
import { pollFor, vendorMissing } from '../support/e2e-helpers.js';
import { respondVia, startTui, tmuxMissing, type Tui } from '../support/tui.js';
import { startMockAnthropic, type MessagesBody, type MockAnthropic, type Turn } from '../support/mock-anthropic.js';

const ADAPTER_TOKEN = 'tui-adapter-token';
const TOKEN = 'tui-operator-token';
const WATCHER_TOKEN = 'tui-watcher-token';
const TOKENS_FILE = {
  tokens: [
    { token: ADAPTER_TOKEN, identity: 'tui-claude-adapter', emit: ['claude-code'] },
    { token: TOKEN, identity: 'tui-operator', commands: ['control.attention.respond'] },
    { token: WATCHER_TOKEN, identity: 'tui-watcher' },
  ],
};
let mock: MockAnthropic;
let relay: RelayHandle;
let running: RunningAdapter;
let watcher: RelayConsumer;
let operator: RelayConsumer;
let stateDir = '';
let tui: Tui;
let ws: ClaudeWorkspace;
const events: AepEvent[] = [];
const watched: AepEvent[] = [];
const waitFor = pollFor(events, 40_000);

/** Each user prompt asks for one Bash call that creates the file the prompt names; a tool result gets a final text. */
function oneCallPerPrompt(body: MessagesBody): Turn {
  const last = (body.messages ?? []).at(-1);
  const blocks = Array.isArray(last?.content) ? (last!.content as { type?: string; text?: string }[]) : [];
  const text =
    typeof last?.content === 'string'
      ? last.content
      : blocks
          .filter((b) => b.type === 'text')
          .map((b) => b.text ?? '')
          .join(' ');
  const file = /create (\S+\.txt)/.exec(text)?.[1];
  if (
    !(body.tools ?? []).some((t) => t.name === 'Bash') ||
    file === undefined ||
    blocks.at(-1)?.type === 'tool_result'
  ) {
    return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
  }
  return {
    content: [
      {
        type: 'tool_use',
        name: 'Bash',
        input: { command: `touch ${join(ws.project, file)}`, description: `create ${file}` },
      },
    ],
    stop_reason: 'tool_use',
  };
}

const respond = (session: string, request: string, word: string) =>
  respondVia(relay.socketUrl, TOKEN, 'tui-operator')(session, request, word);

/** Types a prompt into the TUI; resolves with the permission request it raised once Claude shows its own dialog. */
async function ask(file: string): Promise<AepEvent> {
  const before = events.filter((e) => e.type === 'attention.requested').length;
  await tui.submit(`create ${file} with bash`);
  const requested = await waitFor(
    'attention.requested',
    () => events.filter((e) => e.type === 'attention.requested')[before],
  );
  await tui.shows('Do you want to proceed?');
  // The dialog ignores keys for a moment after it opens (a guard against a stray keypress), as a
  // person's reading time covers: keys sent at once are dropped.
  await new Promise((r) => setTimeout(r, 1500));
  return requested;
}

const binary = claudeBinary();
const missing =
  'Claude Code 2.1.332 is not installed in .vendor-clis (run scripts/install-vendor-cli.sh claude-code), or tmux is missing (apt-get install tmux)';

if (!vendorMissing(tmuxMissing() ? undefined : binary, 'claude-code-tui', missing)) {
  test.before(async () => {
    stateDir = mkdtempSync(join(tmpdir(), 'aep-tui-state-'));
    mock = await startMockAnthropic({ script: oneCallPerPrompt });
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
        attentionTimeoutMs: '50000',
      },
      { AEP_STATE_DIR: stateDir },
    );
    running = await runAdapter(cfg, () => undefined);
    operator = await RelayConsumer.connect({ url: relay.socketUrl, token: TOKEN, agent: 'tui-operator' });
    await operator.subscribe({}, { onEvent: (e) => events.push(e) });
    watcher = await RelayConsumer.connect({ url: relay.socketUrl, token: WATCHER_TOKEN, agent: 'tui-watcher' });
    await watcher.subscribe({}, { onEvent: (e) => watched.push(e) });

    ws = claudeWorkspace('aep-tui-');
    installClaudeCode({
      project: ws.project,
      port: running.adapter.port,
      secret: cfg.secret,
      neutral: {},
      attentionTimeoutMs: 50_000,
      env: { AEP_STATE_DIR: stateDir },
    });
    // A first run's onboarding, folder trust and API key questions, answered as a person once would.
    writeFileSync(
      join(ws.home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        theme: 'dark',
        customApiKeyResponses: { approved: ['sk-ant-test'.slice(-20)], rejected: [] },
        projects: { [ws.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
      }),
    );
    // Default permission mode: a file-writing Bash call asks in Claude's dialog and fires PermissionRequest.
    tui = startTui('claude', ws.project, claudeEnv(ws, mock.url), [binary!, '--model', 'claude-sonnet-4-5']);
    await waitFor('session.started', () => events.find((e) => e.type === 'session.started'));
    await tui.shows('? for shortcuts');
  });

  test.after(async () => {
    tui?.kill();
    await watcher?.close();
    await operator?.close();
    await running?.close();
    await relay?.close();
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  test('a permission answered Yes in the TUI ends the request via oob; a later respond exits not-pending', async () => {
    const requested = await ask('yes.txt');
    const session = requested.session!;
    // D35: the operator reads the command; the watch-only watcher, at metadata, the tool name only.
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, `Bash: touch ${join(ws.project, 'yes.txt')}`);
    const low = await waitFor('the watcher copy', () => watched.find((e) => e.id === requested.id));
    assert.is((low.data as { prompt: string }).prompt, 'claude-code requests permission: Bash');
    assert.not.ok(JSON.stringify(low).includes('yes.txt'), 'no command below redacted');

    const pressed = Date.now();
    tui.keys('Enter'); // "1. Yes" is the selected choice
    const answered = await waitFor('attention.answered via oob', () =>
      events.find((e) => e.type === 'attention.answered' && e.subject === requested.id),
    );
    const tookMs = Date.now() - pressed;
    console.log(`  Yes in the TUI → attention.answered {via:"oob"} in ${tookMs} ms`);
    assert.equal(answered.data, { answer: { option: 'allow' }, via: 'oob' });
    const resolved = await waitFor('attention.resolved', () =>
      events.find((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    );
    assert.equal([resolved.cause, (resolved.data as { resolution: string }).resolution], [answered.id, 'answered']);
    assert.ok(existsSync(join(ws.project, 'yes.txt')), 'the command ran');
    assert.ok(tookMs < 10_000, `ended long before the 50 s hold timeout (${tookMs} ms)`);

    const late = await respond(session, requested.id, 'deny');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'already answered at the agent');
    await waitFor('the rejection', () =>
      events.find((e) => e.type === 'control.rejected' && e['code'] === 'not-pending'),
    );
    assert.equal(
      events.filter((e) => e.type === 'attention.answered' && e.subject === requested.id).length,
      1,
      'the late deny is not recorded',
    );
    await tui.shows('Done.');
  });

  test('Esc in the TUI dismisses the request at once; a later respond allow exits not-pending and the command never runs', async () => {
    const requested = await ask('esc.txt');
    const pressed = Date.now();
    tui.keys('Escape');
    const resolved = await waitFor('attention.resolved', () =>
      events.find((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    );
    const tookMs = Date.now() - pressed;
    console.log(`  Esc in the TUI → attention.resolved {dismissed} in ${tookMs} ms`);
    assert.is((resolved.data as { resolution: string }).resolution, 'dismissed');
    assert.ok(tookMs < 10_000, `ended long before the 50 s hold timeout (${tookMs} ms)`);
    const late = await respond(requested.session!, requested.id, 'allow');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'dismissed at the agent');
    assert.not.ok(
      events.some((e) => e.type === 'attention.answered' && e.subject === requested.id),
      'nothing recorded as answered',
    );
    assert.not.ok(existsSync(join(ws.project, 'esc.txt')), 'the command never ran');
  });

  test("the adapter's log of both runs passes aep-steer audit", async () => {
    const r = await auditFiles([join(stateDir, 'adapter.jsonl')]);
    assert.equal(r.violations, [], JSON.stringify(r.violations));
  });
}

test.run();
