// What the roster says about each session beyond who claims it (D26, D37): whether it has ended,
// when its agent last did something, how many accepted instructions are still waiting, and what
// the adapter described it as (vendor, working directory, title, stale window). Derived only from
// the events the relay carries, so every relay binding and a restarted relay agree.
import type { AepEvent } from '../protocol/envelope.js';
import { endedInstruction } from '../protocol/instruction-end.js';
import { isAgentActivity } from '../protocol/types.js';

export interface SessionSummary {
  state: 'live' | 'ended';
  /** `time` of the session's latest event from its agent (never an adapter's answer to a command, D37). */
  lastEventAt?: string;
  /** Instructions acked `control.accepted` and neither delivered nor dropped yet. */
  queued: number;
  /** D43: a turn runs (`run.started`, not yet ended): a live session may be idle only between turns. */
  running?: true;
}

/** What the session's events say it is (D37). */
export interface SessionAbout {
  /** The envelope `agent` of the session's events (the vendor token). */
  agent?: string;
  /** From `x.{vendor}.session.described` (D37): `title` is redacted-class. */
  cwd?: string;
  title?: string;
  /** The vendor's stale window: live with no agent event for this long shows `stale` (D37). */
  staleAfterMs?: number;
  /** D30: the lanes that reach the session (`hook`, and a native one such as `app-server`), as last described. */
  lanes?: string[];
  /** D43: a turn can be started in it from outside, as last described. */
  startable?: boolean;
  /** D44: its sender paused its queue (`x.{vendor}.queue.held`), until resumed. */
  paused?: boolean;
  /** D45: who spawned it, as first described: the spawner's identity, its command, its own session. */
  spawnedBy?: SpawnedBy;
}

/** D45: `spawned_by` of `x.{vendor}.session.described`. */
interface SpawnedBy {
  identity: string;
  command: string;
  parent?: string;
}

function spawnedByOf(v: unknown): SpawnedBy | undefined {
  const o = v as Record<string, unknown> | undefined;
  if (typeof o?.['identity'] !== 'string' || typeof o['command'] !== 'string') return undefined;
  return {
    identity: o['identity'],
    command: o['command'],
    ...(typeof o['parent'] === 'string' ? { parent: o['parent'] } : {}),
  };
}

/** What the events say of the session, and its instructions in flight. */
interface Cell extends SessionAbout {
  ended: boolean;
  lastEventAt?: string;
  /** Instruct commands seen, until they settle. */
  sent: Set<string>;
  /** Accepted instructs, until delivered or dropped. */
  pending: Set<string>;
  running?: true;
}

const INSTRUCT = /^x\.[a-z0-9_-]+\.control\.instruct$/;
const CLOSED = /^x\.[a-z0-9_-]+\.session\.closed$/;
const REOPENED = /^x\.[a-z0-9_-]+\.session\.reopened$/;
const DESCRIBED = /^x\.[a-z0-9_-]+\.session\.described$/;
const HELD = /^x\.[a-z0-9_-]+\.queue\.held$/;
const RUN_ENDS = new Set(['run.finished', 'run.failed', 'run.cancelled']);

/** Steps one cell with one event; redelivered events change nothing (every update is idempotent). */
function apply(c: Cell, e: AepEvent): void {
  // Only vendor types (`x.…`) can match the vendor patterns; the test is per relayed event.
  const vendor = e.type.startsWith('x.');
  if (vendor && INSTRUCT.test(e.type)) {
    c.sent.add(e.id);
    return;
  }
  if (e.seq !== undefined && isAgentActivity(e.type)) c.lastEventAt = e.time;
  if (e.seq !== undefined) c.agent ??= e.agent;
  const cause = e.cause;
  const ended = vendor ? endedInstruction(e) : undefined;
  if (e.type === 'control.accepted' && cause !== undefined && c.sent.has(cause)) c.pending.add(cause);
  else if (e.type === 'control.rejected' && cause !== undefined) c.sent.delete(cause);
  else if (ended !== undefined) {
    c.pending.delete(ended);
    c.sent.delete(ended);
  } else if (e.type === 'session.ended' || (vendor && CLOSED.test(e.type))) c.ended = true;
  else if (e.type === 'session.started' || (vendor && REOPENED.test(e.type))) c.ended = false;
  else if (vendor && DESCRIBED.test(e.type)) describe(c, e.data ?? {});
  else if (vendor && HELD.test(e.type)) c.paused = e.data?.['paused'] === true ? true : undefined;
  else if (e.type === 'run.started') c.running = true;
  else if (RUN_ENDS.has(e.type)) c.running = undefined;
  if (c.ended) c.running = undefined;
}

/** The working directory as last described, the first title, the stale window as last declared. */
function describe(c: Cell, d: Record<string, unknown>): void {
  if (typeof d['cwd'] === 'string') c.cwd = d['cwd'];
  if (typeof d['title'] === 'string') c.title ??= d['title'];
  if (typeof d['stale_after_ms'] === 'number') c.staleAfterMs = d['stale_after_ms'];
  const lanes = d['lanes'];
  if (Array.isArray(lanes)) c.lanes = lanes.filter((l): l is string => typeof l === 'string');
  if (typeof d['startable'] === 'boolean') c.startable = d['startable'];
  // Who started a session does not change: the first word on it stands.
  c.spawnedBy ??= spawnedByOf(d['spawned_by']);
}

export class SessionSummaries {
  private readonly cells = new Map<string, Cell>();
  /** The most recently used cell: a session's events arrive in runs, and it needs no reordering. */
  private last: { session: string; cell: Cell } | undefined;

  /**
   * @param history what the relay already holds for a session it has no summary of yet (after a
   * restart), as raw event texts in session order
   * @param cap sessions summarised; the least recently updated is forgotten beyond it
   */
  constructor(
    private readonly history: (session: string) => readonly string[],
    private readonly cap = 10_000,
  ) {}

  observe(e: AepEvent): void {
    if (e.session === undefined) return;
    apply(this.cell(e.session), e);
  }

  get(session: string): SessionSummary {
    const c = this.cell(session);
    const s: SessionSummary = { state: c.ended ? 'ended' : 'live', queued: c.pending.size };
    if (c.lastEventAt !== undefined) s.lastEventAt = c.lastEventAt;
    if (c.running === true) s.running = true;
    return s;
  }

  about(session: string): SessionAbout {
    const {
      ended: _ended,
      lastEventAt: _last,
      sent: _sent,
      pending: _pending,
      running: _running,
      ...about
    } = this.cell(session);
    // Only what the events said: no key stands for a field they never gave.
    return Object.fromEntries(Object.entries(about).filter(([, v]) => v !== undefined)) as SessionAbout;
  }

  private cell(session: string): Cell {
    if (this.last?.session === session) return this.last.cell;
    const c = this.lookup(session);
    this.last = { session, cell: c };
    return c;
  }

  private lookup(session: string): Cell {
    let c = this.cells.get(session);
    if (c !== undefined) {
      // Most recently used last, so the cap forgets the stalest session.
      this.cells.delete(session);
      this.cells.set(session, c);
      return c;
    }
    c = { ended: false, sent: new Set(), pending: new Set() };
    for (const raw of this.history(session)) {
      try {
        apply(c, JSON.parse(raw) as AepEvent);
      } catch {
        // A stored line that does not parse says nothing about the session.
      }
    }
    this.cells.set(session, c);
    if (this.cells.size > this.cap) this.cells.delete(this.cells.keys().next().value!);
    return c;
  }
}
