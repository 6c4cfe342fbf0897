// D46/D48 in the fold: who settled each held request, and who gave the first allow of a risky one.
// Kept beside the instruction lifecycles (lifecycle.ts), so the audit, `pending`, the console and
// MCP read who decided from the one fold of the stream.
import type { AepEvent } from '../protocol/envelope.js';
import { readDecidedBy, type DecidedBy } from '../machines/decided-by.js';

export interface RequestDecision {
  request: string;
  session: string;
  /** `answered`, `dismissed`, or `timeout`. */
  outcome: string;
  decidedBy?: DecidedBy;
  /** D48: a risky request allowed by two identities: the first of them. */
  firstBy?: DecidedBy;
  /** D48: the rule that marked the request risky. */
  risky?: string;
  time: string;
}

/** D48: the rule (and why) an `attention.requested` is risky by; undefined when no rule marked it. */
export function riskyOf(data: Record<string, unknown>): { rule: string; why?: string } | undefined {
  const risky = data['risky'] as { rule?: unknown; why?: unknown } | undefined;
  if (typeof risky?.rule !== 'string') return undefined;
  return { rule: risky.rule, ...(typeof risky.why === 'string' ? { why: risky.why } : {}) };
}

/** What the request events say about risk and approvers; the fold keeps one per session. */
export class RequestDecisions {
  private readonly risky = new Map<string, string>();
  private readonly firsts = new Map<string, DecidedBy>();
  private readonly ended: RequestDecision[] = [];

  /** Takes any event; keeps what the attention events and the acks of a first allow say. */
  apply(e: AepEvent): void {
    const data = (e.data ?? {}) as Record<string, unknown>;
    if (e.type === 'attention.requested') {
      const risky = riskyOf(data);
      if (risky !== undefined) this.risky.set(e.id, risky.rule);
      return;
    }
    if (e.subject === undefined) return;
    if (e.type === 'control.accepted' && data['status'] === 'pending-second') {
      const first = readDecidedBy({ decided_by: data['first_by'] });
      if (first !== undefined) this.firsts.set(e.subject, first);
      return;
    }
    if (e.type !== 'attention.resolved' && e.type !== 'attention.timeout') return;
    const d: RequestDecision = {
      request: e.subject,
      session: e.session ?? '',
      outcome: e.type === 'attention.timeout' ? 'timeout' : String(data['resolution'] ?? 'answered'),
      time: e.time,
    };
    const by = readDecidedBy(data);
    if (by !== undefined) d.decidedBy = by;
    const first = readDecidedBy({ decided_by: data['first_by'] });
    if (first !== undefined) d.firstBy = first;
    const rule = this.risky.get(e.subject);
    if (rule !== undefined) d.risky = rule;
    this.ended.push(d);
  }

  /** The first allow a still-held risky request has, if any. */
  firstOf(request: string): DecidedBy | undefined {
    return this.firsts.get(request);
  }

  list(): RequestDecision[] {
    return [...this.ended];
  }
}
