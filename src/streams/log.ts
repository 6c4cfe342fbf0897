// The adapter's own event log (D11): append-only JSONL, one record per line. Batches from
// concurrent steps share one write and one fsync (group commit); each caller still waits for
// the fsync that covers its own batch. A process killed mid-write leaves at most a torn last
// line; reading reports it (LOG_TORN_RECORD) and opening for append cuts it off so later
// records stay whole.
// Fail closed (D22): a failed write is cut off again and refuses, with it, every batch already
// queued behind it (they were stepped on top of the refused one); the owner hears of it
// synchronously, before any caller, so it can roll its state back first.
// Segments (D24): `rotate()` archives the active file as `<path>.seg-<generation>` and starts the
// next generation, whose first line is a `seg` header; a snapshot covers everything before it.
import {
  closeSync,
  existsSync,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
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
type FrameRecord = { k: 'seg'; g: number } | { k: 'mark'; at: number };

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

export interface CommitHooks {
  /** Called synchronously once the batch is durable, before its promise resolves. */
  durable?: (range: { gen: number; start: number; end: number }) => void;
  /**
   * Nothing waits on this batch but its own events (a hook moment already answered): it may
   * wait up to `LAZY_SYNC_MS` so that the batches of the moments after it share its fsync. A
   * batch without it (an ack, a reply that carries instructions) goes at once and takes every
   * waiting batch with it, in call order.
   */
  lazy?: boolean;
}

/**
 * How long a lazy batch may wait for others. An fsync costs the adapter about 85 µs of CPU here
 * (2 cores, a virtual disk) and an agent's hooks come one at a time, so one fsync per hook was
 * most of the adapter's CPU per hook; a short wait shares it among the hooks of a burst.
 */
export const LAZY_SYNC_MS = 2;

export interface EventLog {
  readonly path: string;
  /** The generation being appended to. */
  readonly generation: number;
  /** Where the next record will go; everything before it is durable once no commit is pending. */
  end(): LogPosition;
  /** True when no batch waits to be written or synced. */
  idle(): boolean;
  /**
   * Writes the batch as one append and makes it durable before returning; returns where its
   * records landed. Throws LOG_WRITE_FAILED.
   */
  append(records: readonly LogRecord[]): { gen: number; start: number; end: number };
  /**
   * Group commit (D11): queues the batch and resolves once it is durable. Batches land in call
   * order; every batch queued while an fsync runs is written and synced together by the next
   * one. An empty batch resolves after every batch queued before it. Rejects LOG_WRITE_FAILED.
   */
  commit(records: readonly LogRecord[], hooks?: CommitHooks): Promise<void>;
  /** Writes and syncs a one-line probe; true when the log takes appends again (D22). */
  probe(at: number): boolean;
  /**
   * Archives the active file as the current generation's segment and starts the next one
   * (D24). Only while idle. The next file, header and all, is durable before `beforeSwap(next)`
   * runs (the caller makes its snapshot there) and before any file is renamed: a full disk or a
   * failed snapshot throws and leaves the log exactly as it was.
   */
  rotate(beforeSwap?: (next: number) => void): number;
  /** Bytes of generation `gen` from `offset` up to what is durable (the active one included). */
  read(gen: number, offset: number, maxBytes: number): Buffer;
  /** Stops taking records; batches already queued are still written. Resolves once the file is closed. */
  close(): Promise<void>;
}

/** Makes what was written to `fd` durable; `fs.fdatasync` unless replaced. */
export type SyncFn = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;
/** Writes to `fd` at `position`; `fs.writeSync` unless replaced (the fault suite injects ENOSPC here). */
export type WriteFn = (fd: number, buf: Buffer, offset: number, length: number, position: number) => number;

export interface EventLogOptions {
  /** fsync each batch (default true). */
  fsync?: boolean;
  /** How a batch is made durable (default `fs.fdatasync`); only called when `fsync` is on. */
  sync?: SyncFn;
  /** How bytes reach the file (default `fs.writeSync`). */
  write?: WriteFn;
  /** How long a lazy batch may wait for others to share its fsync (default `LAZY_SYNC_MS`). */
  lazyMs?: number;
  /** Hears of every refused write synchronously, before any caller does (D22 rollback). */
  onRefused?: (err: SteeringError) => void;
  /** Generation a log created by this call starts at (after a snapshot, D24); 0 writes no header. */
  generation?: number;
  /**
   * The generation an existing file without a header is (an older version could leave the
   * file after a snapshot headerless when the disk refused the header); its offsets stay as
   * they are, so the outbox's recorded positions in it still hold.
   */
  headerless?: number;
  /**
   * Takes each record the file already holds as it is read; `existing.records` then stays empty
   * (a start replays its log without holding all of it, D11).
   */
  onRecord?: RecordFn;
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

interface Queued {
  buf: Buffer;
  hooks?: CommitHooks;
  /** When a lazy batch was queued (`performance.now()`); absent for a batch that goes at once. */
  lazySince?: number;
  /** Set when a synchronous append already tried to write this batch and failed. */
  error?: SteeringError;
  resolve: () => void;
  reject: (e: SteeringError) => void;
}

/** One record's line; an event record reuses its event's text (the same JSON as stringifying the record). */
const line = (r: LogRecord | FrameRecord): string =>
  r.k === 'ev'
    ? `{"k":"ev","e":${eventText(r.e)}${r.ack === undefined ? '' : `,"ack":${JSON.stringify(r.ack)}`}}`
    : JSON.stringify(r);

const encode = (records: readonly (LogRecord | FrameRecord)[]): Buffer => {
  if (records.length === 0) return Buffer.alloc(0);
  let text = '';
  for (const r of records) text += `${line(r)}\n`;
  return Buffer.from(text);
};

/** Opens the log for appending, after cutting a torn tail; returns what it already held. */
export function openEventLog(path: string, opts: EventLogOptions = {}): { log: EventLog; existing: ReadResult } {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fresh = !existsSync(path);
  const existing = readEventLog(path, opts.onRecord);
  let fd = openSync(path, fresh ? 'w+' : 'r+', 0o600);
  if (fresh && (opts.generation ?? 0) > 0) {
    const header = encode([{ k: 'seg', g: opts.generation! }]);
    writeSync(fd, header, 0, header.length, 0);
    fsyncSync(fd);
    existing.generation = opts.generation!;
    existing.goodBytes = header.length;
  }
  // Cut after the last whole line only when the tail is torn; a bad middle line stays for audit.
  const size = fstatSync(fd).size;
  const tailTorn = existing.problems.some((p) => p.message.includes('torn'));
  if (tailTorn && existing.goodBytes < size) ftruncateSync(fd, existing.goodBytes);
  let position = tailTorn ? existing.goodBytes : size;
  /** The end of what is durable: reads stop here, so nothing leaves that a failed sync may cut. */
  let syncedEnd = position;
  if (!fresh && existing.generation === 0 && (opts.headerless ?? 0) > 0) existing.generation = opts.headerless!;
  let generation = existing.generation;
  const durable = opts.fsync ?? true;
  // fdatasync: an append's bytes and the file size it needs to be read back, without the
  // timestamps fsync also writes (the log never relies on those).
  const syncFd = opts.sync ?? fdatasync;
  const lazyMs = opts.lazyMs ?? LAZY_SYNC_MS;
  const writeFd: WriteFn = opts.write ?? ((f, b, o, l, p) => writeSync(f, b, o, l, p));
  let closed = false;
  let fdClosed = false;
  /** True from the moment a drain is scheduled until it finds nothing left to write. */
  let draining = false;
  let pending: Queued[] = [];
  /** Ends a lazy wait early: a batch that goes at once, or close. */
  let wake: (() => void) | undefined;
  let onClosed: (() => void) | undefined;
  const whenClosed = new Promise<void>((resolve) => {
    onClosed = resolve;
  });

  const writeFailed = (cause: unknown) =>
    new SteeringError(
      'LOG_WRITE_FAILED',
      `cannot append to event log ${path}: ${(cause as Error)?.message ?? String(cause)}`,
      { cause },
    );

  /** Writes at the current end; a failed write is cut off again, so a refused batch never reappears on replay. */
  function writeAll(buf: Buffer): void {
    let done = 0;
    try {
      while (done < buf.length) done += writeFd(fd, buf, done, buf.length - done, position + done);
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

  /** Cuts the file back to `start` after a write whose sync failed (its bytes may or may not be there). */
  function cutBack(start: number): void {
    if (position <= start) return;
    try {
      ftruncateSync(fd, start);
    } catch {
      // The torn tail stays; reading reports it and the next open cuts it (LOG_TORN_RECORD).
    }
    position = start;
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

  /** A refused write also refuses what queued behind it; the owner rolls back before anyone hears. */
  function refuse(batch: Queued[], err: SteeringError): void {
    const behind = pending;
    pending = [];
    opts.onRefused?.(err);
    for (const q of [...batch, ...behind]) q.reject(q.error ?? err);
  }

  // One fsync at a time; whatever queued up meanwhile goes out as the next write + fsync, so
  // concurrent sessions share syncs while each caller still waits for its own (D4, D9, D12).
  async function drain(): Promise<void> {
    while (pending.length > 0) {
      const wait = lazyWait();
      if (wait > 0) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(() => {
            wake = undefined;
            resolve();
          }, wait);
          wake = () => {
            clearTimeout(timer);
            wake = undefined;
            resolve();
          };
        });
        continue;
      }
      const batch = pending;
      pending = [];
      const refused = batch.find((q) => q.error)?.error;
      if (refused) {
        refuse(batch, refused);
        continue;
      }
      const start = position;
      const gen = generation;
      try {
        const buf = batch.length === 1 ? batch[0]!.buf : Buffer.concat(batch.map((q) => q.buf));
        if (buf.length > 0) {
          writeAll(buf);
          if (durable) await syncOnce();
          syncedEnd = position;
        }
      } catch (cause) {
        // The write landed but its sync failed: what the file holds is unknown, so cut it.
        cutBack(start);
        refuse(batch, writeFailed(cause));
        continue;
      }
      let at = start;
      for (const q of batch) {
        q.hooks?.durable?.({ gen, start: at, end: at + q.buf.length });
        at += q.buf.length;
      }
      for (const q of batch) q.resolve();
    }
    draining = false;
    if (closed) closeFd();
  }

  /** How long the drain may still wait: only while every queued batch is lazy and the log is open. */
  function lazyWait(): number {
    if (closed || !durable || pending.some((q) => q.lazySince === undefined)) return 0;
    // Batches queue in call order, so the first waited longest.
    return Math.ceil(pending[0]!.lazySince! + lazyMs - performance.now());
  }

  const log: EventLog = {
    path,
    get generation() {
      return generation;
    },
    end: () => ({ gen: generation, offset: position }),
    idle: () => !draining && pending.length === 0,
    append(records) {
      if (records.length === 0) return { gen: generation, start: position, end: position };
      if (closed) throw new SteeringError('LOG_WRITE_FAILED', `event log ${path} is closed`);
      // Batches queued for a group commit were called first, so they go to the file first; the
      // drain still settles them, so their callers hear back in call order.
      const buf = Buffer.concat([...pending.map((q) => q.buf), encode(records)]);
      const start = position;
      try {
        writeAll(buf);
        if (durable) fdatasyncSync(fd);
        syncedEnd = position;
      } catch (cause) {
        cutBack(start);
        const err = writeFailed(cause);
        for (const q of pending) q.error = err;
        opts.onRefused?.(err);
        throw err;
      }
      let at = start;
      for (const q of pending) {
        q.hooks?.durable?.({ gen: generation, start: at, end: at + q.buf.length });
        at += q.buf.length;
        q.buf = Buffer.alloc(0);
        delete q.hooks;
        delete q.lazySince;
      }
      // Written and synced here: the drain only settles them, without waiting.
      wake?.();
      return { gen: generation, start: at, end: position };
    },
    commit(records, hooks) {
      if (closed) return Promise.reject(new SteeringError('LOG_WRITE_FAILED', `event log ${path} is closed`));
      let buf: Buffer;
      try {
        buf = encode(records);
      } catch (cause) {
        return Promise.reject(writeFailed(cause));
      }
      const lazy = hooks?.lazy === true;
      const done = new Promise<void>((resolve, reject) =>
        pending.push({
          buf,
          resolve,
          reject,
          ...(hooks ? { hooks } : {}),
          ...(lazy ? { lazySince: performance.now() } : {}),
        }),
      );
      if (!lazy) wake?.();
      if (!draining) {
        draining = true;
        // Start after the current synchronous burst, so steps stepped together share the first write.
        queueMicrotask(() => void drain());
      }
      return done;
    },
    probe(at) {
      if (closed || !log.idle()) return false;
      const start = position;
      try {
        writeAll(encode([{ k: 'mark', at }]));
        if (durable) fsyncSync(fd);
        syncedEnd = position;
        return true;
      } catch {
        cutBack(start);
        return false;
      }
    },
    rotate(beforeSwap) {
      if (!log.idle() || closed)
        throw new SteeringError('LOG_WRITE_FAILED', `event log ${path} cannot rotate while writing`);
      const next = generation + 1;
      const nextPath = `${path}.next`;
      const header = encode([{ k: 'seg', g: next }]);
      let nextFd: number | undefined;
      try {
        nextFd = openSync(nextPath, 'w+', 0o600);
        let done = 0;
        while (done < header.length) done += writeFd(nextFd, header, done, header.length - done, done);
        fsyncSync(nextFd);
        beforeSwap?.(next);
      } catch (cause) {
        if (nextFd !== undefined) closeSync(nextFd);
        rmSync(nextPath, { force: true });
        throw new SteeringError('LOG_WRITE_FAILED', `event log ${path} cannot start generation ${next}`, { cause });
      }
      if (durable) fsyncSync(fd);
      closeSync(fd);
      renameSync(path, segmentPath(path, generation));
      renameSync(nextPath, path);
      syncDir(dirname(path));
      fd = nextFd;
      generation = next;
      position = header.length;
      syncedEnd = position;
      return generation;
    },
    read(gen, offset, maxBytes) {
      const file = gen === generation ? undefined : segmentPath(path, gen);
      const limit = gen === generation ? syncedEnd : Infinity;
      const f = file === undefined ? fd : openSync(file, 'r');
      try {
        const size = Math.min(limit, fstatSync(f).size);
        const n = Math.max(0, Math.min(maxBytes, size - offset));
        const buf = Buffer.alloc(n);
        let got = 0;
        while (got < n) {
          const r = readSync(f, buf, got, n - got, offset + got);
          if (r === 0) break;
          got += r;
        }
        return got === n ? buf : buf.subarray(0, got);
      } finally {
        if (file !== undefined) closeSync(f);
      }
    },
    close() {
      if (!closed) {
        closed = true;
        // What waits to share an fsync goes now; the drain closes the file after it.
        wake?.();
        if (!draining) closeFd();
      }
      return whenClosed;
    },
  };
  return { log, existing };
}

/** Makes a rename or a new file in `dir` durable. */
export function syncDir(dir: string): void {
  let d: number | undefined;
  try {
    d = openSync(dir, 'r');
    fsyncSync(d);
  } catch {
    // Some filesystems refuse fsync on a directory; the rename is then as durable as they make it.
  } finally {
    if (d !== undefined) closeSync(d);
  }
}

export const siblingPath = (path: string, suffix: string): string => join(dirname(path), `${basename(path)}.${suffix}`);
