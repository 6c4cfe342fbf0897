// The Copilot table's native lane (D30): the socket `aep-steer run copilot` joins, and the run.
import { join } from 'node:path';
import type { OwnedLaneSpec } from '../../lane-spec.js';

const copilotSocketPath = (stateDir: string): string => join(stateDir, 'copilot', 'server.sock');

export const copilotServer: OwnedLaneSpec = {
  name: 'server',
  joins: 'owned',
  evidence:
    'copilot-opencode-observed §1 (headless JSON-RPC server: send immediate/enqueue, abort, user.message delivery); test/adapters/copilot/server-lane.test.ts; e2e/copilot-server',
  command: 'copilot',
  make: async (_env, stateDir) =>
    (await import('./lane.js')).copilotServerLane({ socketPath: copilotSocketPath(stateDir) }),
  // D45: each worker is a session hosted on a server of its own, joined to this lane.
  spawn: async (env, _stateDir, open) =>
    (await import('./spawn.js')).copilotLauncher({
      bin: env.AEP_COPILOT_BIN || 'copilot',
      env,
      open: async () => {
        const address = (await open())['address'];
        if (typeof address !== 'string') throw new Error('the Copilot server lane named no socket');
        return address;
      },
    }),
  run: async (env, opened, args, cwd, io) =>
    (await import('./run.js')).runCopilot(env.AEP_COPILOT_BIN || 'copilot', args, String(opened.address), cwd, env, io),
};
