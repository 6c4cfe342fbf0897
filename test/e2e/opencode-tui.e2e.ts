// `aep-steer run opencode` on the real opencode 1.18.33 against the loopback mock Chat Completions
// API, as a person runs it in their project folder in a terminal (tmux): it starts what `up
// opencode --instruct` starts (the relay, an `opencode serve` in this folder behind a mode-600
// password file, the adapter following it) and runs the person's `opencode attach URL` TUI on
// that server. A prompt typed in the TUI runs a slow tool; `aep-steer instruct --delivery steer`
// sent meanwhile (the adapter asks the server whether the session is busy, and steers the TUI's
// V1 turn through V1 `prompt_async`) is delivered: its text is in the same turn's next request,
// right after the tool's result. `aep-steer down` then stops the adapter,
// the server and the relay, and `aep-steer audit` of the adapter's log is clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { opencodeBinary, opencodeEnv, writeOpencodeConfig } from '../support/opencode-serve.js';
import { OPENCODE_MISSING } from '../support/opencode-serve-suite.js';
import { freePort } from '../support/readme-blocks.js';
import { AEP_BIN } from '../support/services-rig.js';
import { startTui, tmuxMissing, type Tui } from '../support/tui.js';
import { until } from '../support/until.js';
import { chatMessagesOf, chatTextOf, vendorMissing, workspace, type Workspace } from '../support/vendor-e2e.js';
import { workspaceCli } from '../support/workspace-cli.js';

const binary = opencodeBinary();

let mock: MockOpenAi;
let ws: Workspace;
let env: NodeJS.ProcessEnv;
let tui: Tui | undefined;
const ports = { relay: 0, hook: 0, serve: 0 };
const { aep, done, inWorkspace, auditClean } = workspaceCli(
  () => ws,
  () => env,
);
const relay = () => ['--relay', `ws://127.0.0.1:${ports.relay}/socket`];

const userTexts = (body: unknown): string[] =>
  chatMessagesOf(body)
    .filter((m) => m.role === 'user')
    .map((m) => chatTextOf(m));

if (
  !vendorMissing(binary, 'opencode-tui', OPENCODE_MISSING) &&
  !vendorMissing(tmuxMissing() ? undefined : 'tmux', 'opencode-tui', 'tmux is not installed')
) {
  test.before(async () => {
    mock = await startMockOpenAi();
    ws = workspace('aep-opencode-tui-');
    writeOpencodeConfig(ws, mock.baseUrl);
    ports.relay = await freePort();
    ports.hook = await freePort();
    ports.serve = await freePort();
    // `opencode` on PATH, as an installed opencode puts it there; nothing of the machine's own settings.
    env = {
      ...opencodeEnv(ws),
      PATH: `${dirname(binary!)}:${dirname(process.execPath)}:${process.env.PATH}`,
      TERM: 'xterm-256color',
      AEP_STATE_DIR: join(ws.root, 'state'),
      AEP_PORT: String(ports.relay),
      AEP_HOOK_PORT: String(ports.hook),
      AEP_OPENCODE_SERVE_PORT: String(ports.serve),
    };
  });

  test.after(async () => {
    await tui?.end();
    await done(['down']);
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test.after.each(() => {
    writeFileSync(join(ws.root, 'slow.go'), '');
  });

  test('run opencode starts the server and the adapter and attaches the TUI; a steer sent while its turn runs is delivered in the same turn', async () => {
    tui = startTui('opencode-run', ws.project, env, [process.execPath, AEP_BIN, 'run', 'opencode']);
    const passwordFile = join(env.AEP_STATE_DIR!, 'opencode-serve.password');
    await until(
      async () => (await done(['status', '--json'])).all.includes('"opencode-serve"'),
      'run to start the server',
      60_000,
    );
    assert.is(statSync(passwordFile).mode & 0o777, 0o600, 'the password file is mode 600');

    const gate = join(ws.root, 'slow.go');
    const tag = 'o-tui run the slow command';
    // The TUI draws its prompt once it has the server's sessions and models.
    await until(() => tui!.screen().toLowerCase().includes('mock'), 'the TUI to show its model', 90_000).catch(
      (e: Error) => {
        throw new Error(`${e.message}\n${tui!.screen()}`);
      },
    );
    await tui.submit(`[[TURN]] [[WAITFILE:${gate}]] ${tag}`);
    const asked = () => mock.modelRequests().filter((r) => userTexts(r.body).some((t) => t.includes(tag)));
    await until(() => asked().length > 0, 'the model asked for the slow tool', 60_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${tui!.screen()}`);
    });
    let session = '';
    await until(
      async () => {
        const s = await done(['sessions', '--json', ...relay()]);
        const rows = s.code === 0 ? (JSON.parse(s.all) as { session: string; lanes?: string[] }[]) : [];
        session = rows.find((r) => r.lanes?.includes('serve') === true)?.session ?? '';
        return session !== '';
      },
      'the serve lane to reach the TUI session',
      30_000,
    );

    const text = `STEER-INTO-THE-TUI-${session.slice(-8)}`;
    // Sent at once: the adapter asks the server whether the session is busy rather than wait for its poll.
    const instruct = aep(['instruct', '--session', session, '--delivery', 'steer', ...relay(), text]);
    await until(() => instruct.all().includes('accepted'), 'the steer accepted', 30_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${instruct.all()}`);
    });
    writeFileSync(gate, '');
    const code = await instruct.code;
    assert.is(code, 0, `instruct ends delivered: ${instruct.all()}`);
    assert.match(instruct.all(), 'delivered');
    const carrying = () => mock.modelRequests().filter((r) => userTexts(r.body).some((t) => t.includes(text)));
    await until(() => carrying().length > 0, 'the steer in a model request', 30_000);
    // The same turn's next request: the steer follows the slow tool's result, with no answer between.
    const messages = chatMessagesOf(carrying()[0]!.body);
    const at = messages.findIndex((m) => m.role === 'user' && chatTextOf(m).includes(text));
    assert.is(messages[at - 1]?.role, 'tool', JSON.stringify(messages.map((m) => m.role)));
    assert.ok(
      messages.some((m) => m.role === 'user' && chatTextOf(m).includes(tag)),
      'in the conversation the TUI opened',
    );
  });

  test('down stops the adapter, the server and the relay; no process of the server is left', async () => {
    await tui?.end();
    tui = undefined;
    const down = await done(['down']);
    assert.is(down.code, 0, down.all);
    assert.match(down.all, 'opencode-serve: stopped');
    assert.match(down.all, 'adapter-opencode: stopped');
    await until(() => inWorkspace().length === 0, 'no process left in the workspace', 60_000).catch((e: Error) => {
      throw new Error(`${e.message}: ${inWorkspace().join(', ')}`);
    });
  });

  test("the audit of the adapter's log is clean", async () => {
    await auditClean('opencode');
  });
}

test.run();
