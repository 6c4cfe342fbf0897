// What the roster says about each session beyond who claims it (D26): whether it has ended, when
// it last did something, and how many accepted instructions are still waiting. Derived only from
// the events the relay carries, so every relay binding and a restarted relay agree.
import type { AepEvent } from '../protocol/envelope.js';

export interface SessionSummary {
  state: 'live' | 'ended';
  /** `time` of the session's latest event from its agent. */
  lastEventAt?: string;
  /** Instructions acked `control.accepted` and neither delivered nor dropped yet. */
  queued: number;
}

interface Cell {
  ended: boolean;
  lastEventAt?: string;
  /** Instruct commands seen, until they settle. */
  sent: Set<string>;
  /** Accepted instructs, until delivered or dropped. */
  pending: Set<string>;
}

const INSTRUCT = /^x\.[a-z0-9_-]+\.control\.instruct$/;
const SETTLED = /^x\.[a-z0-9_-]+\.instruction\.(delivered|dropped)$/;
const CLOSED = /^x\.[a-z0-9_-]+\.session\.closed$/;
const REOPENED = /^x\.[a-z0-9_-]+\.session\.reopened$/;

/** Steps one cell with one event; redelivered events change nothing (every update is idempotent). */
function apply(c: Cell, e: AepEvent): void {
  // Only vendor types (`x.…`) can match the vendor patterns; the test is per relayed event.
  const vendor = e.type.startsWith('x.');
  if (vendor && INSTRUCT.test(e.type)) {
    c.sent.add(e.id);
    return;
  }
  if (e.seq !== undefined) c.lastEventAt = e.time;
  const cause = e.cause;
  if (e.type === 'control.accepted' && cause !== undefined && c.sent.has(cause)) c.pending.add(cause);
  else if (e.type === 'control.rejected' && cause !== undefined) c.sent.delete(cause);
  else if (vendor && SETTLED.test(e.type) && cause !== undefined) {
    c.pending.delete(cause);
    c.sent.delete(cause);
  } else if (e.type === 'session.ended' || (vendor && CLOSED.test(e.type))) c.ended = true;
  else if (e.type === 'session.started' || (vendor && REOPENED.test(e.type))) c.ended = false;
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
  constructor(private readonly history: (session: string) => readonly string[], private readonly cap = 10_000) {}

  observe(e: AepEvent): void {
    if (e.session === undefined) return;
    apply(this.cell(e.session), e);
  }

  get(session: string): SessionSummary {
    const c = this.cell(session);
    const s: SessionSummary = { state: c.ended ? 'ended' : 'live', queued: c.pending.size };
    if (c.lastEventAt !== undefined) s.lastEventAt = c.lastEventAt;
    return s;
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
