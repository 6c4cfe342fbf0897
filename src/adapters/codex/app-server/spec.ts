// The Codex table's native lane (D30): where the app-servers of `aep-steer run codex` listen, how
// a run starts its own, and which binary runs it.
import { join } from 'node:path';
import { codexBinary } from '../installer.js';
import type { OwnedLaneSpec } from '../../lane-spec.js';

/** The private directory the runs' app-servers listen in, in the adapter's state directory. */
const codexSocketDir = (stateDir: string): string => join(stateDir, 'codex');
/** The socket the first `aep-steer run codex` listens on (another beside it takes `app-server-<pid>.sock`). */
export const codexSocketPath = (stateDir: string): string => join(codexSocketDir(stateDir), 'app-server.sock');

export const codexAppServer: OwnedLaneSpec = {
  name: 'app-server',
  joins: 'owned',
  evidence:
    'native-lanes.md "Observed on the pinned binaries" (Codex 0.171.0 app-server); e2e/codex-app-server (steer, receipt, interrupt, loss, command and file-change approvals); e2e/codex-steer-race (a steer losing the race with the turn end); e2e/codex-run-env (the key only in the run\'s terminal)',
  make: async (env, stateDir) =>
    (await import('./servers.js')).codexServersLane({
      dir: codexSocketDir(stateDir),
      bin: codexBinary(env) ?? 'codex',
    }),
  // The server runs with the caller's environment, as their own `codex` would: the adapter's
  // (that of `aep-steer up`) may lack the model key the person exported in this terminal.
  serve: async (env, opened, cwd) =>
    (await import('./serve.js')).startRunServer({
      bin: codexBinary(env) ?? 'codex',
      dir: String(opened.dir),
      env,
      cwd,
    }),
  // A worker's server runs with the adapter's environment: no person's terminal stands behind it.
  spawn: async (env, stateDir, open) =>
    (await import('./spawn.js')).codexLauncher({
      bin: codexBinary(env) ?? 'codex',
      dir: codexSocketDir(stateDir),
      env,
      join: open,
    }),
  // The stock TUI on that server (native-lanes.md: `codex --remote unix://PATH`). Observed: a
  // remote TUI's thread runs in the server's directory unless `--cd` names the person's own.
  client: (env, opened, args, cwd) => ({
    bin: codexBinary(env) ?? 'codex',
    args: [
      '--remote',
      String(opened.address),
      ...(args.some((a) => a === '-C' || a === '--cd' || a.startsWith('--cd=')) ? [] : ['--cd', cwd]),
      ...args,
    ],
  }),
};
