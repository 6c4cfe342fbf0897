// The roster (AEP-0003 §4.1): one entry per live (connection, claimed session) pair, never
// merged, and with `offline` one per session the relay holds history of and no one claims
// (D37); each entry says what the session's events say about it (D26, D37).
import { captureRank } from '../protocol/envelope.js';
import { ceilingFor, type Principal } from './acl.js';
import { andThen } from './maybe.js';
import type { SessionSummaries } from './session-summary.js';
import type { Maybe } from './session-store.js';
import type { Peer, RosterEntry } from './types.js';

export interface RosterOptions {
  viewer?: Principal;
  offline?: boolean;
  now?: number;
}

/** `title` is redacted-class: only a viewer whose ceiling allows `redacted` gets it. */
export function roster(
  claimants: Iterable<Peer>,
  summaries: SessionSummaries,
  sessionIds: () => Maybe<string[]>,
  opts: RosterOptions,
): Maybe<RosterEntry[]> {
  const now = opts.now ?? Date.now();
  const titles =
    opts.viewer === undefined || captureRank(ceilingFor(opts.viewer, undefined) ?? 'full') >= captureRank('redacted');
  const entries: RosterEntry[] = [];
  const claimed = new Set<string>();
  for (const p of claimants) {
    if (p.role === 'consumer') continue;
    for (const session of p.claims) {
      claimed.add(session);
      const e: RosterEntry = { session };
      if (p.identity.agent !== undefined) e.agent = p.identity.agent;
      if (p.identity.instance !== undefined) e.instance = p.identity.instance;
      if (p.control !== undefined) e.control = p.control;
      if (p.emits !== undefined) e.emits = p.emits;
      entries.push(summarised(summaries, e, now, titles));
    }
  }
  if (opts.offline !== true) return entries;
  return andThen(sessionIds(), (ids) => {
    for (const session of ids) {
      if (claimed.has(session)) continue;
      const agent = summaries.about(session).agent;
      entries.push(
        summarised(summaries, { session, ...(agent === undefined ? {} : { agent }), offline: true }, now, titles),
      );
    }
    return entries;
  });
}

/** An entry with what the session's events say about it (D26, D37). */
function summarised(summaries: SessionSummaries, e: RosterEntry, now: number, titles: boolean): RosterEntry {
  const summary = summaries.get(e.session);
  const about = summaries.about(e.session);
  e.state = summary.state;
  if (summary.lastEventAt !== undefined) e.last_event_at = summary.lastEventAt;
  e.queued = summary.queued;
  if (summary.running === true) e.running = true;
  if (about.cwd !== undefined) e.cwd = about.cwd;
  if (titles && about.title !== undefined) e.title = about.title;
  if (about.lanes !== undefined) e.lanes = about.lanes;
  if (about.startable !== undefined) e.startable = about.startable;
  if (about.paused === true) e.paused = true;
  if (about.spawnedBy !== undefined) e.spawned_by = about.spawnedBy;
  if (about.staleAfterMs !== undefined) {
    e.stale_after_ms = about.staleAfterMs;
    const last = summary.lastEventAt === undefined ? Number.NaN : Date.parse(summary.lastEventAt);
    if (summary.state === 'live' && now - last > about.staleAfterMs) e.stale = true;
  }
  return e;
}
