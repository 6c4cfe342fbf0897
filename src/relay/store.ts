// The relay's session history: embedded SQLite (Node's built-in `node:sqlite`), a file or `:memory:`.
// Buffers are per bare `session` (resume tokens are bare, AEP-0003 §7), admission dedupes on
// `(source, id)` (AEP-0001 §5.3), positioned events sort by `(epoch, seq)`, and seq-less
// session events (commands, `attention.routed`) are kept by arrival beside them.
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { isMainThread, type Worker } from 'node:worker_threads';
import { SteeringError } from '../protocol/errors.js';
import { openDatabase, type OpenDatabase, type SqlDatabase, type SqlStatement, type SqlValue } from './sqlite.js';
import { startCheckpointer } from './worker-start.js';
import { goneStatements, migrateChain, StoreChain } from './store-chain.js';
import { fileStoreFault } from './store-fault.js';
import { readAuditPage, type AuditPage, type AuditPart } from './audit-rows.js';
import { before, interleaveByArrival, type Position } from './positions.js';
import {
  DEFAULT_BUFFER,
  DEFAULT_MAX_SESSIONS,
  GROUP_WRITE_MS,
  type Admission,
  type Replay,
  type SessionStore,
  type StoreHealth,
} from './session-store.js';

// The seam every store offers the core, re-exported for the importers of this file.
export {
  DEFAULT_BUFFER,
  DEFAULT_MAX_SESSIONS,
  GROUP_WRITE_MS,
  type Admission,
  type FaultAwareStore,
  type Maybe,
  type Position,
  type Replay,
  type SessionStore,
  type StoreHealth,
} from './session-store.js';

export interface StoreOptions {
  /** A file path, or `:memory:`. */
  path: string;
  /** Positioned events kept per session (`AEP_BUFFER`, advertised as `replay.buffer`). */
  bufferCap?: number;
  /** Sessions kept; the least recently written is evicted beyond it (`AEP_MAX_SESSIONS`). */
  sessionCap?: number;
  /** A file store runs its own WAL checkpointer unless another connection to the file does. Default true. */
  checkpoint?: boolean;
  /**
   * The URL of a module whose `openDatabase(path)` opens the file in the store's worker threads,
   * in place of `node:sqlite` (the bench compares another binding through it); the opener
   * `RelayStore.open` takes must be that module's.
   */
  engine?: string;
  /** D47: the relay's Ed25519 private key file (PEM); with it, the store signs checkpoints of its chains. */
  signingKey?: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS sessions (
  session TEXT PRIMARY KEY,
  last_write INTEGER NOT NULL,
  positioned INTEGER NOT NULL DEFAULT 0,
  unpositioned INTEGER NOT NULL DEFAULT 0,
  evicted_epoch INTEGER,
  evicted_seq INTEGER
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS events (
  arrival INTEGER PRIMARY KEY,
  session TEXT NOT NULL,
  epoch INTEGER,
  seq INTEGER,
  source TEXT NOT NULL,
  id TEXT NOT NULL,
  raw TEXT NOT NULL,
  UNIQUE (source, id)
);
CREATE INDEX IF NOT EXISTS events_by_position ON events (session, epoch, seq);
CREATE TABLE IF NOT EXISTS write_probe (k INTEGER PRIMARY KEY CHECK (k = 1), at INTEGER NOT NULL, pad BLOB);
`;

type Row = { arrival: number; epoch: number | null; seq: number | null; raw: string };

/**
 * A prepared statement with its parameter and row types. `node:sqlite` returns INTEGER columns
 * as numbers (no bigints: every value here is a count, a rowid or a position, far below 2^53).
 */
interface Query<P extends SqlValue[], R> {
  run(...params: P): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: P): R | undefined;
  all(...params: P): R[];
}

const typed = <P extends SqlValue[] = SqlValue[], R = unknown>(s: SqlStatement): Query<P, R> =>
  s as unknown as Query<P, R>;

/**
 * SQLite waits this long for a lock another connection holds (a second process writing the file;
 * the relay's own checkpoints never block its writer) before refusing; `node:sqlite` does not
 * wait at all unless told. D38: a write refused for the lock is answered `store-unavailable`
 * within 2 s, so the wait stays well below that.
 */
const BUSY_TIMEOUT_MS = 1000;

/** The size of the write that tells a failing store file it takes writes again. */
const PROBE_BYTES = 64 << 10;

export class RelayStore implements SessionStore {
  readonly groupWriteMs = GROUP_WRITE_MS;
  readonly bufferCap: number;
  readonly sessionCap: number;
  readonly path: string;
  private readonly db: SqlDatabase;
  private isOpen = true;
  private sessionCount: number;
  /** `PRAGMA data_version` when `sessionCount` was last read: it changes when another connection commits. */
  private seen: number;
  private readonly q;
  private checkpointer: Worker | undefined;
  private readonly chain: StoreChain;
  private readonly gone: ReturnType<typeof goneStatements>;

  private constructor(db: SqlDatabase, opts: StoreOptions) {
    this.db = db;
    this.path = opts.path;
    this.bufferCap = opts.bufferCap ?? DEFAULT_BUFFER;
    this.sessionCap = opts.sessionCap ?? DEFAULT_MAX_SESSIONS;
    const q = <P extends SqlValue[] = SqlValue[], R = unknown>(sql: string) => typed<P, R>(db.prepare(sql));
    this.q = {
      insert: q<[string, number | null, number | null, string, string, string, number, string]>(
        'INSERT OR IGNORE INTO events (session, epoch, seq, source, id, raw, n, prev) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      session: q<[string], { positioned: number; unpositioned: number }>(
        'SELECT positioned, unpositioned FROM sessions WHERE session = ?',
      ),
      newSession: q<[string, number, number, number]>(
        'INSERT INTO sessions (session, last_write, positioned, unpositioned) VALUES (?, ?, ?, ?)',
      ),
      touch: q<[number, number, number, string]>(
        'UPDATE sessions SET last_write = ?, positioned = positioned + ?, unpositioned = unpositioned + ? WHERE session = ?',
      ),
      oldestPositioned: q<[string], { arrival: number; epoch: number; seq: number }>(
        'SELECT arrival, epoch, seq FROM events WHERE session = ? AND epoch IS NOT NULL ORDER BY epoch, seq LIMIT 1',
      ),
      nthPositioned: q<[string, number], { epoch: number; seq: number }>(
        'SELECT epoch, seq FROM events WHERE session = ? AND epoch IS NOT NULL ORDER BY epoch, seq LIMIT 1 OFFSET ?',
      ),
      deletePositionedUpTo: q<[string, number, number, number]>(
        'DELETE FROM events WHERE session = ? AND epoch IS NOT NULL AND (epoch < ? OR (epoch = ? AND seq <= ?))',
      ),
      dropOldestUnpositioned: q<[string, number]>(
        'DELETE FROM events WHERE arrival IN (SELECT arrival FROM events WHERE session = ? AND epoch IS NULL ORDER BY arrival LIMIT ?)',
      ),
      lessUnpositioned: q<[number, string]>('UPDATE sessions SET unpositioned = unpositioned - ? WHERE session = ?'),
      pruneUnpositioned: q<[string, number]>('DELETE FROM events WHERE session = ? AND epoch IS NULL AND arrival < ?'),
      evicted: q<[number, number, number, string]>(
        'UPDATE sessions SET positioned = positioned - ?, evicted_epoch = ?, evicted_seq = ? WHERE session = ?',
      ),
      recount: q<[string, string]>(
        'UPDATE sessions SET unpositioned = (SELECT count(*) FROM events WHERE session = ? AND epoch IS NULL) WHERE session = ?',
      ),
      lru: q<[], { session: string }>('SELECT session FROM sessions ORDER BY last_write LIMIT 1'),
      deleteSessionEvents: q<[string]>('DELETE FROM events WHERE session = ?'),
      deleteSession: q<[string]>('DELETE FROM sessions WHERE session = ?'),
      evictedAt: q<[string], { evicted_epoch: number | null; evicted_seq: number | null }>(
        'SELECT evicted_epoch, evicted_seq FROM sessions WHERE session = ?',
      ),
      after: q<[string, number, number, number], Row>(
        'SELECT arrival, epoch, seq, raw FROM events WHERE session = ? AND epoch IS NOT NULL AND (epoch > ? OR (epoch = ? AND seq > ?)) ORDER BY epoch, seq',
      ),
      arrivalUpTo: q<[string, number, number, number], { a: number | null }>(
        'SELECT max(arrival) AS a FROM events WHERE session = ? AND epoch IS NOT NULL AND (epoch < ? OR (epoch = ? AND seq <= ?))',
      ),
      unpositionedAfter: q<[string, number], Row>(
        'SELECT arrival, epoch, seq, raw FROM events WHERE session = ? AND epoch IS NULL AND arrival > ? ORDER BY arrival',
      ),
      sessionIds: q<[], { session: string }>('SELECT session FROM sessions ORDER BY last_write'),
      top: q<[string], { epoch: number; seq: number }>(
        'SELECT epoch, seq FROM events WHERE session = ? AND epoch IS NOT NULL ORDER BY epoch DESC, seq DESC LIMIT 1',
      ),
      probe: q<[number]>(`INSERT OR REPLACE INTO write_probe (k, at, pad) VALUES (1, ?, zeroblob(${PROBE_BYTES}))`),
      counts: q<[], { sessions: number; events: number }>(
        'SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM events) AS events',
      ),
      sessionTotal: q<[], { n: number }>('SELECT count(*) AS n FROM sessions'),
      dataVersion: q<[], { data_version: number }>('PRAGMA data_version'),
    };
    [this.chain, this.gone] = [new StoreChain(db, opts.signingKey), goneStatements(db)];
    this.sessionCount = this.q.counts.get()!.sessions;
    this.seen = this.q.dataVersion.get()!.data_version;
  }

  /** Opens (and creates) the store; `open` is the binding, `node:sqlite` unless `opts.engine` names another. */
  static open(opts: StoreOptions, open: OpenDatabase = openDatabase): RelayStore {
    const onDisk = opts.path !== ':memory:';
    // D21: the history holds instruction text: owner-only files (with the WAL and shared-memory
    // sidecars SQLite creates beside it) in an owner-only directory when this creates it.
    // A worker thread may not set the umask: the writer thread opens a file the relay's thread
    // already created, and SQLite gives the sidecars it makes the database file's mode.
    const umask = onDisk && isMainThread ? process.umask(0o077) : undefined;
    try {
      if (onDisk) mkdirSync(dirname(opts.path), { recursive: true, mode: 0o700 });
      const db = open(opts.path);
      db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
      db.exec('PRAGMA journal_mode = WAL');
      db.exec('PRAGMA synchronous = NORMAL');
      if (onDisk) db.exec('PRAGMA wal_autocheckpoint = 0');
      db.exec(SCHEMA);
      migrateChain(db);
      if (onDisk)
        for (const f of [opts.path, `${opts.path}-wal`, `${opts.path}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
      const store = new RelayStore(db, opts);
      if (onDisk && opts.checkpoint !== false) store.checkpointer = startCheckpointer(opts.path, opts.engine);
      return store;
    } catch (err) {
      throw new SteeringError('CONFIG_INVALID', `cannot open relay store ${opts.path}: ${(err as Error).message}`, {
        cause: err,
      });
    } finally {
      if (umask !== undefined) process.umask(umask);
    }
  }

  /** Admits one event; false when `(source, id)` is already held (a redelivery). */
  admit(a: Admission): boolean {
    return this.admitAll([a])[0]!;
  }

  /**
   * Admits a batch (one NDJSON POST, or what sockets delivered in one turn) in one transaction:
   * one prepared insert per event, then per session of the batch one read, one counter update
   * and at most one eviction pass, where admitting event by event cost three statements each.
   */
  admitAll(list: readonly Admission[]): boolean[] {
    // IMMEDIATE takes the write lock at BEGIN, where SQLite's busy timeout applies.
    this.begin();
    return this.commitWork(() => this.admitBatch(list));
  }

  /** Runs the work in the open transaction and commits it, or rolls it back. */
  private commitWork<T>(work: () => T): T {
    try {
      const out = work();
      this.db.exec('COMMIT');
      this.chain.committed();
      return out;
    } catch (err) {
      this.rollback();
      // D38: a file that cannot take the write now (full, failing, read-only) is refused store-unavailable.
      throw fileStoreFault(err) ?? err;
    }
  }

  /**
   * Admits a batch at once if the file's write lock is free now, without waiting for it;
   * `undefined` (nothing written) when it is held or the write fails, so the caller can take the
   * usual way, which waits for the lock and reports a fault (D38).
   */
  tryAdmitAll(list: readonly Admission[]): boolean[] | undefined {
    if (!this.tryBegin()) return undefined;
    try {
      const out = this.admitBatch(list);
      this.db.exec('COMMIT');
      this.chain.committed();
      return out;
    } catch {
      this.rollback();
      return undefined;
    }
  }

  /** D47: each checkpoint this connection signs, once committed (the relay puts it on the stream). */
  onCheckpoint(listener: (raw: string) => void): void {
    this.chain.listener = listener;
  }

  /** The write lock if it is free now, without waiting for it. */
  private tryBegin(): boolean {
    this.db.exec('PRAGMA busy_timeout = 0');
    try {
      this.db.exec('BEGIN IMMEDIATE');
      return true;
    } catch {
      return false;
    } finally {
      this.db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    }
  }

  /**
   * D47: signs the heads no checkpoint covers yet (an idle relay's last rows). False when there
   * were none, or (`wait` false: the relay's event loop) the write lock is held now.
   */
  checkpointIdle(wait = true): boolean {
    if (!this.chain.pending) return false;
    if (wait) this.begin();
    else if (!this.tryBegin()) return false;
    return this.commitWork(() => this.chain.flushIdle());
  }

  /** Takes the write lock; D38: a file another process holds locked past the busy timeout is refused for now. */
  private begin(): void {
    try {
      this.db.exec('BEGIN IMMEDIATE');
    } catch (err) {
      throw fileStoreFault(err) ?? err;
    }
  }

  /** A refused statement or commit leaves nothing of the batch; SQLite may have rolled back already. */
  private rollback(): void {
    this.chain.forget();
    try {
      this.db.exec('ROLLBACK');
    } catch {
      // No transaction left to roll back.
    }
  }

  /**
   * Whether the file takes writes again after a fault: one write of PROBE_BYTES (a full file
   * may still take a few pages where its journal has room, which says little about a batch).
   */
  probe(): void {
    this.begin();
    try {
      this.q.probe.run(Date.now());
      this.db.exec('COMMIT');
    } catch (err) {
      this.rollback();
      throw fileStoreFault(err) ?? err;
    }
  }

  private admitBatch(list: readonly Admission[]): boolean[] {
    // Another connection to the file (the relay's thread beside its writer) may have added sessions.
    const version = this.q.dataVersion.get()!.data_version;
    if (version !== this.seen) {
      this.seen = version;
      this.sessionCount = this.q.sessionTotal.get()!.n;
      this.chain.forget();
    }
    const out = new Array<boolean>(list.length);
    /** Per session of this batch: what was added and the last arrival, in first-seen order. */
    const touched = new Map<string, { positioned: number; unpositioned: number; last: number }>();
    for (let i = 0; i < list.length; i += 1) {
      const a = list[i]!;
      const positioned = a.epoch !== undefined || a.seq !== undefined;
      const link = this.chain.next(a.source, a.raw);
      const res = this.q.insert.run(
        a.session,
        positioned ? (a.epoch ?? 0) : null,
        positioned ? (a.seq ?? 0) : null,
        a.source,
        a.id,
        a.raw,
        ...([link.n, link.prev] as const),
      );
      out[i] = res.changes > 0;
      if (!out[i]) continue;
      this.chain.taken(a.source, link);
      let t = touched.get(a.session);
      if (t === undefined) {
        t = { positioned: 0, unpositioned: 0, last: 0 };
        touched.set(a.session, t);
      }
      if (positioned) t.positioned += 1;
      else t.unpositioned += 1;
      t.last = Number(res.lastInsertRowid);
    }
    for (const [session, t] of touched) {
      const row = this.q.session.get(session);
      if (row === undefined) {
        this.q.newSession.run(session, t.last, t.positioned, t.unpositioned);
        this.sessionCount += 1;
      } else {
        this.q.touch.run(t.last, t.positioned, t.unpositioned, session);
      }
      const positioned = (row?.positioned ?? 0) + t.positioned;
      const unpositioned = (row?.unpositioned ?? 0) + t.unpositioned;
      if (positioned > this.bufferCap) this.evictOldest(session, positioned - this.bufferCap);
      if (unpositioned > this.bufferCap) this.dropUnpositioned(session, unpositioned - this.bufferCap);
    }
    // Least recently written first; a session this batch wrote is the most recent.
    while (this.sessionCount > this.sessionCap) this.evictSession();
    this.chain.settle();
    return out;
  }

  /** Drops the `n` oldest seq-less events of a session beyond the cap. */
  private dropUnpositioned(session: string, n: number): void {
    this.gone.oldestUnpositioned.run(session, n);
    const gone = Number(this.q.dropOldestUnpositioned.run(session, n).changes);
    if (gone > 0) this.q.lessUnpositioned.run(gone, session);
  }

  /**
   * Drops the `n` lowest positions, remembers the highest of them for `replay-exhausted`, and
   * prunes seq-less events older than what is left.
   */
  private evictOldest(session: string, n: number): void {
    const last = this.q.nthPositioned.get(session, n - 1);
    if (!last) return;
    this.gone.positionedUpTo.run(session, last.epoch, last.epoch, last.seq);
    const gone = Number(this.q.deletePositionedUpTo.run(session, last.epoch, last.epoch, last.seq).changes);
    this.q.evicted.run(gone, last.epoch, last.seq, session);
    const next = this.q.oldestPositioned.get(session);
    if (next) {
      this.gone.unpositionedBefore.run(session, next.arrival);
      this.q.pruneUnpositioned.run(session, next.arrival);
      this.q.recount.run(session, session);
    }
  }

  private evictSession(): void {
    const lru = this.q.lru.get();
    if (!lru) return;
    this.gone.session.run(lru.session);
    this.q.deleteSessionEvents.run(lru.session);
    this.q.deleteSession.run(lru.session);
    this.sessionCount -= 1;
  }

  /**
   * Everything held for `session` strictly after `after` (all of it when absent): positioned
   * events in `(epoch, seq)` order, seq-less ones placed by arrival among them.
   */
  replay(session: string, after?: Position): Replay {
    const from = after ?? { epoch: -1, seq: -1 };
    const positioned = this.q.after.all(session, from.epoch, from.epoch, from.seq);
    const since = after === undefined ? 0 : (this.q.arrivalUpTo.get(session, from.epoch, from.epoch, from.seq)?.a ?? 0);
    const loose = this.q.unpositionedAfter.all(session, since);
    const out: Replay = { items: interleaveByArrival(positioned, loose) };
    const ev = this.q.evictedAt.get(session);
    if (
      ev &&
      ev.evicted_epoch !== null &&
      ev.evicted_seq !== null &&
      before(from, { epoch: ev.evicted_epoch, seq: ev.evicted_seq })
    ) {
      const first = positioned[0];
      if (first && first.epoch !== null && first.seq !== null) out.exhausted = { epoch: first.epoch, seq: first.seq };
    }
    return out;
  }

  /** Sessions held, least recently written first (replay-all order). */
  holdsFrom(session: string, pos: Position): boolean {
    const top = this.q.top.get(session);
    return top !== undefined && (top.epoch > pos.epoch || (top.epoch === pos.epoch && top.seq >= pos.seq));
  }

  sessionIds(): string[] {
    return this.q.sessionIds.all().map((r) => r.session);
  }

  counts(): { sessions: number; events: number } {
    // A plain object: the binding's rows have no prototype.
    const { sessions, events } = this.q.counts.get()!;
    return { sessions, events };
  }

  health(): StoreHealth {
    return { engine: 'sqlite', ok: this.isOpen };
  }
  auditPage(part: AuditPart, after: string | null): AuditPage | undefined {
    return readAuditPage(this.db, part, after);
  }

  /** Resolves once both connections are closed, so the files are settled (a caller may remove them). */
  close(): void | Promise<void> {
    const w = this.checkpointer;
    this.checkpointer = undefined;
    if (!w) return this.closeDb();
    return new Promise<void>((resolve) => {
      // The worker closes its connection first, so this one is the last and folds the WAL in.
      const done = () => {
        clearTimeout(stuck);
        this.closeDb();
        resolve();
      };
      const stuck = setTimeout(() => void w.terminate(), 2000);
      w.once('exit', done);
      w.postMessage('stop');
    });
  }

  private closeDb(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    try {
      this.db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    } catch {
      // Kept in the WAL; the next open reads it.
    }
    this.db.close();
  }
}
