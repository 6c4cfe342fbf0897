// The per-session dedupe record (D4, AEP-0004 §3) as an append-only set of immutable chunks.
// New keys go to a small `recent` chunk, copied on each add; a full one is sealed, and every run
// of FAN sealed chunks of one size is merged into one chunk (a log-structured merge). Each key is
// copied O(log n) times and a lookup reads O(log n) chunks, so a session that receives many
// commands stays fast, live and when its log is replayed at start.
import type { AckDecision, Decisions } from './session-context.js';

export const DECISION_CHUNK = 16;
/** Sealed chunks of one size merged into one. */
export const DECISION_FAN = 8;

type Chunk = Readonly<Record<string, AckDecision>>;

/** Sizes of sealed chunks: immutable, so each is counted once (one read from a snapshot, on first use). */
const sizes = new WeakMap<Chunk, number>();
const sizeOf = (c: Chunk): number => {
  let n = sizes.get(c);
  if (n === undefined) {
    n = Object.keys(c).length;
    sizes.set(c, n);
  }
  return n;
};

export const noDecisions = (): Decisions => ({ recent: {}, sealed: [] });

export function decisionOf(d: Decisions, key: string): AckDecision | undefined {
  if (Object.hasOwn(d.recent, key)) return d.recent[key];
  for (let i = d.sealed.length - 1; i >= 0; i -= 1) {
    const chunk = d.sealed[i]!;
    if (Object.hasOwn(chunk, key)) return chunk[key];
  }
  return undefined;
}

/** A new record with `key` decided; `d` is left as it was. A key is decided once only. */
export function withDecision(d: Decisions, key: string, decision: AckDecision): Decisions {
  const recent = { ...d.recent, [key]: decision };
  const size = Object.keys(recent).length;
  if (size < DECISION_CHUNK) return { recent, sealed: d.sealed };
  sizes.set(recent, size);
  const sealed = [...d.sealed, recent];
  for (;;) {
    const last = sizeOf(sealed[sealed.length - 1]!);
    let run = 1;
    while (run < DECISION_FAN && run < sealed.length && sizeOf(sealed[sealed.length - 1 - run]!) === last) run += 1;
    if (run < DECISION_FAN) break;
    // Oldest first, so keys keep their order.
    const merged: Chunk = Object.assign({}, ...sealed.splice(sealed.length - DECISION_FAN, DECISION_FAN));
    sizes.set(merged, last * DECISION_FAN);
    sealed.push(merged);
  }
  return { recent: {}, sealed };
}

export function decisionsFrom(entries: Readonly<Record<string, AckDecision>>): Decisions {
  let d = noDecisions();
  for (const [k, v] of Object.entries(entries)) d = withDecision(d, k, v);
  return d;
}

export function decisionCount(d: Decisions): number {
  return d.sealed.reduce((n, c) => n + Object.keys(c).length, Object.keys(d.recent).length);
}

export function decisionKeys(d: Decisions): string[] {
  return [...d.sealed.flatMap((c) => Object.keys(c)), ...Object.keys(d.recent)];
}
