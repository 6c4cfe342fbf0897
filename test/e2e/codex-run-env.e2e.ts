// Issue 45 item 4 on the real Codex 0.171.0 against the loopback mock Responses API: the model key
// (the `env_key` of the config's model provider) is only in the terminal `aep-steer run codex`
// runs in, not in the adapter's environment (as when `aep-steer up` ran elsewhere). The run starts
// its own app-server with its own environment, so the first prompt reaches the model (the mock's
// request log shows it), the adapter still reaches the session through that server, and the
// server ends with the TUI's terminal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { projectRoot } from '../support/shared-dir.js';
import { startTui, tmuxMissing, type Tui } from '../support/tui.js';
import { until } from '../support/until.js';
import {
  bodyHas,
  codexEnv,
  codexHome,
  startVendorStack,
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
let tui: Tui | undefined;
let caller: NodeJS.ProcessEnv;

/** Pids of the processes whose command line names `needle`. */
function processesWith(needle: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(needle) ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
}
const serverProcesses = () => processesWith(`app-server --listen unix://${codexSocketPath(stack.stateDir)}`);

if (binary === undefined || tmuxMissing()) {
  test('codex-run-env: the pinned CLI and tmux are installed', () => {
    assert.unreachable(
      'Codex 0.171.0 is not installed in .vendor-clis (scripts/install-vendor-cli.sh codex), or tmux is missing',
    );
  });
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    ws = workspace('aep-codex-env-');
    writeCodexConfig(ws, mock.baseUrl);
    const { MOCK_API_KEY: _key, OPENAI_API_KEY: _openai, ...withoutKeys } = codexEnv(ws);
    // The adapter runs as `aep-steer up` left it: no model key in its environment.
    stack = await startVendorStack('codex', { ...withoutKeys, AEP_CODEX_BIN: binary });
    installCodex({
      user: true,
      port: stack.running.adapter.port,
      secret: stack.secret,
      neutral: codex.replies.neutral,
      attentionTimeoutMs: codex.attentionTimeoutMs,
      env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary, AEP_STATE_DIR: stack.stateDir },
    });
    // The person's terminal has it.
    caller = {
      ...withoutKeys,
      MOCK_API_KEY: 'key-of-this-terminal',
      AEP_CODEX_BIN: binary,
      AEP_STATE_DIR: stack.stateDir,
    };
  });

  test.after(async () => {
    tui?.kill();
    const dir = stack?.stateDir;
    await stack?.close();
    // Whoever owned it (the run, or an adapter that started it), no app-server outlives the test.
    if (dir !== undefined)
      await until(
        () => processesWith(`app-server --listen unix://${codexSocketPath(dir)}`).length === 0,
        'the app-server to end',
        20_000,
      );
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test("the key only in run codex's terminal: the first prompt reaches the model, and the adapter reaches the session", async () => {
    const entry = join(projectRoot, 'test', 'support', 'run-cli-entry.ts');
    const tsx = join(projectRoot, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
    tui = startTui('codex-env', ws.project, caller, [
      process.execPath,
      '--import',
      tsx,
      entry,
      'run',
      'codex',
      '--port',
      String(stack.running.adapter.port),
    ]);
    await tui.shows('Ask Codex to do anything', 90_000).catch((err: Error) => {
      throw new Error(`${err.message}\nadapter errors: ${stack.errors.join('\n')}`);
    });
    const from = stack.events.length;
    await tui.submit('[[TURN]] e-first hello from the person');
    await stack
      .waitFor('the first prompt in a model request', () =>
        mock.modelRequests().find((r) => bodyHas(r.body, 'e-first hello from the person')),
      )
      .catch((err: Error) => {
        throw new Error(`${err.message}\nthe TUI shows:\n${tui?.screen()}`);
      });
    assert.not.match(tui.screen(), 'Missing environment variable');
    const session = await stack.newSession(from);
    await stack.waitFor('the turn finished', () =>
      stack.events.find((e) => e.session === session && e.type === 'run.finished'),
    );
    await stack.waitFor('the app-server lane reaches the session', () =>
      stack.events.find(
        (e) =>
          e.session === session &&
          e.type === 'x.codex.session.described' &&
          (e.data?.['lanes'] as string[] | undefined)?.includes('app-server'),
      ),
    );
    const [server] = serverProcesses();
    assert.ok(server !== undefined, 'the run started its own app-server on the adapter socket');
    const environ = readFileSync(`/proc/${server}/environ`, 'utf8').split('\0');
    assert.ok(environ.includes('MOCK_API_KEY=key-of-this-terminal'), "with the run's environment");
  });

  test("the app-server ends with the TUI's terminal", async () => {
    assert.ok(serverProcesses().length > 0, 'it runs while the TUI does');
    tui?.kill();
    tui = undefined;
    await until(() => serverProcesses().length === 0, 'the app-server to end with the TUI', 20_000);
  });
}

test.run();
