// D45: a Qwen Code worker the adapter spawns. A `qwen serve` daemon serves one folder (a session
// elsewhere is refused `workspace_mismatch`), so each worker gets a daemon of its own, started in
// its folder as `up qwen-code --serve` starts one (daemon.ts: loopback, every route behind a token
// kept in a mode-600 file and passed in its environment), on a port the system picks. The adapter's
// serve lane follows that daemon; the worker is a session opened there, with its first prompt.
// Stopping the worker ends the daemon's whole process group (it runs its agent as a child).
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { SteeringLane } from '../../streams/lane.js';
import type { Launcher, Worker } from '../../streams/spawner.js';
import { serveClient } from './serve/client.js';
import { errorText, rec } from './serve/conversation.js';
import { ensureServeToken, qwenBinary, qwenServeCommand, serveAnswers } from './serve/daemon.js';
import { QwenServeLanes } from './spawn-lanes.js';

export interface QwenSpawnOptions {
  bin: string;
  env: NodeJS.ProcessEnv;
  /** Where each worker's token file is kept (the adapter's state directory). */
  dir: string;
  /** Follows a worker's daemon on the adapter's serve lane; the answer stops following it. */
  follow(url: string, tokenFile: string): () => Promise<void>;
  /** How long the daemon may take to listen (default 60 s: it loads its agent first). */
  startMs?: number;
}

/** The approval modes a worker may run in (`qwen serve`'s `POST /session/:id/approval-mode`). */
const MODES = ['default', 'auto-edit', 'yolo', 'plan'];
/** How long a stopped daemon's processes have to exit before they are killed. */
const STOP_MS = 5000;

/** The approval mode of a worker no one watches: the adapter's `AEP_QWEN_SPAWN_APPROVAL_MODE`, else `auto-edit`. */
export function spawnApprovalMode(env: NodeJS.ProcessEnv): string {
  const mode = env.AEP_QWEN_SPAWN_APPROVAL_MODE || 'auto-edit';
  if (!MODES.includes(mode))
    throw new Error(`AEP_QWEN_SPAWN_APPROVAL_MODE must be one of ${MODES.join(', ')}, got "${mode}"`);
  return mode;
}

/** True while any process of the group `pgid` is left. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    /* gone meanwhile */
  }
}

/** A daemon started in `cwd`: its URL once it listens, and its end (no process of its group left). */
interface Daemon {
  url: string;
  stop(): Promise<void>;
  ended: Promise<void>;
}

async function startDaemon(o: QwenSpawnOptions, cwd: string, token: string): Promise<Daemon> {
  const cmd = qwenServeCommand(o.bin, 0, token, o.env);
  // Its own process group: the daemon's agent child ends with it.
  const child = spawn(cmd.argv[0]!, cmd.argv.slice(1), {
    cwd,
    env: cmd.env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let out = '';
  let failed: string | undefined;
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  // Once the daemon itself is gone, whatever of its group is left is given the same time, then killed.
  const ended = exited.then(async () => {
    const pgid = child.pid;
    if (pgid === undefined) return;
    signalGroup(pgid, 'SIGTERM');
    const until = Date.now() + STOP_MS;
    while (groupAlive(pgid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    signalGroup(pgid, 'SIGKILL');
  });
  const stop = async (): Promise<void> => {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
      signalGroup(child.pid, 'SIGTERM');
      const killer = setTimeout(() => signalGroup(child.pid!, 'SIGKILL'), STOP_MS);
      await exited;
      clearTimeout(killer);
    }
    await ended;
  };
  child.on('error', (err) => (failed = `cannot run ${o.bin}: ${err.message} (set AEP_QWEN_BIN)`));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`qwen serve did not listen within ${o.startMs ?? 60_000} ms`)),
      o.startMs ?? 60_000,
    );
    const on = (d: Buffer) => {
      out = (out + d.toString()).slice(-4000);
      const m = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', on);
    child.stderr!.on('data', on);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(failed ?? `qwen serve exited at start: ${out.trim().split('\n').pop() ?? 'no output'}`));
    });
  }).catch(async (err: unknown) => {
    await stop();
    throw err;
  });
  if (!(await serveAnswers(url, token, 5000))) {
    await stop();
    throw new Error(`qwen serve at ${url} does not answer with its token`);
  }
  return { url, stop, ended };
}

export function qwenLauncher(o: QwenSpawnOptions): Launcher {
  return async (req): Promise<Worker> => {
    const mode = spawnApprovalMode(o.env);
    const tokenFile = join(o.dir, `spawn-${req.commandId.toLowerCase()}.token`);
    const { token } = ensureServeToken(tokenFile);
    let daemon: Daemon;
    try {
      daemon = await startDaemon(o, req.cwd, token);
    } catch (err) {
      rmSync(tokenFile, { force: true });
      throw err;
    }
    const unfollow = o.follow(daemon.url, tokenFile);
    const stop = async (): Promise<void> => {
      // Followed no more first: the daemon's going is the worker's end, not a lost lane.
      await unfollow();
      await daemon.stop();
      rmSync(tokenFile, { force: true });
    };
    try {
      // Opening a session starts the daemon's agent child: on a busy machine that takes a while.
      const client = serveClient({ url: daemon.url, tokenFile, timeoutMs: o.startMs ?? 60_000 });
      const call = async (path: string, body: unknown, want: number[], what: string) => {
        const r = await client.request('POST', path, body);
        if (!want.includes(r.status)) throw new Error(`${what}: HTTP ${r.status} ${errorText(r.body)}`);
        return r.body;
      };
      const session = rec(await call('/session', { cwd: req.cwd }, [200], 'qwen serve opened no session'))?.sessionId;
      if (typeof session !== 'string') throw new Error('qwen serve opened a session without an id');
      const at = `/session/${encodeURIComponent(session)}`;
      await call(`${at}/approval-mode`, { mode }, [200], `the approval mode ${mode} was refused`);
      if (req.model !== undefined)
        await call(`${at}/model`, { modelId: req.model }, [200, 204], `the model ${req.model} was refused`);
      await call(`${at}/prompt`, { prompt: [{ type: 'text', text: req.prompt }] }, [200, 202], 'the first prompt');
      void daemon.ended.then(() => unfollow());
      return { session, ended: daemon.ended, stop };
    } catch (err) {
      await stop();
      throw err;
    }
  };
}

/** The launcher of an adapter's serve lane (`hosts` made it): the qwen binary, token files in the state directory. */
export function qwenSpawnOn(env: NodeJS.ProcessEnv, stateDir: string, lane?: SteeringLane): Launcher {
  if (!(lane instanceof QwenServeLanes)) throw new Error('the Qwen Code adapter spawns only on its serve lane');
  const bin = qwenBinary(env);
  return qwenLauncher({
    bin: bin ?? 'qwen',
    env,
    dir: join(stateDir, 'qwen-code'),
    follow: (url, tokenFile) => lane.follow(url, tokenFile),
  });
}
