// D45: a Codex worker the adapter spawns: an app-server of its own, started with the adapter's
// environment in the worker's directory, on a socket in the lane's private directory (so the
// adapter's app-server lane joins it as it joins a run's), then a new thread there and its first
// turn with the prompt. The thread is the session. This connection stays open while the worker
// runs, so the thread stays loaded; stopping the worker stops its server.
import type { Launcher, Worker } from '../../../streams/spawner.js';
import { connectRpc } from './rpc.js';
import { startRunServer } from './serve.js';

export interface CodexSpawnOptions {
  bin: string;
  /** The app-server lane's directory (`$AEP_STATE_DIR/codex`). */
  dir: string;
  env: NodeJS.ProcessEnv;
  /** Asks the adapter's lane to join the servers in `dir` (the lane's `open`). */
  join(): Promise<unknown>;
  startMs?: number;
}

export function codexLauncher(o: CodexSpawnOptions): Launcher {
  return async (req): Promise<Worker> => {
    const server = await startRunServer({
      bin: o.bin,
      dir: o.dir,
      env: o.env,
      cwd: req.cwd,
      socketName: `spawn-${req.commandId.toLowerCase()}.sock`,
      ...(o.startMs === undefined ? {} : { startMs: o.startMs }),
    });
    try {
      // Joined before the thread starts: the lane follows the thread from its announcement.
      await o.join();
      const rpc = await connectRpc(
        server.socketPath,
        () => undefined,
        () => undefined,
      );
      void server.exited.then(() => rpc.close());
      await rpc.call('initialize', { clientInfo: { name: 'aep-steer-spawn', version: '1' } });
      rpc.notify('initialized');
      const started = (await rpc.call('thread/start', {
        cwd: req.cwd,
        ...(req.model === undefined ? {} : { model: req.model }),
      })) as { thread?: { id?: unknown } };
      const session = started.thread?.id;
      if (typeof session !== 'string') throw new Error('the app-server started a thread without an id');
      await rpc.call('turn/start', {
        threadId: session,
        input: [{ type: 'text', text: req.prompt }],
        clientUserMessageId: req.commandId,
      });
      return {
        session,
        ended: server.exited,
        async stop() {
          rpc.close();
          await server.stop();
        },
      };
    } catch (err) {
      await server.stop();
      throw err;
    }
  };
}
