// The adapter's own event log (D11): append-only JSONL, one record per line. Batches from
// concurrent steps share one write and one fsync (group commit); each caller still waits for
// the fsync that covers its own batch. A process killed mid-write leaves at most a torn last
// line; reading reports it (LOG_TORN_RECORD) and opening for append cuts it off so later
// records stay whole.
import { closeSync, existsSync, fstatSync, fsync, fsyncSync, ftruncateSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
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
  /**
   * Group commit (D11): queues the batch and resolves once it is durable. Batches land in call
   * order; every batch queued while an fsync runs is written and synced together by the next
   * one. An empty batch resolves after every batch queued before it. Rejects LOG_WRITE_FAILED.
   */
  commit(records: readonly LogRecord[]): Promise<void>;
  /** Stops taking records; batches already queued are still written. Resolves once the file is closed. */
  close(): Promise<void>;
}

/** Makes what was written to `fd` durable; `fs.fsync` unless replaced. */
export type SyncFn = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;

export interface EventLogOptions {
  /** fsync each batch (default true). */
  fsync?: boolean;
  /** How a batch is made durable (default `fs.fsync`); only called when `fsync` is on. */
  sync?: SyncFn;
}

interface Queued {
  buf: Buffer;
  /** Set when a synchronous append already tried to write this batch and failed. */
  error?: SteeringError;
  resolve: () => void;
  reject: (e: SteeringError) => void;
}

const encode = (records: readonly LogRecord[]): Buffer =>
  records.length === 0 ? Buffer.alloc(0) : Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

/** Opens the log for appending, after cutting a torn tail; returns what it already held. */
export function openEventLog(path: string, opts: EventLogOptions = {}): { log: EventLog; existing: ReadResult } {
  mkdirSync(dirname(path), { recursive: true });
  const existing = readEventLog(path);
  const fd = openSync(path, existsSync(path) ? 'r+' : 'w+');
  // Cut after the last whole line only when the tail is torn; a bad middle line stays for audit.
  const size = fstatSync(fd).size;
  const tailTorn = existing.problems.some((p) => p.message.includes('torn'));
  if (tailTorn && existing.goodBytes < size) ftruncateSync(fd, existing.goodBytes);
  let position = tailTorn ? existing.goodBytes : size;
  const durable = opts.fsync ?? true;
  const syncFd = opts.sync ?? fsync;
  let closed = false;
  let fdClosed = false;
  /** True from the moment a drain is scheduled until it finds nothing left to write. */
  let draining = false;
  let pending: Queued[] = [];
  let onClosed: (() => void) | undefined;
  const whenClosed = new Promise<void>((resolve) => {
    onClosed = resolve;
  });

  const writeFailed = (cause: unknown) => new SteeringError('LOG_WRITE_FAILED', `cannot append to event log ${path}`, { cause });

  /** Writes at the current end; a failed write is cut off again, so a refused batch never reappears on replay. */
  function writeAll(buf: Buffer): void {
    let done = 0;
    try {
      while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done, position + done);
    } catch (cause) {
      try {
        ftruncateSync(fd, position);
      } catch {
        // The torn tail stays; reading reports it and the next open cuts it (LOG_TORN_RECORD).
      }
      throw cause;
    }
    position += buf.length;
  }

  function closeFd(): void {
    if (fdClosed) return;
    fdClosed = true;
    closeSync(fd);
    onClosed?.();
  }

  const syncOnce = () =>
    new Promise<void>((resolve, reject) => {
      syncFd(fd, (err) => (err ? reject(err) : resolve()));
    });

  // One fsync at a time; whatever queued up meanwhile goes out as the next write + fsync, so
  // concurrent sessions share syncs while each caller still waits for its own (D4, D9, D12).
  async function drain(): Promise<void> {
    while (pending.length > 0) {
      const batch = pending;
      pending = [];
      const refused = batch.find((q) => q.error)?.error;
      if (refused) {
        for (const q of batch) q.reject(q.error ?? refused);
        continue;
      }
      try {
        const buf = batch.length === 1 ? batch[0]!.buf : Buffer.concat(batch.map((q) => q.buf));
        if (buf.length > 0) {
          writeAll(buf);
          if (durable) await syncOnce();
        }
      } catch (cause) {
        const err = writeFailed(cause);
        for (const q of batch) q.reject(err);
        continue;
      }
      for (const q of batch) q.resolve();
    }
    draining = false;
    if (closed) closeFd();
  }

  const log: EventLog = {
    path,
    append(records) {
      if (records.length === 0) return;
      if (closed) throw new SteeringError('LOG_WRITE_FAILED', `event log ${path} is closed`);
      // Batches queued for a group commit were called first, so they go to the file first; the
      // drain still settles them, so their callers hear back in call order.
      const buf = Buffer.concat([...pending.map((q) => q.buf), encode(records)]);
      try {
        writeAll(buf);
        if (durable) fsyncSync(fd);
      } catch (cause) {
        const err = writeFailed(cause);
        for (const q of pending) q.error = err;
        throw err;
      }
      for (const q of pending) q.buf = Buffer.alloc(0);
    },
    commit(records) {
      if (closed) return Promise.reject(new SteeringError('LOG_WRITE_FAILED', `event log ${path} is closed`));
      let buf: Buffer;
      try {
        buf = encode(records);
      } catch (cause) {
        return Promise.reject(writeFailed(cause));
      }
      const done = new Promise<void>((resolve, reject) => pending.push({ buf, resolve, reject }));
      if (!draining) {
        draining = true;
        // Start after the current synchronous burst, so steps stepped together share the first write.
        queueMicrotask(() => void drain());
      }
      return done;
    },
    close() {
      if (!closed) {
        closed = true;
        if (!draining) closeFd();
      }
      return whenClosed;
    },
  };
  return { log, existing };
}
