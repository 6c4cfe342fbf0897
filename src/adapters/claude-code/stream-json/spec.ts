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
  run: async (env, opened, args, cwd, io) =>
    (await import('./run.js')).runHeadless(env.AEP_CLAUDE_BIN || 'claude', args, String(opened.address), cwd, env, io),
};
