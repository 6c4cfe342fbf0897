// The held requests of live sessions, read from the relay's history at the token's capture
// ceiling: each `attention.requested` with no answer, resolution or timeout after it (D34). What a
// request asks is what the relay let through (D35): the command at redacted, the tool name below.
import type { AepEvent } from '../protocol/envelope.js';
import type { RelayConsumer } from './connection.js';
import { sessionHistory } from './history.js';
import { firstOfTwo } from './respond.js';
import { riskyOf } from '../audit/decisions.js';
import type { DecidedBy } from '../machines/decided-by.js';

export interface PendingRequest {
  /** The `attention.requested` event id: what `respond --request` names. */
  request: string;
  session: string;
  vendor: string;
  kind: string;
  /** The tool or form the request is about. */
  subject?: string;
  prompt?: string;
  options?: string[];
  fields?: unknown[];
  since: string;
  ageMs: number;
  /** D48: the policy rule that marks it risky (an allow then needs two identities). */
  risky?: { rule: string; why?: string };
  /** D48: who gave the first allow of this risky request; it needs a second approver. */
  firstBy?: DecidedBy;
}

const ENDS = new Set(['attention.answered', 'attention.resolved', 'attention.timeout']);
// D48: an ack that took a risky request's first allow names the request as its subject.
const TYPES = ['attention.requested', 'control.accepted', ...ENDS];
/** Per session, more attention events than any session holds open at once. */
const HISTORY = 2000;

/** The requests still held in `events` (one session's attention events, oldest first). */
export function pendingOf(events: readonly AepEvent[], now: number): PendingRequest[] {
  const open = new Map<string, AepEvent>();
  const firsts = new Map<string, DecidedBy>();
  for (const e of events) {
    if (e.type === 'attention.requested') open.set(e.id, e);
    else if (ENDS.has(e.type) && e.subject !== undefined) open.delete(e.subject);
    else if (e.type === 'control.accepted' && e.subject !== undefined) {
      const first = firstOfTwo(e);
      if (first !== undefined) firsts.set(e.subject, first);
    }
  }
  return [...open.values()].map((e) => {
    const d = (e.data ?? {}) as Record<string, unknown>;
    const r: PendingRequest = {
      request: e.id,
      session: e.session ?? '',
      vendor: e.agent,
      kind: typeof d.kind === 'string' ? d.kind : 'other',
      since: e.time,
      ageMs: Math.max(0, now - Date.parse(e.time)),
    };
    if (e.subject !== undefined) r.subject = e.subject;
    if (typeof d.prompt === 'string') r.prompt = d.prompt;
    const ids = Array.isArray(d.options) ? d.options.map((o) => (o as { id?: unknown } | null)?.id) : [];
    const options = ids.filter((o): o is string => typeof o === 'string');
    if (options.length > 0) r.options = options;
    if (Array.isArray(d.fields)) r.fields = d.fields;
    const risky = riskyOf(d);
    if (risky !== undefined) r.risky = risky;
    const first = firsts.get(e.id);
    if (first !== undefined) r.firstBy = first;
    return r;
  });
}

/** Held requests of one session, or of every session the roster shows live, oldest first. */
export async function pendingRequests(
  consumer: RelayConsumer,
  opts: { session?: string; now?: () => number } = {},
): Promise<PendingRequest[]> {
  const sessions =
    opts.session !== undefined
      ? [opts.session]
      : [...new Set((await consumer.roster()).filter((r) => r.state !== 'ended').map((r) => r.session))];
  const now = opts.now ?? Date.now;
  const out: PendingRequest[] = [];
  for (const session of sessions) {
    // No ceiling asked: the relay serves this token's own (D20).
    const events = await sessionHistory(consumer, { session, limit: HISTORY, types: TYPES });
    out.push(...pendingOf(events, now()));
  }
  return out.sort((a, b) => a.since.localeCompare(b.since));
}
