// A consumer's live view of the relay (the inspect page, the console, the MCP server): the stream
// folded through the same steering fold the audit uses (audit/lifecycle.ts), plus the relay's
// roster (who claims each session and what it declares).
import type { AepEvent } from '../protocol/envelope.js';
import { SteeringFold } from '../audit/lifecycle.js';
import type { InstructionRecord, SessionView } from '../audit/views.js';
import type { RosterEntry } from './connection.js';
import { acceptsOf } from './roster.js';
import type { RequestDecision } from '../audit/decisions.js';

export interface BoardSession extends SessionView {
  /** Live claimants on the relay (0 = not live; more than 1 = ambiguous). */
  claimants: number;
  /** Control verbs the claimant declares (hello `control.accepts`), when exactly one claims it. */
  accepts?: string[];
  /**
   * Set when the board knows the session from the roster only (its events are still on their
   * way to this consumer): the relay's count of accepted, unsettled instructions.
   */
  relayQueued?: number;
  /** D37, from the roster: live yet silent past its vendor's stale window; its cwd and title. */
  stale?: boolean;
  cwd?: string;
  title?: string;
  /** D43, from the roster: a turn can be started in it (instruct with idle start). */
  startable?: boolean;
}

/** What the roster's entry says about the session beyond its claim (D37). */
function described(b: BoardSession, r: RosterEntry | undefined): BoardSession {
  if (r === undefined) return b;
  if (r.stale === true) b.stale = true;
  if (typeof r.cwd === 'string') b.cwd = r.cwd;
  if (typeof r.title === 'string') b.title = r.title;
  if (typeof r.startable === 'boolean') b.startable = r.startable;
  return b;
}

export interface BoardEvent {
  id: string;
  time: string;
  type: string;
  session?: string;
  agent: string;
  cause?: string;
  seq?: number;
}

export interface BoardSnapshot {
  relay: { url: string; connected: boolean; error?: string };
  sessions: BoardSession[];
  instructions: InstructionRecord[];
  recent: BoardEvent[];
  events: number;
  /** D46: the requests that ended, newest last, with who decided each. */
  decisions?: RequestDecision[];
}

const RECENT = 50;
const DECISIONS_SHOWN = 200;

function fromRoster(session: string, live: RosterEntry[]): BoardSession {
  const r = live[0]!;
  const queued = typeof r.queued === 'number' ? r.queued : 0;
  const b: BoardSession = {
    session,
    state: r.state === 'ended' ? 'ended' : queued > 0 ? 'queued' : 'idle',
    queue: [],
    holds: [],
    events: 0,
    updatedAt: r.last_event_at ?? '',
    claimants: live.length,
    relayQueued: queued,
  };
  if (r.agent !== undefined) b.agent = r.agent;
  if (r.running === true) b.running = true;
  const accepts = live.length === 1 ? acceptsOf(r) : undefined;
  if (accepts) b.accepts = accepts;
  return described(b, r);
}

export class Board {
  private readonly fold = new SteeringFold();
  private roster: RosterEntry[] = [];
  private readonly recent: BoardEvent[] = [];
  private events = 0;
  connected = false;
  error: string | undefined;

  constructor(readonly relayUrl: string) {}

  /** Folds one event; false for a redelivery (nothing changed). */
  apply(e: AepEvent): boolean {
    if (!this.fold.apply(e)) return false;
    this.events += 1;
    const b: BoardEvent = { id: e.id, time: e.time, type: e.type, agent: e.agent };
    if (e.session !== undefined) b.session = e.session;
    if (e.cause !== undefined) b.cause = e.cause;
    if (typeof e.seq === 'number') b.seq = e.seq;
    this.recent.unshift(b);
    if (this.recent.length > RECENT) this.recent.length = RECENT;
    return true;
  }

  setRoster(entries: RosterEntry[]): boolean {
    const before = JSON.stringify(this.roster);
    this.roster = entries;
    return before !== JSON.stringify(entries);
  }

  snapshot(): BoardSnapshot {
    const claims = new Map<string, RosterEntry[]>();
    for (const r of this.roster) if (r.offline !== true) claims.set(r.session, [...(claims.get(r.session) ?? []), r]);
    const sessions: BoardSession[] = this.fold.sessions().map((s) => {
      const live = claims.get(s.session) ?? [];
      const b: BoardSession = { ...s, claimants: live.length };
      const accepts = live.length === 1 ? acceptsOf(live[0]!) : undefined;
      if (accepts) b.accepts = accepts;
      return described(b, live[0]);
    });
    // The roster and the stream arrive on different sockets: a session the relay lists is on the
    // board even before its events reach this consumer, described by what the roster says.
    const folded = new Set(sessions.map((s) => s.session));
    for (const [session, live] of claims) if (!folded.has(session)) sessions.push(fromRoster(session, live));
    // Live sessions first, then by most recent activity.
    sessions.sort(
      (a, b) => Number(b.claimants > 0) - Number(a.claimants > 0) || b.updatedAt.localeCompare(a.updatedAt),
    );
    const relay: BoardSnapshot['relay'] = { url: this.relayUrl, connected: this.connected };
    if (this.error !== undefined) relay.error = this.error;
    const decisions = this.fold.requestDecisions().slice(-DECISIONS_SHOWN);
    return {
      relay,
      sessions,
      instructions: this.fold.instructions(),
      recent: [...this.recent],
      events: this.events,
      decisions,
    };
  }
}
