// D47: walks one hash chain as it is stored and names the first record that was changed,
// removed, inserted or reordered, and the signed checkpoint each break contradicts. The same walk
// serves an adapter log (one chain, its lines) and a relay store (a chain per source, its rows).
import type { ChainHead } from '../protocol/chain.js';

/** One stored record of a chain: where it is, its place and predecessor as stored, its own hash. */
export interface Link {
  /** Where a reader finds it: `file:line`, or `arrival N`. */
  at: string;
  n: number;
  p: string;
  h: string;
}

/** A signed head the relay put on the stream, already checked against the relay's key. */
export interface Checkpoint {
  /** Which checkpoint: its event id. */
  id: string;
  n: number;
  head: string;
}

type BreakKind = 'changed' | 'removed' | 'inserted' | 'reordered';

export interface ChainBreak {
  chain: string;
  kind: BreakKind;
  /** The record named (or, for a removal, the one after the gap). */
  at: string;
  n: number;
  detail: string;
  /** The first checkpoint at or after the break: the signed head it contradicts. */
  contradicts?: string;
}

export interface WalkOptions {
  /** Where the chain stands before the first record kept (a compacted log's header); absent: not known. */
  start?: ChainHead;
  /** Records up to this place may be missing: the store evicted them (its buffer, D24). */
  floor?: number;
  checkpoints?: readonly Checkpoint[];
}

/** Every break of one chain, in stored order, each named once. */
export function walkChain(chain: string, links: readonly Link[], opts: WalkOptions = {}): ChainBreak[] {
  const floor = opts.floor ?? 0;
  const byHash = new Map<string, number>();
  links.forEach((l, i) => {
    byHash.set(l.h, i);
  });
  const breaks: ChainBreak[] = [];
  const named = new Set<string>();
  const add = (kind: BreakKind, l: Link, detail: string): void => {
    if (named.has(l.at)) return;
    named.add(l.at);
    breaks.push({ chain, kind, at: l.at, n: l.n, detail });
  };
  let prev: ChainHead | undefined = opts.start;
  for (let i = 0; i < links.length; i += 1) {
    const l = links[i]!;
    const before = i > 0 ? links[i - 1] : undefined;
    if (prev === undefined) {
      if (l.n - 1 > floor) add('removed', l, `records ${floor + 1}–${l.n - 1} are missing before it`);
    } else if (l.n === prev.n + 1 && l.p === prev.head) {
      // Linked as written.
    } else if (l.n > prev.n && l.n - 1 <= floor) {
      // The records between were evicted by the store; the link cannot be checked.
    } else {
      const found = classify(l, i, prev, before, links, byHash, add);
      // A stray record is stepped over; two records that traded places are named once, and the
      // walk goes on after both.
      if (found === 'stray') continue;
      if (found === 'swapped') {
        i += 1;
        prev = { n: l.n, head: l.h };
        continue;
      }
    }
    prev = { n: l.n, head: l.h };
  }
  checkHeads(links, floor, opts.checkpoints ?? [], add);
  breaks.sort((a, b) => a.n - b.n);
  for (const b of breaks) {
    const c = (opts.checkpoints ?? []).filter((x) => x.n >= b.n).sort((x, y) => x.n - y.n)[0];
    if (c !== undefined) b.contradicts = c.id;
  }
  return breaks;
}

/** Why a record does not link to the one stored before it: `swapped` when it and the next traded places, `stray` when it does not belong. */
function classify(
  l: Link,
  i: number,
  prev: ChainHead,
  before: Link | undefined,
  links: readonly Link[],
  byHash: Map<string, number>,
  add: (kind: BreakKind, l: Link, detail: string) => void,
): 'swapped' | 'stray' | undefined {
  const x = byHash.get(l.p);
  const next = links[i + 1];
  const after = links[i + 2];
  if (x === i + 1 && next!.p === prev.head && (after === undefined || after.p === l.h)) {
    // It links to the record after it, which links to the one before: the two traded places.
    add('reordered', l, `it belongs after ${next!.at}`);
    return 'swapped';
  }
  if (next !== undefined && before !== undefined && next.p === before.h && next.n === before.n + 1) {
    // The record after it continues from the one before it: this one does not belong.
    add('inserted', l, `${next.at} links past it to ${before.at}`);
    return 'stray';
  } else if (l.p === prev.head) {
    add('changed', l, `its place reads ${l.n} where ${prev.n + 1} belongs`);
  } else if (x !== undefined && x > i) {
    add('reordered', l, `it belongs after ${links[x]!.at}`);
  } else if (x !== undefined && x < i - 1) {
    // The records between the one it links to and it do not belong.
    for (let j = x + 1; j < i; j += 1) add('inserted', links[j]!, `${l.at} links past it to ${links[x]!.at}`);
  } else if (l.n > prev.n + 1) {
    add('removed', l, `records ${prev.n + 1}–${l.n - 1} are missing before it`);
  } else if (before !== undefined) {
    add('changed', before, `its text no longer hashes to what ${l.at} holds`);
  } else {
    add('changed', l, 'it does not continue the head the chain starts from');
  }
  return undefined;
}

/** Each signed head must be a kept record's hash; one past the last kept record says records went. */
function checkHeads(
  links: readonly Link[],
  floor: number,
  checkpoints: readonly Checkpoint[],
  add: (kind: BreakKind, l: Link, detail: string) => void,
): void {
  const byN = new Map<number, Link>();
  for (const l of links) if (!byN.has(l.n)) byN.set(l.n, l);
  const last = links.at(-1);
  for (const c of checkpoints) {
    if (c.n <= floor || c.n === 0) continue;
    const l = byN.get(c.n);
    if (l !== undefined && l.h !== c.head) add('changed', l, `checkpoint ${c.id} signed another text here`);
    else if (l === undefined && last !== undefined && c.n > last.n)
      add('removed', { ...last, at: `after ${last.at}`, n: last.n + 1 }, `checkpoint ${c.id} signed ${c.n} records`);
    else if (l === undefined && last !== undefined) {
      const next = links.find((x) => x.n > c.n) ?? last;
      add('removed', next, `record ${c.n}, which checkpoint ${c.id} signed, is missing`);
    }
  }
}
