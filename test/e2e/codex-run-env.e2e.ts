// Issue 45 item 4 on the real Codex 0.171.0 against the loopback mock Responses API: the model key
// (the `env_key` of the config's model provider) is only in the terminal `aep-steer run codex`
// runs in, not in the adapter's environment (as when `aep-steer up` ran elsewhere). The run starts
// its own app-server with its own environment, so the first prompt reaches the model (the mock's
// request log shows it), the adapter still reaches the session through that server, and the
// server ends with the TUI's terminal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { e2eSuite } from '../support/e2e-stack.js';
import type { Tui } from '../support/tui.js';
import { until } from '../support/until.js';

/** An environment without the model key (the `env_key` of the config's model provider). */
const keyless = ({ MOCK_API_KEY: _key, OPENAI_API_KEY: _openai, ...rest }: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  rest;

// The adapter runs as `aep-steer up` left it: no model key in its environment.
const e2e = e2eSuite('codex', {
  label: 'codex-run-env',
  tmux: true,
  env: (home, e2e) => ({ ...keyless(home.env), AEP_CODEX_BIN: e2e.binary }),
});
let tui: Tui | undefined;

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
const serverProcesses = () => processesWith(`app-server --listen unix://${codexSocketPath(e2e.stack.stateDir)}`);

if (e2e.installed) {
  test.before(() => {
    // Whoever owned it (the run, or an adapter that started it), no app-server outlives the test.
    e2e.deferAfterAdapter(() => until(() => serverProcesses().length === 0, 'the app-server to end', 20_000));
  });

  test("the key only in run codex's terminal: the first prompt reaches the model, and the adapter reaches the session", async () => {
    // The person's terminal has it.
    const caller = { ...keyless(e2e.runEnv(e2e.home)), MOCK_API_KEY: 'key-of-this-terminal' };
    tui = await e2e.tui(e2e.home, { name: 'codex-env', argv: e2e.aepRun(), env: caller });
    const from = e2e.stack.events.length;
    await tui.submit('[[TURN]] e-first hello from the person');
    await e2e.stack
      .waitFor('the first prompt in a model request', () => e2e.withText('e-first hello from the person')[0])
      .catch((err: Error) => {
        throw new Error(`${err.message}\nthe TUI shows:\n${tui?.screen()}`);
      });
    assert.not.match(tui!.screen(), 'Missing environment variable');
    const session = await e2e.stack.newSession(from);
    await e2e.stack.waitFor('the turn finished', () =>
      e2e.stack.events.find((e) => e.session === session && e.type === 'run.finished'),
    );
    await e2e.stack.waitFor('the app-server lane reaches the session', () =>
      e2e.stack.events.find(
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

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
