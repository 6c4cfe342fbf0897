// `aep-steer run codex`'s own app-server: started by the run, with the person's environment and
// in their directory (so the model key, PATH and tools are what their `codex` would have), on a
// socket in the adapter's private directory where the adapter's lane joins it (servers.ts). It
// lives as long as the TUI on it: the run removes the socket, then stops the server.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import type { ServedLane } from '../../lane-spec.js';

/** The first run's socket; a run beside it takes `app-server-<pid>.sock`. */
export const FIRST_SOCKET = 'app-server.sock';

/** A directory only its owner may enter (700), made or tightened. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** True when something accepts a connection on the Unix socket `path` now. */
export function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const c = createConnection(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}

/** A socket name in `dir` no live server holds; a dead server's leftover is removed. */
async function freeSocket(dir: string, pid: number, own?: string): Promise<string> {
  for (const name of own === undefined ? [FIRST_SOCKET, `app-server-${pid}.sock`] : [own]) {
    const path = join(dir, name);
    if (!existsSync(path)) return path;
    if (await socketAnswers(path)) continue;
    rmSync(path, { force: true });
    return path;
  }
  throw new Error(`another app-server already listens on ${join(dir, own ?? `app-server-${pid}.sock`)}`);
}

export interface RunServerOptions {
  bin: string;
  /** The lane's directory, as the adapter's open answer names it. */
  dir: string;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** How long the server may take to listen (default 20 s). */
  startMs?: number;
  /** The socket's own name in `dir` (a spawned worker's); default the run's. */
  socketName?: string;
}

export async function startRunServer(
  o: RunServerOptions,
): Promise<ServedLane & { pid: number; socketPath: string; exited: Promise<void> }> {
  ensurePrivateDir(o.dir);
  const socketPath = await freeSocket(o.dir, process.pid, o.socketName);
  const address = `unix://${socketPath}`;
  // Its stdout and stderr stay off the terminal the TUI draws on; the last of stderr says why it failed.
  const child = spawn(o.bin, ['app-server', '--listen', address], {
    cwd: o.cwd,
    env: o.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  let failed: string | undefined;
  child.on('error', (err) => (failed = `cannot run ${o.bin}: ${err.message} (set AEP_CODEX_BIN)`));
  const running = () => child.exitCode === null && child.signalCode === null && failed === undefined;
  const exited = new Promise<void>((r) => child.once('close', () => r()));
  const until = Date.now() + (o.startMs ?? 20_000);
  // Listening, not only bound: the adapter connects as soon as this returns.
  while (!(existsSync(socketPath) && (await socketAnswers(socketPath)))) {
    if (!running()) {
      await Promise.race([exited, new Promise((r) => setTimeout(r, 500))]);
      const last = stderr.trim().split('\n').pop();
      throw new Error(failed ?? `the Codex app-server exited at start: ${last || `exit ${child.exitCode}`}`);
    }
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`the Codex app-server did not listen on ${socketPath} within ${o.startMs ?? 20_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  chmodSync(socketPath, 0o600);
  return {
    address,
    socketPath,
    pid: child.pid!,
    exited,
    async stop() {
      // A server that died on its own keeps its socket: the adapter said so, and the next run reuses the name.
      if (!running()) return;
      rmSync(socketPath, { force: true });
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(killer);
    },
  };
}
