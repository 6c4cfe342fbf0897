// D47: checks a relay's SQLite store: each source's chain of rows (in the order they arrived,
// rows the buffer evicted standing in by the place and hash they left), and each checkpoint the
// relay signed, against the relay's public key. A checkpoint whose signature does not verify is
// named; one that does vouches for the heads it signed, which the rows must still reach.
import type { KeyObject } from 'node:crypto';
import { existsSync } from 'node:fs';
import { SteeringError } from '../protocol/errors.js';
import { CHECKPOINT_TYPE, FIRST, rowHash, verifyHeads, type SignedHead } from '../protocol/chain.js';
import { openDatabase, type SqlDatabase } from '../relay/sqlite.js';
import { walkChain, type ChainBreak, type Checkpoint, type Link } from './chain-walk.js';

export interface StoreVerdict {
  path: string;
  sources: number;
  rows: number;
  /** Rows an older version stored without a place in a chain. */
  unlinked: number;
  checkpoints: number;
  /** Checkpoints whose signature the key does not verify (another key, or an edited checkpoint). */
  badCheckpoints: { id: string; detail: string }[];
  breaks: ChainBreak[];
}

export type Gone = { source: string; n: number; prev: string };
export type Row = { arrival: number; source: string; n: number | null; prev: string | null; raw: string };

interface CheckpointData {
  key_id?: unknown;
  heads?: unknown;
  sig?: unknown;
}

/** What a verify reads of a store: from its file, or page by page from a relay (`GET /audit/rows`). */
export interface StoreData {
  rows: Row[];
  gone: Gone[];
  checkpoints: { k: number; raw: string }[];
  /** Each source's head as the store keeps it. */
  heads: Map<string, { n: number; head: string }>;
}

/** The signed heads of the store's checkpoints, per source; bad ones are listed apart. */
function readCheckpoints(
  list: StoreData['checkpoints'],
  key: KeyObject | undefined,
  bad: StoreVerdict['badCheckpoints'],
) {
  const bySource = new Map<string, Checkpoint[]>();
  for (const r of list) {
    let id = `checkpoint ${r.k}`;
    let data: CheckpointData;
    try {
      const e = JSON.parse(r.raw) as { id?: string; type?: string; data?: CheckpointData };
      if (e.type !== CHECKPOINT_TYPE) throw new Error(`its type is ${e.type}`);
      id = `checkpoint ${e.id ?? r.k}`;
      data = e.data ?? {};
    } catch (err) {
      bad.push({ id, detail: `not a readable checkpoint: ${(err as Error).message}` });
      continue;
    }
    const heads = Array.isArray(data.heads) ? (data.heads as SignedHead[]) : [];
    if (key === undefined) continue;
    if (typeof data.sig !== 'string' || !verifyHeads(heads, data.sig, key)) {
      bad.push({ id, detail: "its signature does not verify with the relay's public key" });
      continue;
    }
    for (const h of heads) {
      const list = bySource.get(h.source) ?? [];
      list.push({ id, n: h.n, head: h.head });
      bySource.set(h.source, list);
    }
  }
  return bySource;
}

/** Opens a store file without creating one where none is. */
function openStore(path: string): SqlDatabase {
  if (!existsSync(path))
    throw new SteeringError('CONFIG_INVALID', `no relay store at ${path}; give the relay's --store file`);
  return openDatabase(path);
}

/** Reads what a verify checks from the SQLite store at `path`. */
function readStore(path: string): StoreData {
  const db = openStore(path);
  try {
    const rows = db.prepare('SELECT arrival, source, n, prev, raw FROM events ORDER BY arrival').all() as Row[];
    const gone = db.prepare('SELECT source, n, prev FROM chain_gone ORDER BY source, n').all() as Gone[];
    const checkpoints = db.prepare('SELECT k, raw FROM checkpoints ORDER BY k').all() as StoreData['checkpoints'];
    const heads = db.prepare('SELECT source, n, head FROM chain_heads').all() as {
      source: string;
      n: number;
      head: string;
    }[];
    return { rows, gone, checkpoints, heads: new Map(heads.map((h) => [h.source, { n: h.n, head: h.head }])) };
  } finally {
    db.close();
  }
}

/** Checks every chain and checkpoint of the SQLite store at `path`; `key`: the relay's public key. */
export function verifyStore(path: string, key: KeyObject | undefined): StoreVerdict {
  return verifyStoreData(path, readStore(path), key);
}

/** Checks every chain and checkpoint of a store's data; `path` names where it was read. */
export function verifyStoreData(path: string, data: StoreData, key: KeyObject | undefined): StoreVerdict {
  const { rows, gone } = data;
  const badCheckpoints: StoreVerdict['badCheckpoints'] = [];
  const signedBySource = readCheckpoints(data.checkpoints, key, badCheckpoints);
  const chains = new Map<string, Link[]>();
  let unlinked = 0;
  for (const r of rows) {
    if (r.n === null || r.prev === null) {
      unlinked += 1;
      continue;
    }
    const list = chains.get(r.source) ?? [];
    list.push({ at: `row ${r.arrival}`, n: r.n, p: r.prev, h: rowHash(r.n, r.prev, r.raw) });
    chains.set(r.source, list);
  }
  for (const g of gone) if (!chains.has(g.source)) chains.set(g.source, []);
  const breaks: ChainBreak[] = [];
  for (const [source, links] of chains) {
    const withGone = mergeGone(
      links,
      gone.filter((g) => g.source === source),
    );
    // An evicted place with nothing after it left no hash to check a signed head against.
    const unknown = new Set(withGone.filter((l) => l.h.startsWith('evicted')).map((l) => l.n));
    const own = data.heads.get(source);
    // The head the store itself keeps: unsigned, but a deleted last row leaves it behind.
    const kept: Checkpoint[] = own === undefined ? [] : [{ id: "the store's own head", ...own }];
    const signed = [...(signedBySource.get(source) ?? []), ...kept].filter((c) => !unknown.has(c.n));
    breaks.push(...walkChain(source, withGone, { ...chainStart(withGone), checkpoints: signed }));
  }
  return {
    path,
    sources: chains.size,
    rows: rows.length - unlinked,
    unlinked,
    checkpoints: data.checkpoints.length,
    badCheckpoints,
    breaks,
  };
}

/**
 * Puts the places evicted rows left among the stored rows, each before the first row placed
 * after it. Its text is gone: its link is checked; its hash is what the record after it names
 * (nothing can check that one link, and nothing is lost: the row it stood for is gone anyway).
 */
function mergeGone(links: readonly Link[], gone: readonly Gone[]): Link[] {
  const out: Link[] = [];
  let g = 0;
  const evicted = (x: Gone): Link => ({ at: `evicted ${x.n}`, n: x.n, p: x.prev, h: `evicted ${x.n}` });
  for (const l of links) {
    while (g < gone.length && gone[g]!.n < l.n) out.push(evicted(gone[g++]!));
    out.push(l);
  }
  while (g < gone.length) out.push(evicted(gone[g++]!));
  const linkTo = new Map(out.map((l) => [l.n - 1, l.p]));
  for (const l of out) if (l.at.startsWith('evicted')) l.h = linkTo.get(l.n) ?? l.h;
  return out;
}

/**
 * Where a source's chain starts: its first record, or, when the store pruned the evicted places
 * below its oldest row (it keeps the highest of them), that place: the records before it were
 * evicted, and nothing is left to check them against.
 */
function chainStart(links: readonly Link[]): { start: typeof FIRST } | { floor: number } {
  const first = links[0];
  return first?.at.startsWith('evicted') && first.n > 1 ? { floor: first.n - 1 } : { start: FIRST };
}
