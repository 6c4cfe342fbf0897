// Reading the relay's roster (AEP-0003 §4.1) as a consumer: who claims a session, what each
// claimant declares, and whether a command to the session can be routed at all (AEP-0004 §4.4).
import type { RosterEntry } from './connection.js';

/** The one claimant of a session, or a refusal that says why a command could not be routed (AEP-0004 §4.4). */
export function claimantOf(roster: RosterEntry[], session: string): { entry: RosterEntry } | { code: 'no-route' | 'ambiguous'; detail: string } {
  const entries = roster.filter((r) => r.session === session);
  if (entries.length === 0) return { code: 'no-route', detail: `session ${session} has no live claimant on the relay` };
  if (entries.length > 1) return { code: 'ambiguous', detail: `session ${session} is claimed by ${entries.length} connections` };
  return { entry: entries[0]! };
}

export const acceptsOf = (entry: RosterEntry): string[] | undefined => {
  const accepts = (entry.control as { accepts?: unknown } | undefined)?.accepts;
  return Array.isArray(accepts) ? accepts.filter((t): t is string => typeof t === 'string') : undefined;
};

export interface SessionRow {
  session: string;
  agent?: string;
  instance?: string;
  /** `ended` once the end moment passed (the relay's roster, D26). */
  state: 'live' | 'ended';
  /** When the session last did something (ISO time). */
  lastEventAt?: string;
  /** Accepted instructions still waiting for a moment. */
  queued: number;
  /** Claimants of this session; more than one means a command to it is refused `ambiguous`. */
  claimants: number;
  accepts: string[];
  /** The steering verb this claimant takes, when declared. */
  instruct?: string;
  respond: boolean;
}

export function rowsFrom(roster: RosterEntry[]): SessionRow[] {
  const counts = new Map<string, number>();
  for (const r of roster) counts.set(r.session, (counts.get(r.session) ?? 0) + 1);
  return roster.map((r) => {
    const accepts = acceptsOf(r) ?? [];
    const row: SessionRow = {
      session: r.session, state: r.state === 'ended' ? 'ended' : 'live', queued: typeof r.queued === 'number' ? r.queued : 0,
      claimants: counts.get(r.session)!, accepts, respond: accepts.includes('control.attention.respond'),
    };
    if (r.agent !== undefined) row.agent = r.agent;
    if (r.instance !== undefined) row.instance = r.instance;
    if (typeof r.last_event_at === 'string') row.lastEventAt = r.last_event_at;
    const instruct = accepts.find((t) => /^x\.[a-z0-9_-]+\.control\.instruct$/.test(t));
    if (instruct) row.instruct = instruct;
    return row;
  });
}
