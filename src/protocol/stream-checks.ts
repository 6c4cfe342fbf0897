// Stream rules no single event can show (AEP-0001 §7, AEP-0002 §2/§7, AEP-0004 §3, AEP-0006).
// Used by tests and by the audit over an adapter's own output; a byte-identical redelivery of
// an event already seen is legal and is skipped by every rule.
import { createHash } from 'node:crypto';
import { dedupeKey, type AepEvent } from './envelope.js';
import { formValuesIssues, type FieldSpec } from './payloads.js';

export type ViolationRule =
  /** `seq` at or below one already assigned in the same epoch (AEP-0001 §7.2). */
  | 'seq-regression'
  /** `epoch` below the session's current epoch (AEP-0001 §7.2). */
  | 'epoch-regression'
  /** One `(epoch, seq)` claimed by two different events (AEP-0001 §7.2). */
  | 'position-conflict'
  /** Same `(source, id)` with different content (AEP-0001 §5.1 #2). */
  | 'id-collision'
  /** A second, different ack for one command (AEP-0004 §3). */
  | 'ack-decision'
  /** A second run terminal for one run, or a second session.ended (AEP-0002 §2). */
  | 'terminal-exclusive'
  /** session.ended while an attention request has no terminal (AEP-0002 §7.2). */
  | 'attention-open-at-end'
  /** attention.answered values that break the request's field_spec (AEP-0006). */
  | 'form-values';

export interface Violation {
  rule: ViolationRule;
  /** Position of the offending event in the stream as pushed (0-based). */
  index: number;
  eventId?: string;
  message: string;
}

const RUN_TERMINALS = new Set(['run.finished', 'run.failed', 'run.cancelled']);
const ACKS = new Set(['control.accepted', 'control.rejected']);
const ATTENTION_TERMINALS = new Set(['attention.resolved', 'attention.timeout']);

/** Key-order independent JSON, so a re-serialised redelivery still counts as the same event. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
const digest = (e: AepEvent): string => createHash('sha256').update(canonical(e)).digest('base64');

interface Position {
  epoch: number;
  seq: number;
  /** Positions claimed in the current epoch → event id. */
  claimed: Map<number, string>;
}

const k = (...parts: (string | undefined)[]): string => parts.map((p) => p ?? '').join('\u0000');

/** Incremental checker: push events in arrival order, read the violations each one causes. */
export class StreamChecker {
  private index = 0;
  private readonly seen = new Map<string, string>();
  private readonly positions = new Map<string, Position>();
  private readonly acks = new Map<string, string>();
  private readonly runTerminals = new Map<string, string>();
  private readonly sessionEnds = new Map<string, string>();
  private readonly openAttention = new Map<string, Map<string, number>>();
  private readonly forms = new Map<string, readonly FieldSpec[]>();

  push(e: AepEvent): Violation[] {
    const index = this.index++;
    const out: Violation[] = [];
    const v = (rule: ViolationRule, message: string): void => {
      out.push({ rule, index, eventId: e.id, message });
    };

    const key = dedupeKey(e);
    const d = digest(e);
    const prior = this.seen.get(key);
    if (prior !== undefined) {
      if (prior !== d) v('id-collision', `(source, id) ${e.source} ${e.id} was seen before with different content`);
      return out; // identical: a legal redelivery; different: already reported, not counted twice
    }
    this.seen.set(key, d);

    const sk = k(e.source, e.session);
    if (e.session !== undefined && e.seq !== undefined) this.checkPosition(sk, e, e.seq, v);

    if (ACKS.has(e.type) && e.cause !== undefined && e.session !== undefined) {
      const ak = k(e.source, e.session, e.cause);
      const first = this.acks.get(ak);
      if (first !== undefined)
        v('ack-decision', `command ${e.cause} already has ack ${first}; one decision per command`);
      else this.acks.set(ak, e.id);
    }

    if (RUN_TERMINALS.has(e.type) && e.run !== undefined && e.session !== undefined) {
      const rk = k(e.source, e.session, e.run);
      const first = this.runTerminals.get(rk);
      if (first !== undefined) v('terminal-exclusive', `run ${e.run} already ended with ${first}`);
      else this.runTerminals.set(rk, e.id);
    }

    if (e.session !== undefined) this.checkAttention(sk, e, v);

    if (e.type === 'session.ended' && e.session !== undefined) {
      const first = this.sessionEnds.get(sk);
      if (first !== undefined) v('terminal-exclusive', `session ${e.session} already ended with ${first}`);
      else this.sessionEnds.set(sk, e.id);
    }
    return out;
  }

  /** Violations only visible at the end of the stream (none in 0.1: open requests at stream end are legal). */
  finish(): Violation[] {
    return [];
  }

  private checkPosition(sk: string, e: AepEvent, seq: number, v: (r: ViolationRule, m: string) => void): void {
    const epoch = e.epoch ?? 0;
    const p = this.positions.get(sk);
    if (p === undefined || epoch > p.epoch) {
      this.positions.set(sk, { epoch, seq: seq, claimed: new Map([[seq, e.id]]) });
      return;
    }
    if (epoch < p.epoch) {
      v('epoch-regression', `epoch ${epoch} after epoch ${p.epoch} in session ${e.session}`);
      return;
    }
    const holder = p.claimed.get(seq);
    if (holder !== undefined) {
      v('position-conflict', `(${epoch}, ${seq}) in session ${e.session} is already ${holder}`);
      return;
    }
    if (seq <= p.seq) {
      v('seq-regression', `seq ${seq} after seq ${p.seq} in epoch ${epoch} of session ${e.session}`);
      return;
    }
    p.seq = seq;
    p.claimed.set(seq, e.id);
  }

  private checkAttention(sk: string, e: AepEvent, v: (r: ViolationRule, m: string) => void): void {
    let open = this.openAttention.get(sk);
    if (e.type === 'attention.requested') {
      if (!open) {
        open = new Map();
        this.openAttention.set(sk, open);
      }
      open.set(e.id, this.index - 1);
      const fields = (e.data as { kind?: unknown; fields?: unknown } | undefined)?.fields;
      if (Array.isArray(fields)) this.forms.set(k(sk, e.id), fields as FieldSpec[]);
    } else if (ATTENTION_TERMINALS.has(e.type) && e.subject !== undefined) {
      open?.delete(e.subject);
    } else if (e.type === 'attention.answered' && e.subject !== undefined) {
      const fields = this.forms.get(k(sk, e.subject));
      const values = (e.data as { answer?: { values?: unknown } } | undefined)?.answer?.values;
      if (fields && typeof values === 'object' && values !== null && !Array.isArray(values)) {
        for (const issue of formValuesIssues(fields, values as Record<string, unknown>))
          v('form-values', `${issue.message} (request ${e.subject})`);
      }
    } else if (e.type === 'session.ended' && open && open.size > 0) {
      v(
        'attention-open-at-end',
        `session ${e.session} ended with attention request(s) ${[...open.keys()].join(', ')} open; close them first`,
      );
    }
  }
}

/** Every stream violation of `events`, in order. */
export function checkStream(events: readonly AepEvent[]): Violation[] {
  const c = new StreamChecker();
  const out = events.flatMap((e) => c.push(e));
  return [...out, ...c.finish()];
}
