// What the command-hook shims leave behind when they fail open (D15): the shell shim and
// `aep-steer hook` answer the agent neutrally and append one line per hook they could not
// deliver to `hook-trace` in the state directory (time, where, outcome, why; never the secret),
// and keep `hook-unreachable` while the last hook failed. The adapter, `aep-steer doctor` and the
// end-to-end harness read them, so a hook that went unsteered is never silent afterwards.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';

export const TRACE_FILE = 'hook-trace';
/** Present while the last hook the shell shim ran could not reach the adapter. */
export const OUTAGE_FILE = 'hook-unreachable';
/** The shell shim moves a full trace aside past this size; the writer here does the same. */
const TRACE_MAX = 64 * 1024;

export interface TraceLine {
  time: string;
  /** host:port the hook was posted to. */
  where: string;
  /** `failed curl=7 http=000` (the Node fallback: `failed http=…`), `skipped`, `ok …` (with AEP_HOOK_TRACE=all). */
  outcome: string;
  why: string;
}

export const tracePath = (dir: string): string => join(dir, TRACE_FILE);

const failedLine = (t: TraceLine): boolean => !t.outcome.startsWith('ok');

/** Appends one line as the shell shim writes it (mode 600; a trace that cannot be written costs nothing). */
export function appendTrace(dir: string, line: Omit<TraceLine, 'time'>, now = new Date()): void {
  const file = tracePath(dir);
  const text = `${now.toISOString().replace(/\.\d+Z$/, 'Z')} ${line.where} ${line.outcome} ${line.why}\n`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (existsSync(file) && statSync(file).size > TRACE_MAX) renameSync(file, `${file}.1`);
    appendFileSync(file, text, { mode: 0o600 });
    if (failedLine({ ...line, time: '' })) writeFileSync(join(dir, OUTAGE_FILE), text, { mode: 0o600 });
    else rmSync(join(dir, OUTAGE_FILE), { force: true });
  } catch {
    // Nowhere to write: the hook still got its neutral reply.
  }
}

const OUTCOME = /^(\S+) (\S+) ((?:failed|ok)(?: [a-z]+=\S+)*|skipped) (.*)$/;

function parseTraceLine(text: string): TraceLine | undefined {
  const m = OUTCOME.exec(text);
  return m === null ? undefined : { time: m[1]!, where: m[2]!, outcome: m[3]!, why: m[4]! };
}

/** The trace, oldest first (the moved-aside part included); unreadable lines are skipped. */
export function readTrace(dir: string): TraceLine[] {
  const lines: TraceLine[] = [];
  for (const file of [`${tracePath(dir)}.1`, tracePath(dir)]) {
    if (!existsSync(file)) continue;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    for (const l of text.split('\n')) {
      const t = parseTraceLine(l);
      if (t !== undefined) lines.push(t);
    }
  }
  return lines;
}

/** The failed hooks in the trace, and the last one's line while the outage lasts (no hook got through since). */
export function shimOutage(dir: string): { failed: TraceLine[]; current: TraceLine | undefined } {
  const failed = readTrace(dir).filter(failedLine);
  let current: TraceLine | undefined;
  const marker = join(dir, OUTAGE_FILE);
  if (existsSync(marker)) {
    try {
      current = parseTraceLine(readFileSync(marker, 'utf8').trim());
    } catch {
      current = undefined;
    }
  }
  return { failed, current };
}

/** One sentence about an outage, or undefined when the last hook got through. */
export function describeOutage(dir: string): string | undefined {
  const { failed, current } = shimOutage(dir);
  if (current === undefined) return undefined;
  const count = `${failed.length} failed hook${failed.length === 1 ? '' : 's'} in ${tracePath(dir)}`;
  return `the last hook (${current.time}) could not reach the adapter on ${current.where}: ${current.why}; ${count}`;
}
