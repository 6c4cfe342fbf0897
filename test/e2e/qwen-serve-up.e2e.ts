// Issue 45 item 9 on the real Qwen Code 0.24.4 against the loopback mock Chat Completions API, as
// the README tells a person to do it, every step a command: `aep-steer install qwen-code --user`,
// `aep-steer up qwen-code --serve --instruct` (the relay, a `qwen serve` daemon with its token
// file, the adapter attached to it), `aep-steer run qwen-code` (a session from the terminal, no
// web shell), `aep-steer instruct --delivery steer` while its tool runs (the text is in the turn's
// next model request), and `aep-steer down`, after which no process of the daemon is left and
// `aep-steer audit` of the adapter's log is clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { freePort } from '../support/readme-blocks.js';
import { until } from '../support/until.js';
import {
  bodyHas,
  qwenEnv,
  vendorBinary,
  workspace,
  writeQwenSettings,
  type Workspace,
  vendorMissing,
} from '../support/vendor-e2e.js';
import { workspaceCli } from '../support/workspace-cli.js';

const INJECTED = '[User message received during tool execution]: ';
const binary = vendorBinary('qwen-code');

let mock: MockOpenAi;
let ws: Workspace;
let env: NodeJS.ProcessEnv;
const ports = { relay: 0, hook: 0, serve: 0 };
const { aep, done, inWorkspace, auditClean } = workspaceCli(
  () => ws,
  () => env,
);
const relay = () => ['--relay', `ws://127.0.0.1:${ports.relay}/socket`];

const missing = 'Qwen Code 0.24.4 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh qwen-code';

if (!vendorMissing(binary, 'qwen-serve-up', missing)) {
  test.before(async () => {
    mock = await startMockOpenAi();
    ws = workspace('aep-qwen-up-');
    writeQwenSettings(ws);
    // `qwen` on PATH, as an installed Qwen Code puts it there.
    env = {
      ...qwenEnv(ws, mock.baseUrl),
      PATH: `${dirname(binary!)}:${process.env.PATH}`,
      AEP_STATE_DIR: join(ws.root, 'state'),
      QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
    };
    ports.relay = await freePort();
    ports.hook = await freePort();
    ports.serve = await freePort();
  });

  test.after(async () => {
    await done(['down']);
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test('install, then up qwen-code --serve: relay, daemon (token file mode 600) and adapter attached to it', async () => {
    const installed = await done(['install', 'qwen-code', '--user', '--port', String(ports.hook)]);
    assert.is(installed.code, 0, installed.err);
    const up = await done([
      'up',
      'qwen-code',
      '--serve',
      '--instruct',
      '--relay-port',
      String(ports.relay),
      '--hook-port',
      String(ports.hook),
      '--serve-port',
      String(ports.serve),
      '--timeout-ms',
      '60000',
    ]);
    assert.is(up.code, 0, up.out + up.err);
    assert.not.match(up.err, 'warning', 'nothing is missing for the daemon here');
    const tokenFile = join(env.AEP_STATE_DIR!, 'qwen-serve.token');
    assert.match(up.out, `serving http://127.0.0.1:${ports.serve} for ${ws.project}; its token is in ${tokenFile}`);
    assert.is(statSync(tokenFile).mode & 0o777, 0o600);
    assert.match(up.out, `serve lane http://127.0.0.1:${ports.serve} (token ${tokenFile})`);
  });

  test('run qwen-code opens a session from the terminal; a steer sent with instruct while its tool runs is in the next model request', async () => {
    const gate = join(ws.root, 'slow.go');
    const run = aep(
      [
        'run',
        'qwen-code',
        '--port',
        String(ports.hook),
        '--approval-mode',
        'yolo',
        `[[TURN]] [[WAITFILE:${gate}]] q-up run the slow command`,
      ],
      { stdin: 'pipe' },
    );
    try {
      await until(() => /session (\S+) on /.test(run.err()), 'run to open its session', 60_000);
      const session = /session (\S+) on /.exec(run.err())![1]!;
      await until(() => run.err().includes('⚙'), "the turn's slow tool call", 60_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${run.err()}`);
      });
      // The serve lane reaches the session once it follows it: the roster says so.
      await until(
        async () => {
          const s = await done(['sessions', '--json', ...relay()]);
          const rows = s.code === 0 ? (JSON.parse(s.out) as { session: string; lanes?: string[] }[]) : [];
          return rows.some((r) => r.session === session && r.lanes?.includes('serve') === true);
        },
        'the serve lane to reach the session',
        30_000,
      );
      const text = `STEER-FROM-THE-CLI-${session.slice(0, 8)}`;
      const instruct = aep(['instruct', '--session', session, '--delivery', 'steer', ...relay(), text]);
      await until(() => instruct.out().includes('accepted'), 'the steer accepted', 30_000).catch((e: Error) => {
        throw new Error(`${e.message}\n${instruct.out()}${instruct.err()}`);
      });
      writeFileSync(gate, '');
      const code = await instruct.code;
      assert.is(code, 0, instruct.out() + instruct.err());
      assert.match(instruct.out(), 'delivered');
      // The daemon's receipt (what `delivered` waits for) comes just before the request that carries it.
      const carrying = () => mock.modelRequests().filter((r) => bodyHas(r.body, `${INJECTED}${text}`));
      await until(() => carrying().length > 0, 'the steer in a model request', 30_000);
      assert.ok(
        carrying().every((r) => bodyHas(r.body, 'q-up run the slow command')),
        'of the turn run qwen-code started',
      );
      await until(() => run.err().includes('reached the running turn'), 'run to show the steer arrived', 30_000);
      await until(() => run.out().includes('MOCK_DONE'), "the turn's answer printed", 60_000);
      run.child.stdin!.end();
      assert.is(await run.code, 0, run.err());
    } finally {
      if (run.child.exitCode === null) run.child.kill('SIGKILL');
    }
  });

  test('down stops the adapter, the daemon and the relay; no process of the daemon is left', async () => {
    assert.ok(inWorkspace().length > 0, 'the daemon runs in the project folder');
    const down = await done(['down']);
    assert.is(down.code, 0, down.err);
    assert.match(down.out, 'qwen-serve: stopped');
    await until(() => inWorkspace().length === 0, 'no process left in the workspace', 20_000).catch((e: Error) => {
      throw new Error(`${e.message}: ${inWorkspace().join(', ')}`);
    });
  });

  test("the audit of the adapter's log is clean", async () => {
    await auditClean('qwen-code');
  });
}

test.run();
