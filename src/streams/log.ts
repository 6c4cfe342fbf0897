// The adapter's own event log (D11): append-only JSONL, one record per line, one write and one
// fsync per batch. A process killed mid-write leaves at most a torn last line; reading reports
// it (LOG_TORN_RECORD) and opening for append cuts it off so later records stay whole.
import { closeSync, existsSync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { SteeringError, type AepEvent } from '../protocol/index.js';
import type { SessionInput } from '../machines/session-types.js';

/**
 * - `in`: one input as it reached a session actor (commands verbatim inside); replay feeds these.
 * - `ev`: one event the adapter emitted; `ack` is the command's dedupe key when it is an ack.
 * - `flight`: D12 journal, written before the reply that carries these instructions.
 */
export type LogRecord =
  | { k: 'in'; s: string; i: SessionInput }
  | { k: 'ev'; e: AepEvent; ack?: string }
  | { k: 'flight'; s: string; hook: string; ids: string[] };

export interface ReadResult {
  records: LogRecord[];
  /** Byte length of the whole, readable prefix. */
  goodBytes: number;
  problems: SteeringError[];
}

const isRecord = (v: unknown): v is LogRecord =>
  typeof v === 'object' && v !== null && ['in', 'ev', 'flight'].includes((v as { k?: unknown }).k as string);

/** Parses log text; a broken line is reported and skipped, never thrown. */
export function parseLog(text: string): ReadResult {
  const records: LogRecord[] = [];
  const problems: SteeringError[] = [];
  let offset = 0;
  let goodBytes = 0;
  let lineNo = 0;
  while (offset < text.length) {
    const nl = text.indexOf('\n', offset);
    const last = nl === -1;
    const line = text.slice(offset, last ? text.length : nl);
    lineNo += 1;
    let parsed: unknown;
    let ok = false;
    if (!last) {
      try {
        parsed = JSON.parse(line);
        ok = isRecord(parsed);
      } catch {
        ok = false;
      }
    }
    if (ok) {
      records.push(parsed as LogRecord);
      goodBytes = Buffer.byteLength(text.slice(0, nl + 1));
    } else if (line.length > 0) {
      problems.push(new SteeringError('LOG_TORN_RECORD', `event log line ${lineNo} is ${last ? 'torn (no line end)' : 'not a readable record'}; skipped`));
    }
    offset = last ? text.length : nl + 1;
  }
  return { records, goodBytes, problems };
}

export function readEventLog(path: string): ReadResult {
  if (!existsSync(path)) return { records: [], goodBytes: 0, problems: [] };
  return parseLog(readFileSync(path, 'utf8'));
}

export interface EventLog {
  readonly path: string;
  /** Writes the batch as one append and makes it durable before returning. Throws LOG_WRITE_FAILED. */
  append(records: readonly LogRecord[]): void;
  close(): void;
}

/** Opens the log for appending, after cutting a torn tail; returns what it already held. */
export function openEventLog(path: string, opts: { fsync?: boolean } = {}): { log: EventLog; existing: ReadResult } {
  mkdirSync(dirname(path), { recursive: true });
  const existing = readEventLog(path);
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
  // Cut after the last whole line only when the tail is torn; a bad middle line stays for audit.
  const size = existsSync(path) ? readFileSync(path).length : 0;
  const tailTorn = existing.problems.some((p) => p.message.includes('torn'));
  if (tailTorn && existing.goodBytes < size) ftruncateSync(fd, existing.goodBytes);
  let position = tailTorn ? existing.goodBytes : size;
  const sync = opts.fsync ?? true;
  let closed = false;
  const log: EventLog = {
    path,
    append(records) {
      if (records.length === 0) return;
      if (closed) throw new SteeringError('LOG_WRITE_FAILED', `event log ${path} is closed`);
      const buf = Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');
      try {
        let done = 0;
        while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, position + done);
        position += buf.length;
        if (sync) fsyncSync(fd);
      } catch (cause) {
        throw new SteeringError('LOG_WRITE_FAILED', `cannot append to event log ${path}`, { cause });
      }
    },
    close() {
      if (closed) return;
      closed = true;
      closeSync(fd);
    },
  };
  return { log, existing };
}
