// The Codex table's native lane (D30): where its app-server listens and which binary runs it.
import { join } from 'node:path';
import { codexBinary } from '../../adapters/installers/codex.js';
import type { OwnedLaneSpec } from '../lane.js';

/** The private socket `aep-steer run codex` connects the TUI to, in the adapter's state directory. */
export const codexSocketPath = (stateDir: string): string => join(stateDir, 'codex', 'app-server.sock');

export const codexAppServer: OwnedLaneSpec = {
  name: 'app-server',
  joins: 'owned',
  evidence:
    'native-lanes.md "Observed on the pinned binaries" (Codex 0.171.0 app-server); e2e/codex-app-server (steer, receipt, interrupt, loss, command and file-change approvals); e2e/codex-steer-race (a steer losing the race with the turn end)',
  make: async (env, stateDir) =>
    (await import('./lane.js')).codexAppServerLane({
      bin: codexBinary(env) ?? 'codex',
      socketPath: codexSocketPath(stateDir),
      env,
    }),
  // The stock TUI on the adapter's server (native-lanes.md: `codex --remote unix://PATH`). Observed:
  // a remote TUI's thread runs in the server's directory unless `--cd` names the person's own.
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
