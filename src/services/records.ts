// What `aep-steer up` remembers about each service it started: one pid file per service in
// `$AEP_STATE_DIR/run/` (mode 600), naming the process by pid *and* its kernel start time, so a
// pid reused by another process is never taken for ours. Output goes to `$AEP_STATE_DIR/logs/`.
import { chmodSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';

export interface ServiceRecord {
  /** `relay`, `adapter-<vendor>`, or a vendor's daemon (`qwen-serve`). */
  name: string;
  pid: number;
  /** /proc/<pid>/stat start time (clock ticks since boot); undefined where /proc is not there. */
  startTicks?: string;
  argv: string[];
  port: number;
  log: string;
  startedAt: string;
  /** A vendor's daemon: where it serves and the mode-600 file holding its token (`status` asks it with that). */
  url?: string;
  tokenFile?: string;
  /** The directory it was started in (a daemon's workspace). */
  cwd?: string;
}

const runDir = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'run');
const logsDir = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'logs');
const recordPath = (name: string, env: NodeJS.ProcessEnv = process.env): string => join(runDir(env), `${name}.pid`);
export const serviceLog = (name: string, env: NodeJS.ProcessEnv = process.env): string =>
  join(logsDir(env), `${name}.log`);

/** A directory only its owner may enter (700), made or tightened. */
function privateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if ((statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
}

/** Opens a service's log for appending, mode 600 in a 700 directory; the caller hands the fd to the child. */
export function openServiceLog(name: string, env: NodeJS.ProcessEnv = process.env): { fd: number; path: string } {
  privateDir(stateDir(env));
  privateDir(logsDir(env));
  const path = serviceLog(name, env);
  const fd = openSync(path, 'a', 0o600);
  chmodSync(path, 0o600);
  return { fd, path };
}

/** The kernel's start time of a process: what tells it from a later process given the same pid. */
export function startTicksOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses); start time is field 22.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** True while the process the record names runs: same pid, same start time (not a zombie). */
export function isRunning(r: ServiceRecord): boolean {
  if (r.startTicks !== undefined) {
    const now = startTicksOf(r.pid);
    if (now !== r.startTicks) return false;
    try {
      const state = readFileSync(`/proc/${r.pid}/stat`, 'utf8');
      return state.slice(state.lastIndexOf(')') + 2, state.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(r.pid, 0);
    return true;
  } catch {
    return false;
  }
}

export function writeRecord(r: ServiceRecord, env: NodeJS.ProcessEnv = process.env): void {
  privateDir(stateDir(env));
  privateDir(runDir(env));
  writePrivateFile(recordPath(r.name, env), `${JSON.stringify(r)}\n`);
}

export function readRecord(name: string, env: NodeJS.ProcessEnv = process.env): ServiceRecord | undefined {
  const path = recordPath(name, env);
  if (!existsSync(path)) return undefined;
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as ServiceRecord;
    return typeof r.pid === 'number' && typeof r.name === 'string' ? r : undefined;
  } catch {
    return undefined; // torn or foreign: treated as nothing started
  }
}

/** Every recorded service, the relay first, then adapters by name. */
export function listRecords(env: NodeJS.ProcessEnv = process.env): ServiceRecord[] {
  const dir = runDir(env);
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir)
    .filter((f) => f.endsWith('.pid'))
    .map((f) => f.slice(0, -'.pid'.length));
  const records = names.flatMap((n) => readRecord(n, env) ?? []);
  return records.sort((a, b) => (a.name === 'relay' ? -1 : b.name === 'relay' ? 1 : a.name.localeCompare(b.name)));
}

export function removeRecord(name: string, env: NodeJS.ProcessEnv = process.env): void {
  rmSync(recordPath(name, env), { force: true });
}

/** The last lines of a service's log (its own messages: started, relay link, errors). */
export function logTail(path: string, lines = 5): string[] {
  try {
    const text = readFileSync(path, 'utf8');
    return text
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-lines);
  } catch {
    return [];
  }
}

/** What a log holds past `from` bytes (what a service said since it was started), as lines. */
export function logSince(path: string, from: number): string[] {
  try {
    return readFileSync(path)
      .subarray(from)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '');
  } catch {
    return [];
  }
}

export function logSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/** The last line of a log that names an error code (`… RELAY_UNREACHABLE …`), if any. */
export function lastError(path: string): string | undefined {
  return logTail(path, 200)
    .reverse()
    .find((l) => /\b[A-Z]{2,}_[A-Z_]{2,}\b/.test(l));
}
