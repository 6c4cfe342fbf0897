// The event log's format (D11, D24): one JSON record per line, what each kind of record holds,
// reading a log file back (a broken line is reported and skipped, never thrown), and where a
// generation's segment file lives. Writing the file is log.ts's (log-file.ts, log-commit.ts).
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { isAscii } from 'node:buffer';
import { SteeringError, eventText, type AepEvent } from '../protocol/index.js';
import { FIRST, lineHash, type ChainHead, type HeadSignature } from '../protocol/chain.js';
import type { SessionInput } from '../machines/session-input.js';

/**
 * - `in`: one input as it reached a session actor (commands verbatim inside); replay feeds these.
 * - `ev`: one event the adapter emitted; `ack` is the command's dedupe key when it is an ack.
 * - `flight`: D12 journal, written before the reply that carries these instructions.
 */
export type LogRecord = (
  | { k: 'in'; s: string; i: SessionInput }
  | { k: 'ev'; e: AepEvent; ack?: string }
  | { k: 'flight'; s: string; hook: string; ids: string[] }
) &
  Linked;

/**
 * D47: a record's place in the log's one hash chain, written as the line's last two keys: `n`
 * counts the log's records from 1 across every generation, `p` is the SHA-256 of the record line
 * before it (GENESIS for the first). Absent on records an older version wrote.
 */
interface Linked {
  n?: number;
  p?: string;
}

/**
 * Lines that frame the log itself and carry nothing to replay: a segment header, a write probe.
 * A header carries the chain's head where the generation starts (`n`, `h`), so the records
 * before it may be compacted away and the chain still checks from there (D24, D47); an adapter
 * with a key signs that head (`s`, by key id `key`), so a compacted log's start is vouched for.
 */
export type FrameRecord =
  | { k: 'seg'; g: number; n?: number; h?: string; s?: string; key?: string }
  | { k: 'mark'; at: number };

/** Signs the head a generation starts from, for its header (D47); absent: headers go unsigned. */
export type HeadSigner = (g: number, at: ChainHead) => HeadSignature;

/** A generation's header, its head signed when the log has a signer. */
export const segHeader = (g: number, at: ChainHead, sign: HeadSigner | undefined): Buffer =>
  encodeFrame({ k: 'seg', g, n: at.n, h: at.head, ...sign?.(g, at) });

export interface ReadResult {
  records: LogRecord[];
  /** Byte length of the whole, readable prefix. */
  goodBytes: number;
  problems: SteeringError[];
  /** The generation named by the segment header; 0 for a file without one. */
  generation: number;
  /** The chain's head after the file's last whole record (or its header's, or the first). */
  chain: ChainHead;
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
  let chain = FIRST;
  // Only the last record's line is hashed, once the file is read: the head is all a writer needs.
  let lastLine: [number, number] | undefined;
  let lastN: number | undefined;
  let count = 0;
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
      lastLine = [offset, nl];
      lastN = (parsed as Linked).n;
      count += 1;
      onRecord?.(parsed as LogRecord, nl + 1, line);
    } else if (kind !== undefined && FRAME_KINDS.has(kind)) {
      if (kind === 'seg' && lineNo === 1) {
        const seg = parsed as { g?: unknown; n?: unknown; h?: unknown };
        generation = Number(seg.g) || 0;
        if (Number.isInteger(seg.n) && typeof seg.h === 'string') chain = { n: seg.n as number, head: seg.h };
      }
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
  if (lastLine !== undefined) {
    const [from, to] = lastLine;
    const last = text !== undefined ? text.slice(from, to) : buf.toString('utf8', from, to);
    chain = { n: lastN ?? chain.n + count, head: lineHash(last) };
  }
  return { records, goodBytes, problems, generation, chain };
}

/** Reads a log file; with `onRecord`, its records are handed over as read and not collected. */
export function readEventLog(path: string, onRecord?: RecordFn): ReadResult {
  if (!existsSync(path)) return { records: [], goodBytes: 0, problems: [], generation: 0, chain: FIRST };
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
    // Room for a header with its chain keys and signature (D47).
    const buf = Buffer.alloc(384);
    const n = readSync(fd, buf, 0, 384, 0);
    const line = buf.toString('utf8', 0, n).split('\n')[0] ?? '';
    const m = /^\{"k":"seg","g":(\d+)(,"n":\d+,"h":"[0-9a-f]{64}"(,"s":"[A-Za-z0-9+/=]+","key":"[0-9a-f]+")?)?\}$/.exec(
      line,
    );
    return m ? Number(m[1]) : 0;
  } finally {
    closeSync(fd);
  }
}

/** A record's line up to its chain keys (without the closing brace); an event record reuses its event's text. */
function body(r: LogRecord): string {
  if (r.k === 'ev')
    return `{"k":"ev","e":${eventText(r.e)}${r.ack === undefined ? '' : `,"ack":${JSON.stringify(r.ack)}`}`;
  const { n: _n, p: _p, ...rest } = r;
  return JSON.stringify(rest).slice(0, -1);
}

/** Frame lines: a header or a probe, outside the chain. */
export const encodeFrame = (r: FrameRecord): Buffer => Buffer.from(`${JSON.stringify(r)}\n`);

/**
 * Records as lines, each linked to the one before (D47): `at` is the chain's head before the
 * first; returns the bytes and the head after the last.
 */
export function encode(records: readonly LogRecord[], at: ChainHead): { buf: Buffer; at: ChainHead } {
  if (records.length === 0) return { buf: Buffer.alloc(0), at };
  let text = '';
  let { n, head } = at;
  for (const r of records) {
    n += 1;
    const line = `${body(r)},"n":${n},"p":"${head}"}`;
    head = lineHash(line);
    text += `${line}\n`;
  }
  return { buf: Buffer.from(text), at: { n, head } };
}

export const siblingPath = (path: string, suffix: string): string => join(dirname(path), `${basename(path)}.${suffix}`);
