// D47: the relay store's hash chains, one per event source. Each row holds its place in its
// source's chain (`n`) and its predecessor's hash (`prev`); its own hash is the next row's `prev`,
// and the verifier computes it again from the row. A row the buffer evicts (D24) leaves its place
// and link in `chain_gone`, so the rows around it still link. Every 1,000 rows or 60 s the heads
// that moved are signed with the relay's Ed25519 key, kept as a checkpoint event and handed to the
// store's listener, which puts it on the stream.
import { randomUUID } from 'node:crypto';
import {
  CHECKPOINT_TYPE,
  FIRST,
  keyId,
  rowHash,
  signHeads,
  type ChainHead,
  type SignedHead,
} from '../protocol/chain.js';
import type { SqlDatabase, SqlStatement, SqlValue } from './sqlite.js';
import { loadSigningKey, type SigningKey } from './signing-key.js';

const CHAIN_SCHEMA = `
CREATE TABLE IF NOT EXISTS chain_heads (source TEXT PRIMARY KEY, n INTEGER NOT NULL, head TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chain_gone (source TEXT NOT NULL, n INTEGER NOT NULL, prev TEXT NOT NULL, PRIMARY KEY (source, n)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS checkpoints (k INTEGER PRIMARY KEY, at INTEGER NOT NULL, raw TEXT NOT NULL);
`;

const RELAY_AGENT = 'aep-steer-relay';
const AUDIT_SESSION = 'audit';

/** A checkpoint is made after this many rows, or on the first row this long after the last one. */
export const CHECKPOINT_EVERY = 1000;
export const CHECKPOINT_MS = 60_000;

/** Sources whose evicted places one pruning pass looks at (see `prune`). */
const PRUNE_SOURCES = 32;

/** A row's place, as the insert writes it. */
export interface RowLink {
  n: number;
  prev: string;
  h: string;
}

type Stmt<P extends SqlValue[], R = unknown> = {
  run(...p: P): { changes: number | bigint };
  get(...p: P): R | undefined;
  all(...p: P): R[];
};
const typed = <P extends SqlValue[], R = unknown>(s: SqlStatement) => s as unknown as Stmt<P, R>;

/** Adds the chain's columns to an events table an older version made. */
export function migrateChain(db: SqlDatabase): void {
  db.exec(CHAIN_SCHEMA);
  const cols = new Set((db.prepare('PRAGMA table_info(events)').all() as { name: string }[]).map((c) => c.name));
  for (const [col, type] of [
    ['n', 'INTEGER'],
    ['prev', 'TEXT'],
  ] as const)
    if (!cols.has(col)) db.exec(`ALTER TABLE events ADD COLUMN ${col} ${type}`);
}

export class StoreChain {
  /** Heads as this connection last wrote or read them; dropped when another connection wrote. */
  private heads = new Map<string, ChainHead>();
  /** Sources whose head moved in the open transaction, and since the last checkpoint. */
  private moved = new Set<string>();
  private unsigned = new Set<string>();
  private sinceCheckpoint = 0;
  private sincePrune = 0;
  /** Where the next pruning pass of `chain_gone` starts (sources in order, round robin). */
  private pruneFrom = '';
  private lastCheckpoint: number;
  private readonly q;
  /** Gets each checkpoint made, once committed, to put it on the stream. */
  listener: ((raw: string) => void) | undefined;
  /** Checkpoints of the open transaction, handed to the listener once it commits. */
  private made: string[] = [];

  private readonly key: SigningKey | undefined;

  /** `keyFile`: the relay's signing key (PEM); without one, heads are kept but not signed. */
  constructor(
    db: SqlDatabase,
    keyFile: string | undefined,
    private readonly now: () => number = Date.now,
  ) {
    this.key = keyFile === undefined ? undefined : loadSigningKey(keyFile);
    const q = <P extends SqlValue[], R = unknown>(sql: string) => typed<P, R>(db.prepare(sql));
    this.q = {
      head: q<[string], { n: number; head: string }>('SELECT n, head FROM chain_heads WHERE source = ?'),
      setHead: q<[string, number, string]>('INSERT OR REPLACE INTO chain_heads (source, n, head) VALUES (?, ?, ?)'),
      keep: q<[number, string]>('INSERT INTO checkpoints (at, raw) VALUES (?, ?)'),
      last: q<[], { k: number | null }>('SELECT max(k) AS k FROM checkpoints'),
      goneAfter: q<[string], { source: string }>(
        'SELECT source FROM chain_gone WHERE source > ? ORDER BY source LIMIT 1',
      ),
      lowestKept: q<[string], { n: number | null }>('SELECT min(n) AS n FROM events WHERE source = ?'),
      highestGone: q<[string], { n: number | null }>('SELECT max(n) AS n FROM chain_gone WHERE source = ?'),
      pruneGone: q<[string, number]>('DELETE FROM chain_gone WHERE source = ? AND n < ?'),
    };
    this.lastCheckpoint = now();
  }

  /** Another connection wrote the file: what this one holds of the heads may be behind. */
  forget(): void {
    this.heads.clear();
    this.moved.clear();
    this.made = [];
  }

  /** The transaction committed: its checkpoints go to the listener. */
  committed(): void {
    if (this.made.length === 0) return;
    const made = this.made;
    this.made = [];
    for (const raw of made) this.listener?.(raw);
  }

  /** A source's head as this connection knows it, read from the file when it does not. */
  private headOf(source: string): ChainHead {
    let at = this.heads.get(source);
    if (at === undefined) {
      const row = this.q.head.get(source);
      at = row === undefined ? FIRST : { n: row.n, head: row.head };
      this.heads.set(source, at);
    }
    return at;
  }

  /** The place the next row of `source` takes; `taken` must follow if the insert stored it. */
  next(source: string, raw: string): RowLink {
    const at = this.headOf(source);
    const n = at.n + 1;
    return { n, prev: at.head, h: rowHash(n, at.head, raw) };
  }

  taken(source: string, link: RowLink): void {
    this.heads.set(source, { n: link.n, head: link.h });
    this.moved.add(source);
    this.sinceCheckpoint += 1;
    this.sincePrune += 1;
  }

  /** Writes the heads the batch moved, and a checkpoint when one is due; inside the batch's transaction. */
  settle(): void {
    for (const s of this.moved) {
      const h = this.heads.get(s)!;
      this.q.setHead.run(s, h.n, h.head);
      this.unsigned.add(s);
    }
    this.moved.clear();
    const t = this.now();
    if (this.sincePrune >= CHECKPOINT_EVERY) this.prune();
    if (this.key !== undefined && this.unsigned.size > 0)
      if (this.sinceCheckpoint >= CHECKPOINT_EVERY || t - this.lastCheckpoint >= CHECKPOINT_MS) this.checkpoint(t);
  }

  /**
   * An idle store's last rows: signs the heads not signed yet, whatever the time since the last
   * checkpoint; inside a transaction. False when there was nothing to sign.
   */
  flushIdle(): boolean {
    if (this.key === undefined || this.unsigned.size === 0) return false;
    this.checkpoint(this.now());
    return true;
  }

  /** Whether heads moved that no checkpoint signed yet (an idle flush has work). */
  get pending(): boolean {
    return this.key !== undefined && this.unsigned.size > 0;
  }

  /**
   * Keeps `chain_gone` bounded: of a source's evicted places below its lowest row still held,
   * only the highest stays (the verifier starts that chain there); a source with no row left
   * keeps its last place. A pass looks at a few sources after where the last one stopped, so
   * its cost stays small however many sources the file knows.
   */
  prune(): void {
    this.sincePrune = 0;
    for (let i = 0; i < PRUNE_SOURCES; i += 1) {
      const next = this.q.goneAfter.get(this.pruneFrom);
      if (next === undefined) {
        this.pruneFrom = '';
        return;
      }
      const source = next.source;
      this.pruneFrom = source;
      const low = this.q.lowestKept.get(source)?.n ?? null;
      const below = low ?? (this.q.highestGone.get(source)?.n ?? 0) + 1;
      this.q.pruneGone.run(source, below - 1);
    }
  }

  private checkpoint(t: number): void {
    const heads: SignedHead[] = [...this.unsigned].sort().map((source) => ({ source, ...this.headOf(source) }));
    const key = this.key!;
    // Numbered from the file, under the write lock: the relay's two connections both make them.
    const seq = (this.q.last.get()?.k ?? 0) + 1;
    // A valid AEP event of the relay's own audit session, so any AEP reader can carry it.
    const event = {
      aep: '0.1',
      id: randomUUID(),
      type: CHECKPOINT_TYPE,
      source: `aep://relay/agent/${RELAY_AGENT}/session/${AUDIT_SESSION}`,
      agent: RELAY_AGENT,
      session: AUDIT_SESSION,
      seq,
      time: new Date(t).toISOString(),
      data: { key_id: keyId(key.publicKey), heads, sig: signHeads(heads, key.privateKey) },
    };
    const raw = JSON.stringify(event);
    this.q.keep.run(t, raw);
    this.unsigned.clear();
    this.sinceCheckpoint = 0;
    this.lastCheckpoint = t;
    this.made.push(raw);
  }
}

/**
 * The statements that keep an evicted row's place and hash before the store deletes it: each
 * selects exactly the rows of the delete with the same parameters.
 */
export function goneStatements(db: SqlDatabase) {
  const keep = (where: string) =>
    db.prepare(
      `INSERT OR IGNORE INTO chain_gone (source, n, prev) SELECT source, n, prev FROM events WHERE n IS NOT NULL AND ${where}`,
    );
  return {
    positionedUpTo: keep('session = ? AND epoch IS NOT NULL AND (epoch < ? OR (epoch = ? AND seq <= ?))'),
    oldestUnpositioned: keep(
      'arrival IN (SELECT arrival FROM events WHERE session = ? AND epoch IS NULL ORDER BY arrival LIMIT ?)',
    ),
    unpositionedBefore: keep('session = ? AND epoch IS NULL AND arrival < ?'),
    session: keep('session = ?'),
  };
}
