// Codex 0.171.0's own terminal UI, driven in tmux, against the loopback mock Responses API; this
// project's relay and adapter run in-process and the real installer writes the hooks. Codex waits
// for a PermissionRequest hook before it shows its own approval dialog ("Running hook"), so the
// operator's answer decides; Esc interrupts the turn and Codex ends the held hook, which the
// adapter reports at once as a dismissed request (D34); a later respond exits "not pending".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { codex } from '../../src/adapters/codex.js';
import { installCodex } from '../../src/adapters/installers/codex.js';
import { RESPOND_EXIT, runRespond } from '../../src/cli/respond-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { codexHome, startVendorStack, vendorBinary, workspace, writeCodexConfig, type VendorStack, type Workspace } from '../support/vendor-e2e.js';

const TMUX = ['-L', `aep-codex-tui-${process.pid}`];
const binary = vendorBinary('codex');
const noTmux = spawnSync('tmux', ['-V']).status !== 0;

let mock: MockOpenAi;
let stack: VendorStack;
let ws: Workspace;

const tmux = (...args: string[]) => spawnSync('tmux', [...TMUX, ...args], { encoding: 'utf8' });
const screen = (): string => tmux('capture-pane', '-p', '-t', 'codex').stdout;
const keys = (...k: string[]) => assert.is(tmux('send-keys', '-t', 'codex', ...k).status, 0);

async function screenShows(text: string, limitMs = 60_000): Promise<void> {
  const until = Date.now() + limitMs;
  while (!screen().includes(text)) {
    if (Date.now() > until) throw new Error(`the TUI never showed "${text}"; it shows:\n${screen()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function sink(): { stream: NodeJS.WriteStream; text: () => string } {
  let text = '';
  const stream = new Writable({ write(c: Buffer, _e, cb) { text += c.toString(); cb(); } }) as Writable & { isTTY?: boolean };
  stream.isTTY = false;
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

async function respond(session: string, request: string, word: string): Promise<{ code: number; out: string }> {
  const out = sink();
  const code = await runRespond(word, { relay: stack.relayUrl, token: stack.relayToken, sender: 'e2e-operator', session, request, timeout: '20000' }, { out: out.stream, err: sink().stream });
  return { code, out: out.text() };
}

/** Types a prompt whose shell call asks to leave the sandbox; resolves with the permission request it raised. */
async function ask(tag: string): Promise<AepEvent> {
  const before = stack.events.filter((e) => e.type === 'attention.requested').length;
  keys('-l', `[[TURN]] [[ESCALATE]] ${tag} run it`);
  // Keys that arrive together read as a paste, whose Enter is a newline: submit after a pause.
  await new Promise((r) => setTimeout(r, 500));
  keys('Enter');
  return stack.waitFor('attention.requested', () => stack.events.filter((e) => e.type === 'attention.requested')[before]).catch((err: Error) => {
    throw new Error(`${err.message}\nthe TUI shows:\n${screen()}`);
  });
}

/** The shell outputs the model saw after the prompt carrying `tag` (the session's earlier turns stay in its input). */
function toolOutputs(tag: string): string[] {
  return mock.modelRequests().flatMap((r) => {
    const input = (r.body as { input?: { type?: string; output?: unknown }[] } | undefined)?.input ?? [];
    let from = -1;
    input.forEach((i, n) => { if (i.type === 'message' && JSON.stringify(i).includes(tag)) from = n; });
    return from < 0 ? [] : input.slice(from).filter((i) => i.type === 'function_call_output').map((i) => JSON.stringify(i.output));
  });
}

if (binary === undefined || noTmux) {
  test('codex-tui: the pinned CLI and tmux are installed', () => {
    assert.unreachable('Codex 0.171.0 is not installed in .vendor-clis (scripts/install-vendor-cli.sh codex), or tmux is missing (apt-get install tmux)');
  });
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    stack = await startVendorStack('codex');
    ws = workspace('aep-codex-tui-');
    writeCodexConfig(ws, mock.baseUrl);
    // Codex asks before a command leaves the sandbox (on-request), so PermissionRequest fires.
    const config = join(codexHome(ws), 'config.toml');
    writeFileSync(config, readFileSync(config, 'utf8').replace('approval_policy = "never"', 'approval_policy = "on-request"').replace('sandbox_mode = "danger-full-access"', 'sandbox_mode = "read-only"'));
    installCodex({
      user: true, port: stack.running.adapter.port, secret: stack.secret, neutral: codex.replies.neutral, attentionTimeoutMs: codex.attentionTimeoutMs,
      env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary, AEP_STATE_DIR: stack.stateDir },
    });
    const env = [`HOME=${ws.home}`, `CODEX_HOME=${codexHome(ws)}`, 'MOCK_API_KEY=dummy', 'OPENAI_API_KEY=dummy', 'NO_UPDATE_NOTIFIER=1', 'CODEX_DISABLE_TELEMETRY=1', `PATH=${process.env.PATH ?? ''}`];
    const started = tmux('new-session', '-d', '-s', 'codex', '-x', '200', '-y', '50', '-c', ws.project, 'env', ...env, binary);
    assert.is(started.status, 0, started.stderr);
    await screenShows('Ask Codex to do anything').catch(async () => {
      // The installer could not reach Codex to trust the hooks: trust them as a person would, once.
      if (!screen().includes('Hooks need review')) throw new Error(`Codex did not start:\n${screen()}`);
      keys('2');
      keys('Enter');
      await screenShows('Ask Codex to do anything');
    });
  });

  test.after(async () => {
    tmux('kill-server');
    await stack?.close();
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test('a held PermissionRequest answered with respond allow runs the command; the request said what it runs', async () => {
    const requested = await ask('ALLOWTUI');
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, 'TOOL_RAN_');
    await screenShows('Running hook');
    const a = await respond(requested.session!, requested.id, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    await stack.waitFor('the command ran', () => (toolOutputs('ALLOWTUI').some((o) => o.includes('TOOL_RAN_')) ? true : undefined));
  });

  test('Esc while the hook is held interrupts the turn: the request is dismissed at once, a later respond exits not pending', async () => {
    const requested = await ask('ESCTUI');
    await screenShows('Running hook');
    const pressed = Date.now();
    keys('Escape');
    const resolved = await stack.waitFor('attention.resolved', () => stack.events.find((e) => e.type === 'attention.resolved' && e.subject === requested.id));
    console.log(`  Esc in the Codex TUI → attention.resolved {dismissed} in ${Date.now() - pressed} ms`);
    assert.is((resolved.data as { resolution: string }).resolution, 'dismissed');
    const late = await respond(requested.session!, requested.id, 'allow');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'dismissed at the agent');
    assert.not.ok(stack.events.some((e) => e.type === 'attention.answered' && e.subject === requested.id), 'nothing recorded as answered');
    assert.not.ok(toolOutputs('ESCTUI').some((o) => o.includes('TOOL_RAN_')), 'the command never ran');
  });
}

test.run();
