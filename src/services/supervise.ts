// Starting a service in the background and stopping it again: a detached child (its own session
// and process group) whose stdin is closed and whose stdout and stderr are its log file, so
// nothing it says reaches the terminal `up` ran in; and a stop that signals only the process
// the record names (same pid and start time), its group TERM first, KILL if it will not go.
import { spawn } from 'node:child_process';
import { closeSync } from 'node:fs';
import { get } from 'node:http';
import { fileURLToPath } from 'node:url';
import { isRunning, openServiceLog, startTicksOf, writeRecord, type ServiceRecord } from './records.js';

/** `bin/aep-steer.js` of this package (from src/services or dist/services alike). */
const BIN = fileURLToPath(new URL('../../bin/aep-steer.js', import.meta.url));

export function startService(name: string, args: string[], port: number, env: NodeJS.ProcessEnv): ServiceRecord {
  return startProcess(name, [process.execPath, BIN, ...args], port, env);
}

/**
 * Starts any command as a service (a vendor's daemon: `qwen serve`), detached, its output in its
 * log, recorded like the relay; `extra` adds what `status` needs to ask it (its URL, token file).
 */
export function startProcess(
  name: string,
  argv: string[],
  port: number,
  env: NodeJS.ProcessEnv,
  o: { cwd?: string; extra?: Pick<ServiceRecord, 'url' | 'tokenFile'>; recordEnv?: NodeJS.ProcessEnv } = {},
): ServiceRecord {
  // The record and log live in the state directory `up` was given; the child may run with more.
  const stateEnv = o.recordEnv ?? env;
  const { fd, path } = openServiceLog(name, stateEnv);
  try {
    const child = spawn(argv[0]!, argv.slice(1), {
      detached: true,
      stdio: ['ignore', fd, fd],
      env,
      ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
    });
    child.unref();
    // A binary that cannot run has no pid: said by the throw below, not as an unhandled 'error'.
    child.on('error', () => undefined);
    const pid = child.pid;
    if (pid === undefined) throw new Error(`could not start ${name}: cannot run ${argv[0]}`);
    const r: ServiceRecord = {
      name,
      pid,
      argv,
      port,
      log: path,
      startedAt: new Date().toISOString(),
      ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
      ...o.extra,
    };
    const ticks = startTicksOf(pid);
    if (ticks !== undefined) r.startTicks = ticks;
    writeRecord(r, stateEnv);
    return r;
  } finally {
    closeSync(fd); // the child holds its own copy
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** GET http://127.0.0.1:<port><path> as JSON; undefined when nothing answers 200. */
export function getJson(port: number, path: string, timeoutMs = 1000): Promise<Record<string, unknown> | undefined> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) return resolve(undefined);
        try {
          const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
          resolve(v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {});
        } catch {
          resolve({});
        }
      });
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

/**
 * Polls `ready` until it holds, the process ends (false) or `timeoutMs` passes (false).
 * `ready` is what the service answers once it serves: the relay's /healthz, an adapter's link.
 */
export async function waitReady(r: ServiceRecord, ready: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (!isRunning(r)) return false;
    if (await ready()) return true;
    if (Date.now() >= until) return false;
    await sleep(100);
  }
}

export type StopOutcome = 'stopped' | 'killed' | 'gone';

/** Stops the recorded process and its group; 'gone' when the record names no live process of ours. */
export async function stopService(r: ServiceRecord, graceMs = 7000): Promise<StopOutcome> {
  if (!isRunning(r)) return 'gone';
  // Its own group (detached): the group id is its pid, checked to be ours just above.
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-r.pid, s);
    } catch {
      try {
        process.kill(r.pid, s);
      } catch {
        /* ended meanwhile */
      }
    }
  };
  signal('SIGTERM');
  const until = Date.now() + graceMs;
  while (Date.now() < until) {
    if (!isRunning(r)) return 'stopped';
    await sleep(50);
  }
  if (isRunning(r)) signal('SIGKILL');
  while (isRunning(r)) await sleep(50);
  return 'killed';
}
