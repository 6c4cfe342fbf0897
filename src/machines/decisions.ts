// The per-session dedupe record (D4, AEP-0004 §3) as an append-only set of small chunks: adding
// a decision copies at most one chunk, so a session that receives many commands stays linear.
import type { AckDecision, Decisions } from './session-types.js';

export const DECISION_CHUNK = 64;

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
  if (Object.keys(recent).length >= DECISION_CHUNK) return { recent: {}, sealed: [...d.sealed, recent] };
  return { recent, sealed: d.sealed };
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
