// The event log's active file: where the next record goes, what of it is durable, and its
// generation. A write that fails is cut off again, so a refused batch never reappears on
// replay; reads stop at what is durable, so nothing leaves that a failed sync may cut; a
// rotation (D24) makes the next generation's file durable before anything is renamed.
import {
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { SteeringError } from '../protocol/index.js';
import { FIRST, type ChainHead } from '../protocol/chain.js';
import { encodeFrame, segHeader, segmentPath, type HeadSigner } from './log-format.js';

/** Makes what was written to `fd` durable; `fs.fdatasync` unless replaced. */
export type SyncFn = (fd: number, done: (err: NodeJS.ErrnoException | null) => void) => void;
/** Writes to `fd` at `position`; `fs.writeSync` unless replaced (the fault suite injects ENOSPC here). */
export type WriteFn = (fd: number, buf: Buffer, offset: number, length: number, position: number) => number;

export const defaultWrite: WriteFn = (f, b, o, l, p) => writeSync(f, b, o, l, p);

export class LogFile {
  /** The end of what is durable: reads stop here, so nothing leaves that a failed sync may cut. */
  syncedEnd: number;
  /** Stops taking records (`close`); batches already queued are still written. */
  closed = false;
  private fdClosed = false;
  private onClosed: (() => void) | undefined;
  readonly whenClosed = new Promise<void>((resolve) => {
    this.onClosed = resolve;
  });
  /** D47: the chain's head after the last record written (a cut-back write restores it). */
  chain: ChainHead = FIRST;
  /** D47: signs each new generation's head in its header. */
  signHead: HeadSigner | undefined;

  constructor(
    readonly path: string,
    public fd: number,
    /** Where the next record will go. */
    public position: number,
    public generation: number,
    private readonly writeFd: WriteFn,
  ) {
    this.syncedEnd = position;
  }

  writeFailed(cause: unknown): SteeringError {
    return new SteeringError(
      'LOG_WRITE_FAILED',
      `cannot append to event log ${this.path}: ${(cause as Error)?.message ?? String(cause)}`,
      { cause },
    );
  }

  /** Writes at the current end; a failed write is cut off again, so a refused batch never reappears on replay. */
  writeAll(buf: Buffer): void {
    let done = 0;
    try {
      while (done < buf.length) done += this.writeFd(this.fd, buf, done, buf.length - done, this.position + done);
    } catch (cause) {
      try {
        ftruncateSync(this.fd, this.position);
      } catch {
        // The torn tail stays; reading reports it and the next open cuts it (LOG_TORN_RECORD).
      }
      throw cause;
    }
    this.position += buf.length;
  }

  /** Cuts the file back to `start` after a write whose sync failed (its bytes may or may not be there). */
  cutBack(start: number): void {
    if (this.position <= start) return;
    try {
      ftruncateSync(this.fd, start);
    } catch {
      // The torn tail stays; reading reports it and the next open cuts it (LOG_TORN_RECORD).
    }
    this.position = start;
  }

  closeFd(): void {
    if (this.fdClosed) return;
    this.fdClosed = true;
    closeSync(this.fd);
    this.onClosed?.();
  }

  /** Writes and syncs a one-line probe; true when the file takes appends again (D22). */
  probe(at: number, durable: boolean): boolean {
    const start = this.position;
    try {
      this.writeAll(encodeFrame({ k: 'mark', at }));
      if (durable) fsyncSync(this.fd);
      this.syncedEnd = this.position;
      return true;
    } catch {
      this.cutBack(start);
      return false;
    }
  }

  /**
   * Archives the active file as the current generation's segment and starts the next one. The
   * next file, header and all, is durable before `beforeSwap(next)` runs and before any file is
   * renamed: a full disk or a failed snapshot throws and leaves the log exactly as it was.
   */
  rotate(durable: boolean, beforeSwap?: (next: number) => void): number {
    const path = this.path;
    const next = this.generation + 1;
    const nextPath = `${path}.next`;
    // The header carries the head, so the chain checks across the rename and any compaction (D47).
    const header = segHeader(next, this.chain, this.signHead);
    let nextFd: number | undefined;
    try {
      nextFd = openSync(nextPath, 'w+', 0o600);
      let done = 0;
      while (done < header.length) done += this.writeFd(nextFd, header, done, header.length - done, done);
      fsyncSync(nextFd);
      beforeSwap?.(next);
    } catch (cause) {
      if (nextFd !== undefined) closeSync(nextFd);
      rmSync(nextPath, { force: true });
      throw new SteeringError('LOG_WRITE_FAILED', `event log ${path} cannot start generation ${next}`, { cause });
    }
    if (durable) fsyncSync(this.fd);
    closeSync(this.fd);
    renameSync(path, segmentPath(path, this.generation));
    renameSync(nextPath, path);
    syncDir(dirname(path));
    this.fd = nextFd;
    this.generation = next;
    this.position = header.length;
    this.syncedEnd = this.position;
    return this.generation;
  }

  /** Bytes of generation `gen` from `offset` up to what is durable (the active one included). */
  read(gen: number, offset: number, maxBytes: number): Buffer {
    const file = gen === this.generation ? undefined : segmentPath(this.path, gen);
    const limit = gen === this.generation ? this.syncedEnd : Infinity;
    const f = file === undefined ? this.fd : openSync(file, 'r');
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
  }
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
