// Group commit (D11): batches from concurrent steps share one write and one fsync, and each
// caller still waits for the fsync that covers its own batch. Fail closed (D22): a failed write
// refuses, with it, every batch already queued behind it (they were stepped on top of the
// refused one); the owner hears of it synchronously, before any caller, so it can roll its
// state back first.
import { fdatasyncSync } from 'node:fs';
import { SteeringError } from '../protocol/index.js';
import type { ChainHead } from '../protocol/chain.js';
import type { LogFile, SyncFn } from './log-file.js';
import { encode, type LogRecord } from './log-format.js';

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

interface Queued {
  buf: Buffer;
  /** The chain's head after this batch's last record (D47). */
  chain: ChainHead;
  hooks?: CommitHooks;
  /** When a lazy batch was queued (`performance.now()`); absent for a batch that goes at once. */
  lazySince?: number;
  /** Set when a synchronous append already tried to write this batch and failed. */
  error?: SteeringError;
  resolve: () => void;
  reject: (e: SteeringError) => void;
}

export interface CommitOptions {
  /** fsync each batch. */
  durable: boolean;
  syncFd: SyncFn;
  lazyMs: number;
  /** Hears of every refused write synchronously, before any caller does (D22 rollback). */
  onRefused: (err: SteeringError) => void;
}

export class GroupCommit {
  /** True from the moment a drain is scheduled until it finds nothing left to write. */
  draining = false;
  private pending: Queued[] = [];
  /** Ends a lazy wait early: a batch that goes at once, or close. */
  wake: (() => void) | undefined;
  /**
   * The chain's head after the last batch encoded (D47): batches are linked as they queue, in
   * call order, which is the order they reach the file; a refused write takes this back.
   */
  private chain: ChainHead;

  constructor(
    private readonly file: LogFile,
    private readonly opts: CommitOptions,
  ) {
    this.chain = file.chain;
  }

  idle(): boolean {
    return !this.draining && this.pending.length === 0;
  }

  /**
   * Writes the batch as one append and makes it durable before returning; batches queued for a
   * group commit were called first, so they go to the file first.
   */
  append(records: readonly LogRecord[]): { gen: number; start: number; end: number } {
    const file = this.file;
    if (records.length === 0) return { gen: file.generation, start: file.position, end: file.position };
    if (file.closed) throw new SteeringError('LOG_WRITE_FAILED', `event log ${file.path} is closed`);
    // The drain still settles the queued batches, so their callers hear back in call order.
    const own = encode(records, this.chain);
    const buf = Buffer.concat([...this.pending.map((q) => q.buf), own.buf]);
    const start = file.position;
    try {
      file.writeAll(buf);
      if (this.opts.durable) fdatasyncSync(file.fd);
      file.syncedEnd = file.position;
      file.chain = own.at;
      this.chain = own.at;
    } catch (cause) {
      file.cutBack(start);
      this.chain = file.chain;
      const err = file.writeFailed(cause);
      for (const q of this.pending) q.error = err;
      this.opts.onRefused(err);
      throw err;
    }
    let at = start;
    for (const q of this.pending) {
      q.hooks?.durable?.({ gen: file.generation, start: at, end: at + q.buf.length });
      at += q.buf.length;
      q.buf = Buffer.alloc(0);
      delete q.hooks;
      delete q.lazySince;
    }
    // Written and synced here: the drain only settles them, without waiting.
    this.wake?.();
    return { gen: file.generation, start: at, end: file.position };
  }

  /** Queues the batch; resolves once it is durable (see EventLog.commit). */
  commit(records: readonly LogRecord[], hooks?: CommitHooks): Promise<void> {
    const file = this.file;
    if (file.closed) return Promise.reject(new SteeringError('LOG_WRITE_FAILED', `event log ${file.path} is closed`));
    let buf: Buffer;
    const before = this.chain;
    try {
      ({ buf, at: this.chain } = encode(records, before));
    } catch (cause) {
      this.chain = before;
      return Promise.reject(file.writeFailed(cause));
    }
    const chain = this.chain;
    const lazy = hooks?.lazy === true;
    const done = new Promise<void>((resolve, reject) =>
      this.pending.push({
        buf,
        chain,
        resolve,
        reject,
        ...(hooks ? { hooks } : {}),
        ...(lazy ? { lazySince: performance.now() } : {}),
      }),
    );
    if (!lazy) this.wake?.();
    if (!this.draining) {
      this.draining = true;
      // Start after the current synchronous burst, so steps stepped together share the first write.
      queueMicrotask(() => void this.drain());
    }
    return done;
  }

  private syncOnce(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.opts.syncFd(this.file.fd, (err) => (err ? reject(err) : resolve()));
    });
  }

  /** A refused write also refuses what queued behind it; the owner rolls back before anyone hears. */
  private refuse(batch: Queued[], err: SteeringError): void {
    const behind = this.pending;
    this.pending = [];
    // Every batch linked on top of the refused one goes with it: the chain resumes from the file.
    this.chain = this.file.chain;
    this.opts.onRefused(err);
    for (const q of [...batch, ...behind]) q.reject(q.error ?? err);
  }

  /** Waits out a lazy batch's window, unless woken first. */
  private sleep(wait: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve();
      }, wait);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
    });
  }

  // One fsync at a time; whatever queued up meanwhile goes out as the next write + fsync, so
  // concurrent sessions share syncs while each caller still waits for its own (D4, D9, D12).
  private async drain(): Promise<void> {
    const file = this.file;
    while (this.pending.length > 0) {
      const wait = this.lazyWait();
      if (wait > 0) {
        await this.sleep(wait);
        continue;
      }
      const batch = this.pending;
      this.pending = [];
      const refused = batch.find((q) => q.error)?.error;
      if (refused) {
        this.refuse(batch, refused);
        continue;
      }
      const start = file.position;
      const gen = file.generation;
      try {
        const buf = batch.length === 1 ? batch[0]!.buf : Buffer.concat(batch.map((q) => q.buf));
        if (buf.length > 0) {
          file.writeAll(buf);
          if (this.opts.durable) await this.syncOnce();
          file.syncedEnd = file.position;
          file.chain = batch.at(-1)!.chain;
        }
      } catch (cause) {
        // The write landed but its sync failed: what the file holds is unknown, so cut it.
        file.cutBack(start);
        this.refuse(batch, file.writeFailed(cause));
        continue;
      }
      let at = start;
      for (const q of batch) {
        q.hooks?.durable?.({ gen, start: at, end: at + q.buf.length });
        at += q.buf.length;
      }
      for (const q of batch) q.resolve();
    }
    this.draining = false;
    if (file.closed) file.closeFd();
  }

  /** How long the drain may still wait: only while every queued batch is lazy and the log is open. */
  private lazyWait(): number {
    if (this.file.closed || !this.opts.durable || this.pending.some((q) => q.lazySince === undefined)) return 0;
    // Batches queue in call order, so the first waited longest.
    return Math.ceil(this.pending[0]!.lazySince! + this.opts.lazyMs - performance.now());
  }
}
