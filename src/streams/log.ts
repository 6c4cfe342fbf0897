// The adapter's own event log (D11): append-only JSONL, one record per line (log-format.ts).
// Batches from concurrent steps share one write and one fsync (group commit, log-commit.ts);
// each caller still waits for the fsync that covers its own batch. A process killed mid-write
// leaves at most a torn last line; reading reports it (LOG_TORN_RECORD) and opening for append
// cuts it off so later records stay whole.
// Fail closed (D22): a failed write is cut off again and refuses, with it, every batch already
// queued behind it (they were stepped on top of the refused one); the owner hears of it
// synchronously, before any caller, so it can roll its state back first.
// Segments (D24): `rotate()` archives the active file as `<path>.seg-<generation>` and starts the
// next generation, whose first line is a `seg` header; a snapshot covers everything before it.
import { existsSync, fdatasync, fstatSync, fsyncSync, ftruncateSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { SteeringError } from '../protocol/index.js';
import type { ChainHead } from '../protocol/chain.js';
import { GroupCommit, LAZY_SYNC_MS, type CommitHooks } from './log-commit.js';
import { defaultWrite, LogFile, type SyncFn, type WriteFn } from './log-file.js';
import {
  readEventLog,
  segHeader,
  type HeadSigner,
  type LogPosition,
  type LogRecord,
  type ReadResult,
  type RecordFn,
} from './log-format.js';

// The log's parts, re-exported for the importers of this file.
export { syncDir, type SyncFn, type WriteFn } from './log-file.js';
export {
  archivedGenerations,
  headerGeneration,
  parseLog,
  readEventLog,
  segmentPath,
  siblingPath,
  type LogPosition,
  type LogRecord,
  type ReadResult,
} from './log-format.js';

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
  /** Where the chain stands before a log this call creates (after a snapshot whose segments are gone, D47). */
  chain?: ChainHead;
  /** D47: signs the head each generation's header names (the adapter's key). */
  signHead?: HeadSigner;
  /**
   * Takes each record the file already holds as it is read; `existing.records` then stays empty
   * (a start replays its log without holding all of it, D11).
   */
  onRecord?: RecordFn;
}

/** Opens the log for appending, after cutting a torn tail; returns what it already held. */
export function openEventLog(path: string, opts: EventLogOptions = {}): { log: EventLog; existing: ReadResult } {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fresh = !existsSync(path);
  const existing = readEventLog(path, opts.onRecord);
  const fd = openSync(path, fresh ? 'w+' : 'r+', 0o600);
  if (fresh && (opts.generation ?? 0) > 0) {
    const at = opts.chain ?? existing.chain;
    const header = segHeader(opts.generation!, at, opts.signHead);
    writeSync(fd, header, 0, header.length, 0);
    fsyncSync(fd);
    existing.generation = opts.generation!;
    existing.goodBytes = header.length;
    existing.chain = at;
  }
  // Cut after the last whole line only when the tail is torn; a bad middle line stays for audit.
  const size = fstatSync(fd).size;
  const tailTorn = existing.problems.some((p) => p.message.includes('torn'));
  if (tailTorn && existing.goodBytes < size) ftruncateSync(fd, existing.goodBytes);
  const position = tailTorn ? existing.goodBytes : size;
  if (!fresh && existing.generation === 0 && (opts.headerless ?? 0) > 0) existing.generation = opts.headerless!;
  const file = new LogFile(path, fd, position, existing.generation, opts.write ?? defaultWrite);
  file.chain = existing.chain;
  file.signHead = opts.signHead;
  const durable = opts.fsync ?? true;
  const commits = new GroupCommit(file, {
    durable,
    // fdatasync: an append's bytes and the file size it needs to be read back, without the
    // timestamps fsync also writes (the log never relies on those).
    syncFd: opts.sync ?? fdatasync,
    lazyMs: opts.lazyMs ?? LAZY_SYNC_MS,
    onRefused: (err) => opts.onRefused?.(err),
  });

  const log: EventLog = {
    path,
    get generation() {
      return file.generation;
    },
    end: () => ({ gen: file.generation, offset: file.position }),
    idle: () => commits.idle(),
    append: (records) => commits.append(records),
    commit: (records, hooks) => commits.commit(records, hooks),
    probe(at) {
      if (file.closed || !log.idle()) return false;
      return file.probe(at, durable);
    },
    rotate(beforeSwap) {
      if (!log.idle() || file.closed)
        throw new SteeringError('LOG_WRITE_FAILED', `event log ${path} cannot rotate while writing`);
      return file.rotate(durable, beforeSwap);
    },
    read: (gen, offset, maxBytes) => file.read(gen, offset, maxBytes),
    close() {
      if (!file.closed) {
        file.closed = true;
        // What waits to share an fsync goes now; the drain closes the file after it.
        commits.wake?.();
        if (!commits.draining) file.closeFd();
      }
      return file.whenClosed;
    },
  };
  return { log, existing };
}
