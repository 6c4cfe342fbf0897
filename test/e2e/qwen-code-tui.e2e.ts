// Qwen Code 0.24.4's own terminal UI, driven in tmux, against the loopback mock Chat Completions
// API; this project's relay and adapter run in-process and the real installer writes its HTTP
// hooks. Qwen Code waits for a PermissionRequest hook before it asks its user, so the operator's
// answer decides; Esc cancels the request and Qwen Code closes the held hook's connection, which
// the adapter reports at once as a dismissed request (D34); a later respond exits "not pending".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installQwenCode } from '../../src/adapters/qwen-code/installer.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { respondVia, startTui, tmuxMissing, type Tui } from '../support/tui.js';
import {
  startVendorStack,
  vendorBinary,
  workspace,
  writeQwenSettings,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

const binary = vendorBinary('qwen-code');

let mock: MockOpenAi;
let stack: VendorStack;
let ws: Workspace;
let tui: Tui;

const respond = (session: string, request: string | undefined, word: string) =>
  respondVia(stack.relayUrl, stack.relayToken, 'e2e-operator')(session, request, word);

/**
 * A prompt whose shell call waits for `gate` (a loop Qwen Code asks permission for); resolves with the request it
 * raised.
 */
async function ask(tag: string, gate: string): Promise<AepEvent> {
  const before = stack.events.filter((e) => e.type === 'attention.requested').length;
  await tui.submit(`[[TURN]] [[WAITFILE:${gate}]] ${tag} run it`);
  return stack
    .waitFor('attention.requested', () => stack.events.filter((e) => e.type === 'attention.requested')[before])
    .catch((err: Error) => {
      throw new Error(`${err.message}\nthe TUI shows:\n${tui.screen()}`);
    });
}

type ChatMessage = { role?: string; content?: unknown };
/** The tool results the model saw after the prompt carrying `tag`. */
function toolResults(tag: string): string[] {
  return mock.modelRequests().flatMap((r) => {
    const messages = (r.body as { messages?: ChatMessage[] } | undefined)?.messages ?? [];
    let from = -1;
    messages.forEach((m, n) => {
      if (m.role === 'user' && JSON.stringify(m.content).includes(tag)) from = n;
    });
    return from < 0
      ? []
      : messages
          .slice(from)
          .filter((m) => m.role === 'tool')
          .map((m) => JSON.stringify(m.content));
  });
}

if (binary === undefined || tmuxMissing()) {
  test('qwen-code-tui: the pinned CLI and tmux are installed', () => {
    assert.unreachable(
      'Qwen Code 0.24.4 is not installed in .vendor-clis (scripts/install-vendor-cli.sh qwen-code), or tmux is missing (apt-get install tmux)',
    );
  });
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    stack = await startVendorStack('qwen-code');
    ws = workspace('aep-qwen-tui-');
    writeQwenSettings(ws);
    installQwenCode({
      user: true,
      port: stack.running.adapter.port,
      secret: stack.secret,
      neutral: qwenCode.replies.neutral,
      attentionTimeoutMs: qwenCode.attentionTimeoutMs,
      env: { HOME: ws.home },
    });
    tui = startTui(
      'qwen',
      ws.project,
      {
        PATH: process.env.PATH,
        HOME: ws.home,
        OPENAI_API_KEY: 'dummy',
        OPENAI_BASE_URL: mock.baseUrl,
        OPENAI_MODEL: 'mock-model',
        NO_UPDATE_NOTIFIER: '1',
        DO_NOT_TRACK: '1',
        QWEN_CODE_DISABLE_TELEMETRY: '1',
      },
      [binary],
    );
    await tui.shows('Type your message');
    // 0.24.4 starts in its classifier's auto mode; a person switches to asking.
    await tui.submit('/approval-mode default');
    await tui.shows('Approval mode set to "Ask permissions"');
  });

  test.after(async () => {
    tui?.kill();
    await stack?.close();
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test('a held PermissionRequest answered with respond allow (no --request) runs the command; the request said what it runs', async () => {
    const gate = join(ws.root, 'allow.go');
    const requested = await ask('ALLOWQTUI', gate);
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, 'TOOL_RAN_');
    const a = await respond(requested.session!, undefined, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    writeFileSync(gate, '');
    await stack.waitFor('the command ran', () =>
      toolResults('ALLOWQTUI').some((t) => t.includes('TOOL_RAN_')) ? true : undefined,
    );
  });

  test('Esc while the hook is held cancels the request: dismissed at once, a later respond exits not pending', async () => {
    const requested = await ask('ESCQTUI', join(ws.root, 'esc.go'));
    const pressed = Date.now();
    tui.keys('Escape');
    const resolved = await stack.waitFor('attention.resolved', () =>
      stack.events.find((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    );
    console.log(`  Esc in the Qwen Code TUI → attention.resolved {dismissed} in ${Date.now() - pressed} ms`);
    assert.is((resolved.data as { resolution: string }).resolution, 'dismissed');
    const late = await respond(requested.session!, requested.id, 'allow');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'dismissed at the agent');
    assert.not.ok(
      stack.events.some((e) => e.type === 'attention.answered' && e.subject === requested.id),
      'nothing recorded as answered',
    );
    assert.not.ok(
      toolResults('ESCQTUI').some((t) => t.includes('TOOL_RAN_')),
      'the command never ran',
    );
  });
}

test.run();
