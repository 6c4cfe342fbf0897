// The Claude Code table's native lane (D30): the socket headless runs join, and the run itself.
import { join } from 'node:path';
import type { OwnedLaneSpec } from '../../lane-spec.js';

/** The private socket `aep-steer run claude` joins, in the adapter's state directory. */
export const streamJsonSocketPath = (stateDir: string): string => join(stateDir, 'claude-code', 'stream-json.sock');

export const claudeStreamJson: OwnedLaneSpec = {
  name: 'stream-json',
  joins: 'owned',
  evidence:
    'e2e/claude-stream-json (2.1.332 streaming input: folded, later, withdraw, interrupt); e2e/claude-stream-lane (steer, receipt, cancel)',
  command: 'claude',
  make: async (_env, stateDir) =>
    (await import('./lane.js')).streamJsonLane({ socketPath: streamJsonSocketPath(stateDir) }),
  // A worker is never asked for a permission no one is there to give: it runs in the mode the
  // adapter's environment names (AEP_CLAUDE_SPAWN_PERMISSION_MODE, default acceptEdits).
  spawn: async (env, _stateDir, open) =>
    (await import('./spawn.js')).claudeLauncher({
      bin: env.AEP_CLAUDE_BIN || 'claude',
      env,
      args: ['--permission-mode', env.AEP_CLAUDE_SPAWN_PERMISSION_MODE || 'acceptEdits'],
      open: async () => {
        const address = (await open())['address'];
        if (typeof address !== 'string') throw new Error('the stream-json lane named no socket');
        return address;
      },
    }),
  run: async (env, opened, args, cwd, io) =>
    (await import('./run.js')).runHeadless(env.AEP_CLAUDE_BIN || 'claude', args, String(opened.address), cwd, env, io),
};
