// The app-server process the Codex app-server lane starts when none answers on its socket
// (`codex app-server --listen unix://PATH`, directory 700 and socket 600), how it is stopped, and
// how the server's pid is found when another process started it.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { processTable } from '../../tool-processes.js';

export interface AppServerProcess {
  child: ChildProcess;
  /** Why it exited, once it has. */
  exited: Promise<string>;
  /** Its socket is there (and made 600); fails when it could not run, exited or took too long. */
  listening: Promise<void>;
}

/** Starts an app-server listening on `socketPath`; `startMs`: how long its socket may take. */
export function spawnAppServer(o: {
  bin: string;
  socketPath: string;
  env?: NodeJS.ProcessEnv;
  startMs?: number;
}): AppServerProcess {
  mkdirSync(dirname(o.socketPath), { recursive: true, mode: 0o700 });
  chmodSync(dirname(o.socketPath), 0o700);
  const c = spawn(o.bin, ['app-server', '--listen', `unix://${o.socketPath}`], {
    env: o.env ?? process.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  c.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const exited = new Promise<string>((r) =>
    c.on('exit', (code, signal) => r(`the app-server exited (${signal ?? code})`)),
  );
  let failed: string | undefined;
  c.on('error', (err) => (failed = `cannot run ${o.bin}: ${err.message} (set AEP_CODEX_BIN)`));
  const listening = (async () => {
    const until = Date.now() + (o.startMs ?? 15_000);
    while (!existsSync(o.socketPath)) {
      if (failed !== undefined) throw new Error(failed);
      if (c.exitCode !== null || Date.now() > until)
        throw new Error(`the Codex app-server did not start: ${stderr.trim().split('\n').pop() ?? 'no output'}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    chmodSync(o.socketPath, 0o600);
  })();
  return { child: c, exited, listening };
}

/** Stops a server this lane started: TERM, then KILL when it is still there after 3 s. */
export async function stopAppServer(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null) return;
  c.kill('SIGTERM');
  await new Promise((r) => {
    const t = setTimeout(() => {
      c.kill('SIGKILL');
      r(undefined);
    }, 3000);
    c.on('exit', () => {
      clearTimeout(t);
      r(undefined);
    });
  });
}

/**
 * The app-server's pid: the one this lane started, or one started elsewhere (`aep-steer run
 * codex`) found by the socket it was told to listen on (its tool processes are its descendants).
 */
export const appServerPid = (child: ChildProcess | undefined, address: string): number | undefined =>
  child?.pid ?? processTable()?.find((p) => p.argv.includes('app-server') && p.argv.includes(address))?.pid;
