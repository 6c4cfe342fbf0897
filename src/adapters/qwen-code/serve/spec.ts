// The Qwen Code table's native lane (D30): a `qwen serve` daemon (started by `aep-steer up
// qwen-code --serve`, or one the person runs), attached by URL; `aep-steer run qwen-code` opens a
// session of its own there.
import type { AttachedLaneSpec } from '../../lane-spec.js';

export const qwenServe: AttachedLaneSpec = {
  name: 'serve',
  joins: 'attached',
  evidence: [
    "e2e/qwen-serve-lane#a steer during a slow tool call is in the same turn's next model request, with the daemon's receipt",
    "e2e/qwen-serve-adapter#queue sent mid-turn: none of the running turn's requests, the first request of the next turn, through the serve lane; a resend is one delivery",
    "e2e/qwen-serve-adapter#queue with no turn running starts a turn of its own at once: its text is that turn's first request",
    'e2e/qwen-serve-adapter#a queue withdrawn while it waits is dropped withdrawn and never reaches the model; the one behind it runs',
  ].join('; '),
  attach: async (o) => (await import('./lane.js')).qwenServeLane(o),
  // D45: each worker runs a daemon of its own in its folder; this lane follows them all (spawn-lanes.ts).
  hosts: async (attached, onError) => {
    const { qwenServeLane } = await import('./lane.js');
    const { QwenServeLanes } = await import('../spawn-lanes.js');
    return new QwenServeLanes(attached, (url, tokenFile) =>
      qwenServeLane({ url, ...(tokenFile === undefined ? {} : { tokenFile }), onError }),
    );
  },
  spawn: async (env, stateDir, _open, lane) => (await import('../spawn.js')).qwenSpawnOn(env, stateDir, lane),
  run: async (env, opened, args, cwd, io) => (await import('./run.js')).runServeSession(env, opened, args, cwd, io),
};
