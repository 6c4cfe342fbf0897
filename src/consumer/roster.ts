// Reading the relay's roster (AEP-0003 §4.1) as a consumer: who claims a session, what each
// claimant declares, and whether a command to the session can be routed at all (AEP-0004 §4.4).
import type { RosterRefusalCode } from '../protocol/errors.js';
import type { RelayConsumer, RosterEntry } from './connection.js';

/** The one claimant of a session, or a refusal that says why a command could not be routed (AEP-0004 §4.4). */
function claimantOf(roster: RosterEntry[], session: string): Route {
  const entries = roster.filter((r) => r.session === session && r.offline !== true);
  if (entries.length === 0) return { code: 'no-route', detail: `session ${session} has no live claimant on the relay` };
  if (entries.length > 1)
    return { code: 'ambiguous', detail: `session ${session} is claimed by ${entries.length} connections` };
  return { entry: entries[0]! };
}

export const acceptsOf = (entry: RosterEntry): string[] | undefined => {
  const accepts = (entry.control as { accepts?: unknown } | undefined)?.accepts;
  return Array.isArray(accepts) ? accepts.filter((t): t is string => typeof t === 'string') : undefined;
};

/**
 * D26, D37: `ended` once the end moment passed; `stale` while live but silent past the vendor's
 * stale window; `adapter offline` when no adapter claims it (the relay's history knows it).
 */
type RowState = 'live' | 'stale' | 'ended' | 'adapter offline';

export interface SessionRow {
  session: string;
  agent?: string;
  instance?: string;
  state: RowState;
  /** D37: the working directory, and the first prompt's first line (capture ≥ redacted only). */
  cwd?: string;
  title?: string;
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
  /** D30: the lanes that reach the session (`hook`, and a native one such as `app-server`), as its adapter last said. */
  lanes?: string[];
  /** D43: a turn can be started in it (`instruct --start`), as its adapter last said. */
  startable?: boolean;
  /** D43: a turn runs in it now, so a start would go into that turn rather than begin one. */
  running?: boolean;
  /** D44: its queue is paused: nothing but a steer is delivered until resumed. */
  paused?: boolean;
  /** D45: who spawned it: the spawner's identity, its spawn command, its own session. */
  spawnedBy?: { identity: string; command: string; parent?: string };
}

export function rowsFrom(roster: RosterEntry[]): SessionRow[] {
  const counts = new Map<string, number>();
  for (const r of roster) if (r.offline !== true) counts.set(r.session, (counts.get(r.session) ?? 0) + 1);
  return roster.map((r) => {
    const accepts = acceptsOf(r) ?? [];
    const state: RowState =
      r.offline === true ? 'adapter offline' : r.state === 'ended' ? 'ended' : r.stale === true ? 'stale' : 'live';
    const row: SessionRow = {
      session: r.session,
      state,
      queued: typeof r.queued === 'number' ? r.queued : 0,
      claimants: counts.get(r.session) ?? 0,
      accepts,
      respond: accepts.includes('control.attention.respond'),
    };
    if (r.agent !== undefined) row.agent = r.agent;
    if (r.instance !== undefined) row.instance = r.instance;
    if (typeof r.last_event_at === 'string') row.lastEventAt = r.last_event_at;
    if (typeof r.cwd === 'string') row.cwd = r.cwd;
    if (typeof r.title === 'string') row.title = r.title;
    if (Array.isArray(r.lanes)) row.lanes = r.lanes.filter((l): l is string => typeof l === 'string');
    if (typeof r.startable === 'boolean') row.startable = r.startable;
    if (r.running === true) row.running = true;
    if (r.paused === true) row.paused = true;
    if (r.spawned_by !== undefined) row.spawnedBy = r.spawned_by;
    const instruct = accepts.find((t) => /^x\.[a-z0-9_-]+\.control\.instruct$/.test(t));
    if (instruct) row.instruct = instruct;
    return row;
  });
}

/**
 * Why a session has no claimant, from the roster with its offline entries (D37): its adapter is
 * not connected (the relay knows the session), or the relay never heard of it.
 */
function whyNoRoute(
  roster: RosterEntry[],
  session: string,
): { code: RosterRefusalCode; detail: string; vendor?: string } {
  const known = roster.find((r) => r.session === session);
  if (known === undefined) return { code: 'no-route', detail: `session ${session} has no live claimant on the relay` };
  const vendor = known.agent ?? '<vendor>';
  return {
    code: 'adapter-offline',
    detail: `session ${session} (${vendor}) is known to the relay, but its adapter is not connected`,
    ...(known.agent === undefined ? {} : { vendor: known.agent }),
  };
}

/** D37: a `--vendor` that is not the session's own, said with the vendor the session is. */
function vendorMismatch(
  entry: RosterEntry,
  session: string,
  asked: string,
): { code: RosterRefusalCode; detail: string } | undefined {
  if (entry.agent === undefined || entry.agent === asked) return undefined;
  const detail = `session ${session} is a ${entry.agent} session, not ${asked}`;
  return { code: 'vendor-mismatch', detail };
}

/**
 * The session's one claimant, or the refusal a sender gives before sending (AEP-0004 §4.4, D37):
 * `adapter-offline` / `no-route` read from the relay's history, `ambiguous`, `vendor-mismatch`.
 */
export type Route = { entry: RosterEntry } | { code: RosterRefusalCode; detail: string; vendor?: string };

export async function routeOf(consumer: RelayConsumer, session: string, vendor?: string): Promise<Route> {
  const found = claimantOf(await consumer.roster(), session);
  if ('code' in found)
    return found.code === 'no-route' ? whyNoRoute(await consumer.roster({ offline: true }), session) : found;
  return (vendor === undefined ? undefined : vendorMismatch(found.entry, session, vendor)) ?? found;
}
