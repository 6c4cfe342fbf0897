// A file store whose writes run on a worker thread (store-writer.ts). The relay's event loop
// hands each turn's admissions to the writer and goes on: no SQLite statement or commit for
// them runs on the thread that parses, routes and fans out, so fan-out and command forwarding
// never wait for the store, and a commit never delays a command (the main thread's largest cost
// after socket writes in a CPU profile of the fan-out bench).
// Reads keep the one ordering rule of the core ("every read flushes first"): while a batch is
// with the writer, a read goes to the writer behind it; when none is, the relay's own connection
// reads the committed file at once (WAL readers see every commit).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { SteeringError } from '../protocol/errors.js';
import { RelayStore, type Admission, type Maybe, type Position, type Replay, type SessionStore, type StoreHealth, type StoreOptions } from './store.js';

export type WriterRequest =
  | { id: number; op: 'admit'; list: readonly Admission[] }
  | { id: number; op: 'replay'; session: string; after?: Position }
  | { id: number; op: 'ids' }
  | { id: number; op: 'close' };

export type WriterReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

type Pending = { resolve: (v: unknown) => void; reject: (err: Error) => void };

/** The built package runs store-writer.js; the TypeScript sources (tests, bench) give the thread their loader first. */
function startWriter(workerData: StoreOptions): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL('./store-writer.js', here), { workerData });
  const loader = pathToFileURL(join(dirname(createRequire(here).resolve('tsx/package.json')), 'dist', 'esm', 'api', 'index.mjs')).href;
  const entry = new URL('./store-writer.ts', here).href;
  const boot = `import(${JSON.stringify(loader)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

export class ThreadedStore implements SessionStore {
  readonly bufferCap: number;
  readonly path: string;
  private readonly writer: Worker;
  private readonly waiting = new Map<number, Pending>();
  private nextId = 0;
  /** Admission batches sent and not answered yet. */
  private inFlight = 0;
  private failed: Error | undefined;
  private closing: Promise<void> | undefined;

  /** A file path gets the writer thread; `:memory:` (one connection, nothing to share) stays in this thread. */
  static async open(opts: StoreOptions): Promise<SessionStore> {
    if (opts.path === ':memory:') return RelayStore.open(opts);
    // This connection creates the file, its schema and modes, runs the checkpointer and reads;
    // opening it first keeps a bad path the same clear error as the store on this thread.
    const store = new ThreadedStore(RelayStore.open(opts), opts);
    // Resolves once the writer has opened the file too, so a started relay writes at once.
    await store.call({ id: 0, op: 'ids' }).catch(async (err: Error) => {
      await store.close();
      throw new SteeringError('CONFIG_INVALID', `cannot open relay store ${opts.path} for writing: ${err.message}`, { cause: err });
    });
    return store;
  }

  private constructor(private readonly reader: RelayStore, opts: StoreOptions) {
    this.bufferCap = reader.bufferCap;
    this.path = reader.path;
    this.writer = startWriter({ path: opts.path, ...(opts.bufferCap !== undefined ? { bufferCap: opts.bufferCap } : {}), ...(opts.sessionCap !== undefined ? { sessionCap: opts.sessionCap } : {}) });
    this.writer.unref();
    this.writer.on('message', (r: WriterReply) => this.settle(r));
    this.writer.on('error', (err) => this.fail(err));
    this.writer.on('exit', (code) => this.fail(new Error(`the store's writer thread exited (code ${code})`)));
  }

  admitAll(list: readonly Admission[]): Promise<boolean[]> {
    this.inFlight += 1;
    const done = () => void (this.inFlight -= 1);
    const p = this.call<boolean[]>({ id: 0, op: 'admit', list });
    p.then(done, done);
    return p;
  }

  replay(session: string, after?: Position): Maybe<Replay> {
    if (this.inFlight === 0 && this.failed === undefined) return this.reader.replay(session, after);
    return this.call<Replay>({ id: 0, op: 'replay', session, ...(after !== undefined ? { after } : {}) });
  }

  committed(session: string): readonly string[] {
    return this.reader.replay(session).items;
  }

  sessionIds(): Maybe<string[]> {
    return this.inFlight === 0 && this.failed === undefined ? this.reader.sessionIds() : this.call<string[]>({ id: 0, op: 'ids' });
  }

  /** What is committed: a batch still with the writer is not counted yet. */
  counts(): { sessions: number; events: number } {
    return this.reader.counts();
  }

  health(): StoreHealth {
    return { engine: 'sqlite', ok: this.failed === undefined && this.reader.health().ok, thread: this.failed === undefined ? 'writing' : this.failed.message };
  }

  /** The writer closes its connection first, so the relay's is the last and folds the WAL into the file. */
  close(): Promise<void> {
    this.closing ??= (async () => {
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
    const id = (this.nextId += 1);
    // A request outstanding keeps the process alive until it is answered; an idle writer does not.
    if (this.waiting.size === 0) this.writer.ref();
    const p = new Promise<T>((resolve, reject) => this.waiting.set(id, { resolve: resolve as (v: unknown) => void, reject }));
    this.writer.postMessage({ ...r, id });
    return p;
  }

  private settle(r: WriterReply): void {
    const w = this.waiting.get(r.id);
    if (w === undefined) return;
    this.waiting.delete(r.id);
    if (this.waiting.size === 0) this.writer.unref();
    if (r.ok) w.resolve(r.value);
    // The statement's own message, as the store on this thread would throw it.
    else w.reject(new Error(r.message));
  }

  private fail(err: Error): void {
    this.failed ??= err;
    for (const w of this.waiting.values()) w.reject(err);
    this.waiting.clear();
  }
}
