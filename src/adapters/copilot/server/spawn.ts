// D45: a Copilot worker the adapter spawns: a session hosted on its own `copilot --headless
// --stdio` (host.ts, as `aep-steer run copilot` hosts one), with the adapter's environment in the
// worker's directory, joined to the adapter's server lane. `session.create` names the session, so
// the answer names it before its first turn begins; the first prompt is then sent as a start.
// The worker stays open for steering and later turns until it is stopped.
import type { Launcher, Worker } from '../../../streams/spawner.js';
import { hostCopilotSession } from './host.js';

export interface CopilotSpawnOptions {
  bin: string;
  env: NodeJS.ProcessEnv;
  /** Opens the adapter's server lane; answers the socket it listens on. */
  open(): Promise<string>;
  /** Where a worker's own words go (a lost adapter, a server that would not start). */
  say?(line: string): void;
}

/** How long a stopped worker's server has to exit before it is killed. */
const STOP_MS = 5000;

export function copilotLauncher(o: CopilotSpawnOptions): Launcher {
  const say = o.say ?? ((line: string) => process.stderr.write(`aep-steer adapter: copilot worker: ${line}\n`));
  return async (req): Promise<Worker> => {
    const hosted = await hostCopilotSession({
      bin: o.bin,
      args: [],
      socketPath: await o.open(),
      cwd: req.cwd,
      // A model the spawn names replaces the environment's for this worker only.
      env: req.model === undefined ? o.env : { ...o.env, COPILOT_MODEL: req.model },
      say,
    });
    if (!('session' in hosted)) throw new Error(hosted.detail);
    const stop = async (): Promise<void> => {
      hosted.end();
      const killer = setTimeout(() => hosted.kill(), STOP_MS);
      await hosted.exited;
      clearTimeout(killer);
    };
    try {
      await hosted.rpc.call('session.send', { sessionId: hosted.session, prompt: req.prompt });
    } catch (e) {
      await stop();
      throw new Error(`the Copilot worker did not take its first prompt: ${(e as Error).message}`);
    }
    return { session: hosted.session, ended: hosted.exited.then(() => undefined), stop };
  };
}
