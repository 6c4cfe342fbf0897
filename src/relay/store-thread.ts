// A file store whose writes run on a worker thread (store-writer.ts). The relay's event loop
// hands its admissions to the writer and goes on: no SQLite statement or commit for them runs on
// the thread that parses, routes and fans out, so fan-out never waits for the store, and a
// command waits only for its own commit, off this thread (after socket writes, the store was the
// main thread's largest cost in a CPU profile of the fan-out bench).
// One batch is with the writer at a time; what arrives meanwhile joins the next one, so the
// batch grows with the load and a busy relay posts (and commits) less often.
// Reads keep the core's ordering rule ("every read flushes first"): a read made while batches
// are pending runs once the latest of them is committed; with none pending it runs at once. The
// relay's own connection reads the file (WAL readers see every commit).
import type { Worker } from 'node:worker_threads';
import { SteeringError } from '../protocol/errors.js';
import { engineOpener } from './sqlite.js';
import {
  GROUP_WRITE_MS,
  RelayStore,
  type Admission,
  type Maybe,
  type Position,
  type Replay,
  type SessionStore,
  type StoreHealth,
  type StoreOptions,
} from './store.js';
import { startWorker } from './worker-start.js';
import type { AuditPage, AuditPart } from './audit-rows.js';
import { FILE_STORE_ADVICE, isStoreUnavailable, StoreUnavailableError, type StoreFaults } from './store-fault.js';

/**
 * A batch as it crosses to the writer: every `raw` in one string (a raw text is one line) and
 * the rest flat, `[session, source, id, epoch, seq]` per admission, `null` for no position.
 * Copying two values costs the relay's thread a fraction of copying one object per event.
 */
export interface PackedBatch {
  raws: string;
  fields: (string | number | null)[];
}

export function pack(list: readonly Admission[]): PackedBatch {
  const fields: (string | number | null)[] = new Array(list.length * 5);
  const raws: string[] = new Array(list.length);
  for (let i = 0; i < list.length; i += 1) {
    const a = list[i]!;
    raws[i] = a.raw;
    fields[i * 5] = a.session;
    fields[i * 5 + 1] = a.source;
    fields[i * 5 + 2] = a.id;
    fields[i * 5 + 3] = a.epoch ?? null;
    fields[i * 5 + 4] = a.seq ?? null;
  }
  return { raws: raws.join('\n'), fields };
}

export function unpack(b: PackedBatch): Admission[] {
  const f = b.fields;
  return b.raws.split('\n').map((raw, i) => {
    const a: Admission = {
      session: f[i * 5] as string,
      source: f[i * 5 + 1] as string,
      id: f[i * 5 + 2] as string,
      raw,
    };
    if (f[i * 5 + 3] !== null) a.epoch = f[i * 5 + 3] as number;
    if (f[i * 5 + 4] !== null) a.seq = f[i * 5 + 4] as number;
    return a;
  });
}

export type WriterRequest =
  /** `after`: the batch posted before this one, still unanswered then; if it was refused, so is this one. */
  | { id: number; op: 'admit'; batch: PackedBatch; after?: number }
  | { id: number; op: 'open' }
  | { id: number; op: 'probe' }
  | { id: number; op: 'checkpoint' }
  | { id: number; op: 'close' };

/**
 * `fault`: a write the file cannot make now (D38), refused `store-unavailable`. `checkpoint`: one
 * the writer signed and committed (D47), answering no request.
 */
export type WriterReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; message: string; fault?: true }
  | { id: 0; checkpoint: string };

/** While writes fail, how often the writer tries one small write (what else is refused meanwhile). */
const PROBE_MS = 500;

type Pending = { resolve: (v: unknown) => void; reject: (err: Error) => void };

/** Admissions waiting for the batch with the writer; each caller gets its own slice of the results. */
interface NextBatch {
  list: Admission[];
  callers: { start: number; n: number; resolve: (r: boolean[]) => void; reject: (err: Error) => void }[];
}

export class ThreadedStore implements SessionStore, StoreFaults {
  readonly advice = FILE_STORE_ADVICE;
  readonly groupWriteMs = GROUP_WRITE_MS;
  readonly bufferCap: number;
  readonly path: string;
  private readonly writer: Worker;
  private readonly waiting = new Map<number, Pending>();
  private nextId = 0;
  /** Admissions handed in and not committed (or refused) yet, in calls. */
  private pending = 0;
  /** The result of the latest admission call: a read waits for it. */
  private latest: Promise<unknown> = Promise.resolve();
  /** Batches with the writer. */
  private inFlight = 0;
  /** The request id of the latest batch posted. */
  private lastAdmit = 0;
  private next: NextBatch | undefined;
  /** A post is set for the end of this turn. */
  private turn = false;
  /** Writes made (batches to the writer and commits on this thread), for `/healthz`. */
  private commits = 0;
  private failed: Error | undefined;
  private closing: Promise<void> | undefined;
  /** D38: why the last write failed, while no later one succeeded. */
  private failing: string | undefined;
  private probing: NodeJS.Timeout | undefined;
  /** D47: gets each checkpoint either connection commits. */
  private checkpointed: ((raw: string) => void) | undefined;

  /** A file path gets the writer thread; `:memory:` (one connection, nothing to share) stays in this thread. */
  static async open(opts: StoreOptions): Promise<SessionStore> {
    if (opts.path === ':memory:') return RelayStore.open(opts);
    // This connection creates the file, its schema and modes, runs the checkpointer and reads;
    // opening it first keeps a bad path the same clear error as the store on this thread.
    const store = new ThreadedStore(RelayStore.open(opts, await engineOpener(opts.engine)), opts);
    // Resolves once the writer has opened the file too, so a started relay writes at once.
    await store.call({ id: 0, op: 'open' }).catch(async (err: Error) => {
      await store.close();
      throw new SteeringError('CONFIG_INVALID', `cannot open relay store ${opts.path} for writing: ${err.message}`, {
        cause: err,
      });
    });
    return store;
  }

  private constructor(
    private readonly reader: RelayStore,
    opts: StoreOptions,
  ) {
    this.bufferCap = reader.bufferCap;
    this.path = reader.path;
    const { path, bufferCap, sessionCap, engine, signingKey } = opts;
    this.writer = startWorker('store-writer', {
      workerData: { path, bufferCap, sessionCap, engine, signingKey } satisfies StoreOptions,
    });
    this.writer.unref();
    this.writer.on('message', (r: WriterReply) => this.settle(r));
    this.writer.on('error', (err) => this.fail(err));
    this.writer.on('exit', (code) => this.fail(new Error(`the store's writer thread exited (code ${code})`)));
  }

  /**
   * `now`: the caller waits on this commit (a command to forward, a read). With no batch at the
   * writer it is written here and answered at once; otherwise its admissions, with what waits for
   * the next batch, are posted at once even while a batch is with the writer: the writer takes
   * messages in order, so this saves waiting for that batch's answer before posting.
   */
  admitAll(list: readonly Admission[], opts?: { now?: boolean }): Maybe<boolean[]> {
    if (list.length === 0) return [];
    // Waited on, with nothing of ours before it still to commit: this thread's own connection
    // writes it now if the file's lock is free, which saves the two thread hops. Otherwise (the
    // lock held, a fault) it takes the writer's way, which waits for the lock and reports.
    if (
      opts?.now === true &&
      this.inFlight === 0 &&
      this.next === undefined &&
      this.failing === undefined &&
      this.failed === undefined &&
      this.closing === undefined
    ) {
      const done = this.reader.tryAdmitAll(list);
      if (done !== undefined) {
        this.commits += 1;
        return done;
      }
    }
    this.pending += 1;
    this.next ??= { list: [], callers: [] };
    const next = this.next;
    const start = next.list.length;
    for (const a of list) next.list.push(a);
    const p = new Promise<boolean[]>((resolve, reject) =>
      next.callers.push({ start, n: list.length, resolve, reject }),
    );
    if (opts?.now === true) this.post();
    else if (this.inFlight === 0) this.postThisTurn();
    const done = (): void => {
      this.pending -= 1;
    };
    p.then(done, done);
    this.latest = p;
    return p;
  }

  /**
   * With no batch at the writer, what is handed in during this turn of the event loop goes as one
   * batch once the turn's I/O callbacks have run: several POSTs read in one poll share a commit
   * (one each before: the writer's CPU per POST was as large as the relay thread's).
   */
  private postThisTurn(): void {
    if (this.turn) return;
    this.turn = true;
    setImmediate(() => {
      this.turn = false;
      if (this.inFlight === 0) this.post();
    });
  }

  /** Hands what waits for the next batch to the writer; each caller gets its slice of the answer. */
  private post(): void {
    const next = this.next;
    this.next = undefined;
    if (next === undefined) return;
    // D38: a batch that queued behind a write the file refused is refused with it, at once: its
    // senders hear within one busy timeout (a locked file), not one per batch queued. One posted
    // behind a batch still with the writer names it, and the writer refuses it if that one failed.
    const after = this.inFlight > 0 ? this.lastAdmit : undefined;
    const p =
      this.failing === undefined
        ? this.call<boolean[]>({
            id: 0,
            op: 'admit',
            batch: pack(next.list),
            ...(after === undefined ? {} : { after }),
          })
        : Promise.reject(new StoreUnavailableError(this.failing));
    this.inFlight += 1;
    this.commits += 1;
    // Counted out before its callers hear, so what they do next sees the writer as it is.
    const answered = (): void => {
      this.inFlight -= 1;
      if (this.inFlight === 0) this.post();
    };
    p.then(
      (r) => {
        this.writable();
        answered();
        for (const c of next.callers) c.resolve(r.slice(c.start, c.start + c.n));
      },
      (err: Error) => {
        this.unwritable(err);
        answered();
        for (const c of next.callers) c.reject(err);
      },
    );
  }

  /**
   * D38: why the file cannot take writes now (full, failing, read-only), from the last write's
   * failure until a probe write succeeds. Meanwhile the core refuses events and commands
   * `store-unavailable` before anything is fanned out or forwarded; `/healthz` says why.
   */
  unavailable(): string | undefined {
    return this.failing;
  }

  private unwritable(err: Error): void {
    if (!isStoreUnavailable(err)) return;
    this.failing = err.message;
    if (this.probing !== undefined) return;
    let asking = false;
    this.probing = setInterval(() => {
      // A probe waits up to the busy timeout on a locked file: one at a time, none queued behind it.
      if (this.failed !== undefined || asking) return;
      asking = true;
      const done = () => {
        asking = false;
      };
      const p = this.call({ id: 0, op: 'probe' });
      p.then(done, done);
      p.then(
        () => this.writable(),
        (e: Error) => this.unwritable(e),
      );
    }, PROBE_MS);
    this.probing.unref();
  }

  private writable(): void {
    this.failing = undefined;
    clearInterval(this.probing);
    this.probing = undefined;
  }

  onCheckpoint(listener: (raw: string) => void): void {
    this.checkpointed = listener;
    this.reader.onCheckpoint(listener);
  }

  /**
   * D47: signs what no checkpoint covers yet, on both connections: the writer's after its
   * batches, this thread's only if the lock is free now (its turn comes again).
   */
  async checkpointIdle(): Promise<boolean> {
    if (this.closing !== undefined || this.failed !== undefined) return false;
    const here = this.reader.checkpointIdle(false);
    const there = await this.call<boolean>({ id: 0, op: 'checkpoint' });
    return here || there;
  }

  /** Runs `read` now, or once the latest admission is settled (committed, or refused and so not stored). */
  private afterWrites<T>(read: () => T): Maybe<T> {
    if (this.pending === 0) return read();
    return this.latest.then(read, read);
  }

  replay(session: string, after?: Position): Maybe<Replay> {
    return this.afterWrites(() => this.reader.replay(session, after));
  }

  committed(session: string): readonly string[] {
    return this.reader.replay(session).items;
  }

  /** What is committed (a batch still with the writer is not held yet). */
  holdsFrom(session: string, pos: Position): boolean {
    return this.reader.holdsFrom(session, pos);
  }

  sessionIds(): Maybe<string[]> {
    return this.afterWrites(() => this.reader.sessionIds());
  }

  auditPage(part: AuditPart, after: string | null): Maybe<AuditPage | undefined> {
    return this.afterWrites(() => this.reader.auditPage(part, after));
  }

  /** What is committed: a batch still with the writer is not counted yet. */
  counts(): { sessions: number; events: number } {
    return this.reader.counts();
  }

  health(): StoreHealth {
    return {
      engine: 'sqlite',
      ok: this.failed === undefined && this.failing === undefined && this.reader.health().ok,
      ...(this.failing === undefined ? {} : { reason: this.failing }),
      writer: this.failed === undefined ? 'running' : this.failed.message,
      commits: this.commits,
    };
  }

  /** The writer closes its connection first, so the relay's is the last and folds the WAL into the file. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.probing);
      await this.latest.catch(() => {});
      if (this.failed === undefined) {
        const exited = new Promise<void>((resolve) => this.writer.once('exit', () => resolve()));
        await this.call({ id: 0, op: 'close' }).catch(() => {});
        // Held until the thread is gone, so the caller's process waits for the files to settle.
        this.writer.ref();
        await exited;
      }
      await this.reader.close();
    })();
    return this.closing;
  }

  private call<T>(r: WriterRequest): Promise<T> {
    if (this.failed !== undefined) return Promise.reject(this.failed);
    this.nextId += 1;
    const id = this.nextId;
    if (r.op === 'admit') this.lastAdmit = id;
    // A request outstanding keeps the process alive until it is answered; an idle writer does not.
    if (this.waiting.size === 0) this.writer.ref();
    const p = new Promise<T>((resolve, reject) =>
      this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject }),
    );
    this.writer.postMessage({ ...r, id });
    return p;
  }

  private settle(r: WriterReply): void {
    if ('checkpoint' in r) {
      this.checkpointed?.(r.checkpoint);
      return;
    }
    const w = this.waiting.get(r.id);
    if (w === undefined) return;
    this.waiting.delete(r.id);
    if (this.waiting.size === 0) this.writer.unref();
    // The statement's own message, as the store on this thread would throw it.
    if (r.ok) w.resolve(r.value);
    else w.reject(r.fault ? new StoreUnavailableError(r.message) : new Error(r.message));
  }

  private fail(err: Error): void {
    this.failed ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}
