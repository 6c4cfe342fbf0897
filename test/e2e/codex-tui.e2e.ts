// Codex 0.171.0's own terminal UI, driven in tmux, against the loopback mock Responses API; this
// project's relay and adapter run in-process and the real installer writes the hooks. Codex waits
// for a PermissionRequest hook before it shows its own approval dialog ("Running hook"), so the
// operator's answer decides; Esc interrupts the turn and Codex ends the held hook, which the
// adapter reports at once as a dismissed request (D34); a later respond exits "not pending".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { respondVia, startTui, tmuxMissing, type Tui } from '../support/tui.js';
import {
  codexHome,
  startVendorStack,
  stopCodexDaemon,
  vendorBinary,
  workspace,
  writeCodexConfig,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

const binary = vendorBinary('codex');

let mock: MockOpenAi;
let stack: VendorStack;
let ws: Workspace;
let tui: Tui;

const respond = (session: string, request: string, word: string) =>
  respondVia(stack.relayUrl, stack.relayToken, 'e2e-operator')(session, request, word);

/** The environment the person's `codex` runs with (its daemon is found by the same CODEX_HOME). */
const tuiEnv = (): NodeJS.ProcessEnv => ({
  HOME: ws.home,
  CODEX_HOME: codexHome(ws),
  MOCK_API_KEY: 'dummy',
  OPENAI_API_KEY: 'dummy',
  NO_UPDATE_NOTIFIER: '1',
  CODEX_DISABLE_TELEMETRY: '1',
  PATH: process.env.PATH,
});

/** Types a prompt whose shell call asks to leave the sandbox; resolves with the permission request it raised. */
async function ask(tag: string): Promise<AepEvent> {
  const before = stack.events.filter((e) => e.type === 'attention.requested').length;
  await tui.submit(`[[TURN]] [[ESCALATE]] ${tag} run it`);
  return stack
    .waitFor('attention.requested', () => stack.events.filter((e) => e.type === 'attention.requested')[before])
    .catch((err: Error) => {
      throw new Error(`${err.message}\nthe TUI shows:\n${tui.screen()}`);
    });
}

/** The shell outputs the model saw after the prompt carrying `tag` (the session's earlier turns stay in its input). */
function toolOutputs(tag: string): string[] {
  return mock.modelRequests().flatMap((r) => {
    const input = (r.body as { input?: { type?: string; output?: unknown }[] } | undefined)?.input ?? [];
    let from = -1;
    input.forEach((i, n) => {
      if (i.type === 'message' && JSON.stringify(i).includes(tag)) from = n;
    });
    return from < 0
      ? []
      : input
          .slice(from)
          .filter((i) => i.type === 'function_call_output')
          .map((i) => JSON.stringify(i.output));
  });
}

if (binary === undefined || tmuxMissing()) {
  test('codex-tui: the pinned CLI and tmux are installed', () => {
    assert.unreachable(
      'Codex 0.171.0 is not installed in .vendor-clis (scripts/install-vendor-cli.sh codex), or tmux is missing (apt-get install tmux)',
    );
  });
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    stack = await startVendorStack('codex');
    ws = workspace('aep-codex-tui-');
    writeCodexConfig(ws, mock.baseUrl);
    // Codex asks before a command leaves the sandbox (on-request), so PermissionRequest fires.
    const config = join(codexHome(ws), 'config.toml');
    writeFileSync(
      config,
      readFileSync(config, 'utf8')
        .replace('approval_policy = "never"', 'approval_policy = "on-request"')
        .replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "read-only"'),
    );
    installCodex({
      user: true,
      port: stack.running.adapter.port,
      secret: stack.secret,
      neutral: codex.replies.neutral,
      attentionTimeoutMs: codex.attentionTimeoutMs,
      env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary, AEP_STATE_DIR: stack.stateDir },
    });
    tui = startTui('codex', ws.project, tuiEnv(), [binary]);
    await tui.shows('Ask Codex to do anything').catch(async () => {
      // The installer could not reach Codex to trust the hooks: trust them as a person would, once.
      if (!tui.screen().includes('Hooks need review')) throw new Error(`Codex did not start:\n${tui.screen()}`);
      tui.keys('2');
      tui.keys('Enter');
      await tui.shows('Ask Codex to do anything');
    });
  });

  test.after(async () => {
    tui?.kill();
    // The managed app-server daemon the TUI started outlives it (0.171.0): ended here.
    if (ws && binary !== undefined) await stopCodexDaemon(ws, binary, tuiEnv());
    await stack?.close();
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test('a held PermissionRequest answered with respond allow runs the command; the request said what it runs', async () => {
    const requested = await ask('ALLOWTUI');
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, 'TOOL_RAN_');
    await tui.shows('Running hook');
    const a = await respond(requested.session!, requested.id, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    await stack.waitFor('the command ran', () =>
      toolOutputs('ALLOWTUI').some((o) => o.includes('TOOL_RAN_')) ? true : undefined,
    );
  });

  test('Esc while the hook is held interrupts the turn: the request is dismissed at once, a later respond exits not pending', async () => {
    const requested = await ask('ESCTUI');
    await tui.shows('Running hook');
    const pressed = Date.now();
    tui.keys('Escape');
    const resolved = await stack.waitFor('attention.resolved', () =>
      stack.events.find((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    );
    console.log(`  Esc in the Codex TUI → attention.resolved {dismissed} in ${Date.now() - pressed} ms`);
    assert.is((resolved.data as { resolution: string }).resolution, 'dismissed');
    const late = await respond(requested.session!, requested.id, 'allow');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'dismissed at the agent');
    assert.not.ok(
      stack.events.some((e) => e.type === 'attention.answered' && e.subject === requested.id),
      'nothing recorded as answered',
    );
    assert.not.ok(
      toolOutputs('ESCTUI').some((o) => o.includes('TOOL_RAN_')),
      'the command never ran',
    );
  });
}

test.run();
