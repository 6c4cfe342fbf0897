// The event log's format (D11, D24): one JSON record per line, what each kind of record holds,
// reading a log file back (a broken line is reported and skipped, never thrown), and where a
// generation's segment file lives. Writing the file is log.ts's (log-file.ts, log-commit.ts).
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isAscii } from 'node:buffer';
import { SteeringError, eventText, type AepEvent } from '../protocol/index.js';
import type { SessionInput } from '../machines/session-input.js';

/**
 * - `in`: one input as it reached a session actor (commands verbatim inside); replay feeds these.
 * - `ev`: one event the adapter emitted; `ack` is the command's dedupe key when it is an ack.
 * - `flight`: D12 journal, written before the reply that carries these instructions.
 */
export type LogRecord =
  | { k: 'in'; s: string; i: SessionInput }
  | { k: 'ev'; e: AepEvent; ack?: string }
  | { k: 'flight'; s: string; hook: string; ids: string[] };

/** Lines that frame the log itself and carry nothing to replay: a segment header, a write probe. */
export type FrameRecord = { k: 'seg'; g: number } | { k: 'mark'; at: number };

export interface ReadResult {
  records: LogRecord[];
  /** Byte length of the whole, readable prefix. */
  goodBytes: number;
  problems: SteeringError[];
  /** The generation named by the segment header; 0 for a file without one. */
  generation: number;
}

/** A place in the log: a generation and a byte offset inside its file. */
export interface LogPosition {
  gen: number;
  offset: number;
}

const RECORD_KINDS = new Set(['in', 'ev', 'flight']);
const FRAME_KINDS = new Set(['seg', 'mark']);
const NL = 0x0a;

const kindOf = (v: unknown): string | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && typeof (v as { k?: unknown }).k === 'string'
    ? (v as { k: string }).k
    : undefined;

/**
 * Sees each record as it is read, with the byte offset just past its line and the line's text.
 * The text may be a view into the whole file's: copy what is kept beyond the call.
 */
export type RecordFn = (r: LogRecord, end: number, line: string) => void;

/**
 * Parses log bytes in one pass (D24: linear in the file's size); a broken line is reported and
 * skipped, never thrown. `onRecord` sees each record as it is read; with `keep` false the
 * records are only handed to it, not collected (a start replays a log without holding it whole).
 */
export function parseLog(input: string | Buffer, onRecord?: RecordFn, keep = true): ReadResult {
  const buf = typeof input === 'string' ? Buffer.from(input) : input;
  // An all-ASCII log (the usual one) is decoded once and read as slices, a byte a character:
  // no string per line to allocate and collect. Anything else is decoded line by line.
  const text = isAscii(buf) ? buf.toString('latin1') : undefined;
  const records: LogRecord[] = [];
  const problems: SteeringError[] = [];
  let offset = 0;
  let goodBytes = 0;
  let lineNo = 0;
  let generation = 0;
  while (offset < buf.length) {
    const nl = text !== undefined ? text.indexOf('\n', offset) : buf.indexOf(NL, offset);
    const last = nl === -1;
    const end = last ? buf.length : nl;
    lineNo += 1;
    let parsed: unknown;
    let kind: string | undefined;
    let line = '';
    if (!last) {
      try {
        line = text !== undefined ? text.slice(offset, end) : buf.toString('utf8', offset, end);
        parsed = JSON.parse(line);
        kind = kindOf(parsed);
      } catch {
        kind = undefined;
      }
    }
    if (kind !== undefined && RECORD_KINDS.has(kind)) {
      if (keep) records.push(parsed as LogRecord);
      goodBytes = nl + 1;
      onRecord?.(parsed as LogRecord, nl + 1, line);
    } else if (kind !== undefined && FRAME_KINDS.has(kind)) {
      if (kind === 'seg' && lineNo === 1) generation = Number((parsed as { g?: unknown }).g) || 0;
      goodBytes = nl + 1;
    } else if (end > offset) {
      problems.push(
        new SteeringError(
          'LOG_TORN_RECORD',
          `event log line ${lineNo} is ${last ? 'torn (no line end)' : 'not a readable record'}; skipped`,
        ),
      );
    }
    offset = last ? buf.length : nl + 1;
  }
  return { records, goodBytes, problems, generation };
}

/** Reads a log file; with `onRecord`, its records are handed over as read and not collected. */
export function readEventLog(path: string, onRecord?: RecordFn): ReadResult {
  if (!existsSync(path)) return { records: [], goodBytes: 0, problems: [], generation: 0 };
  return parseLog(readFileSync(path), onRecord, onRecord === undefined);
}

/** The file an archived generation lives in. */
export const segmentPath = (path: string, gen: number): string => `${path}.seg-${String(gen).padStart(6, '0')}`;

/** Archived generations next to `path`, oldest first. */
export function archivedGenerations(path: string, list: (dir: string) => string[]): number[] {
  const prefix = `${basename(path)}.seg-`;
  return list(dirname(path))
    .filter((f) => f.startsWith(prefix) && /^\d+$/.test(f.slice(prefix.length)))
    .map((f) => Number(f.slice(prefix.length)))
    .sort((a, b) => a - b);
}

/** The generation a log file's header names (0 without one or without the file). */
export function headerGeneration(path: string): number {
  if (!existsSync(path)) return 0;
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(64);
    const n = readSync(fd, buf, 0, 64, 0);
    const line = buf.toString('utf8', 0, n).split('\n')[0] ?? '';
    const m = /^\{"k":"seg","g":(\d+)\}$/.exec(line);
    return m ? Number(m[1]) : 0;
  } finally {
    closeSync(fd);
  }
}

/** One record's line; an event record reuses its event's text (the same JSON as stringifying the record). */
const line = (r: LogRecord | FrameRecord): string =>
  r.k === 'ev'
    ? `{"k":"ev","e":${eventText(r.e)}${r.ack === undefined ? '' : `,"ack":${JSON.stringify(r.ack)}`}}`
    : JSON.stringify(r);

export const encode = (records: readonly (LogRecord | FrameRecord)[]): Buffer => {
  if (records.length === 0) return Buffer.alloc(0);
  let text = '';
  for (const r of records) text += `${line(r)}\n`;
  return Buffer.from(text);
};

export const siblingPath = (path: string, suffix: string): string => join(dirname(path), `${basename(path)}.${suffix}`);
