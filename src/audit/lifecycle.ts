// Folds an AEP stream into each session's steering state and each instruction's lifecycle.
// The audit (audit.ts) and the live inspect page (inspect/board.ts) both read the stream through
// this one fold, so what the page shows live is what the audit later reports.
// The fold is order-tolerant across files: verdicts that need the whole picture (which acks
// belong to instructions, which terminals are orphans) are taken in `findings()`, not on arrival.
// It keeps what it saw per session (fold-record.ts) and resolves it on demand (resolve.ts).
import { captureRank, dedupeKey, type AepEvent } from '../protocol/envelope.js';
import { CODE_ATTR, isAgentActivity, isCommandType } from '../protocol/types.js';
import {
  CLOSED,
  DELIVERED,
  DROPPED,
  INSTRUCT,
  REOPENED,
  SENT,
  endMark,
  lastMark,
  newSessionRecord,
  order,
  sightingOf,
  str,
  type AckRecord,
  type SessionRecord,
  type TerminalRecord,
  queueChangeOf,
} from './fold-record.js';
import { resolveSession } from './resolve.js';
import { readDecidedBy } from '../machines/decided-by.js';
import { RequestDecisions, riskyOf, type RequestDecision } from './decisions.js';
import { replayQueue } from './queue-rules.js';
import type { EventPlace, Finding, HoldView, InstructionRecord, SessionState, SessionView } from './views.js';

const ACKS = new Set(['control.accepted', 'control.rejected']);
const REDACTED = captureRank('redacted');

export class SteeringFold {
  private readonly sessionsByKey = new Map<string, SessionRecord>();
  private readonly seen = new Set<string>();
  private readonly immediate: Finding[] = [];
  /** D46/D48: who settled each request, and the first allows of risky ones still held. */
  private readonly requests = new RequestDecisions();

  /** Applies one event. A redelivery of an event already applied (same source and id) is ignored (AEP-0001 §5.3). */
  apply(e: AepEvent, place: EventPlace = {}): boolean {
    const key = dedupeKey(e);
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    if (typeof e.session !== 'string') return true;
    const s = this.session(e.session, e.time);
    s.events += 1;
    // D37: last activity is the agent's; a command or the adapter's answer to one is not.
    if (isAgentActivity(e.type)) s.updatedAt = e.time;
    const sight = sightingOf(e, place);
    const command = isCommandType(e.type);
    if (!command) {
      s.agent ??= e.agent;
      s.source ??= e.source;
      if (typeof e.seq === 'number') {
        s.epoch = e.epoch ?? 0;
        s.seq = e.seq;
      }
    }
    this.checkCapture(e, place);
    this.requests.apply(e);
    if (command) {
      s.commands.set(e.id, { event: e, sighting: sight });
      return true;
    }
    if (ACKS.has(e.type)) {
      if (typeof e.cause !== 'string') {
        this.immediate.push({
          rule: 'ack-uncaused',
          message: `${e.type} has no cause, so it acknowledges no command (AEP-0004 §3)`,
          place,
          eventId: e.id,
        });
        return true;
      }
      const data = e.data ?? {};
      const ack: AckRecord = { sighting: sight, accepted: e.type === 'control.accepted' };
      const reason = str(data['reason']);
      const detail = str(data['detail']);
      if (reason !== undefined) ack.reason = reason;
      if (detail !== undefined) ack.detail = detail;
      const code = str(e[CODE_ATTR]);
      if (code !== undefined) ack.code = code;
      const list = s.acks.get(e.cause) ?? [];
      list.push(ack);
      s.acks.set(e.cause, list);
      s.ackIds.set(e.id, e.cause);
      return true;
    }
    const delivered = DELIVERED.exec(e.type);
    const dropped = DROPPED.exec(e.type);
    const sent = SENT.exec(e.type);
    if (delivered || dropped || sent) {
      const data = e.data ?? {};
      const t: TerminalRecord = {
        sighting: sight,
        kind: delivered ? 'delivered' : dropped ? 'dropped' : 'sent',
        vendor: (delivered ?? dropped ?? sent)![1]!,
      };
      if (typeof e.cause === 'string') t.cause = e.cause;
      if (typeof data['queued_ms'] === 'number') t.queuedMs = data['queued_ms'];
      if (typeof data['moment'] === 'string') t.moment = data['moment'];
      if (typeof data['lane'] === 'string') t.lane = data['lane'];
      if (typeof data['ref'] === 'string') t.ref = data['ref'];
      if (data['started'] === true) t.started = true;
      const by = readDecidedBy(data);
      if (by !== undefined) t.decidedBy = by;
      if (typeof data['version'] === 'number') t.version = data['version'];
      const reason = str(data['reason']);
      if (reason !== undefined) t.reason = reason;
      // D32: a withdrawal's drop is caused by the withdraw and names the instruction as its subject.
      if (dropped && reason === 'withdrawn' && typeof e.subject === 'string') t.cause = e.subject;
      s.terminals.push(t);
      return true;
    }
    const change = queueChangeOf(e, sight);
    if (change) return s.changes.push(change) > 0;
    if (REOPENED.test(e.type) || CLOSED.test(e.type)) {
      s.marks.push(REOPENED.test(e.type) ? { kind: 'reopen', sighting: sight } : endMark(e, sight));
      return true;
    }
    switch (e.type) {
      case 'session.started':
        s.startedAt ??= e.time;
        break;
      case 'run.started':
        s.runs.push({ kind: 'start', sighting: sight });
        break;
      case 'run.finished':
      case 'run.failed':
      case 'run.cancelled':
        s.runs.push({ kind: 'end', sighting: sight });
        break;
      case 'session.ended':
        s.ended ??= sight;
        s.marks.push(endMark(e, sight));
        break;
      case 'attention.requested':
        s.holds.set(e.id, holdOf(e));
        break;
      case 'attention.resolved':
      case 'attention.timeout':
        if (typeof e.subject === 'string') s.holds.delete(e.subject);
        break;
      default:
        break;
    }
    return true;
  }

  /** Instruction text belongs to the redacted class: never on the stream below it (design record; aep-wire §2.2). */
  private checkCapture(e: AepEvent, place: EventPlace): void {
    const steering = INSTRUCT.test(e.type) || DELIVERED.test(e.type) || DROPPED.test(e.type) || SENT.test(e.type);
    if (!steering || e.data === undefined || !('text' in e.data)) return;
    if (captureRank(e.capture) >= REDACTED) return;
    this.immediate.push({
      rule: 'capture-text',
      message: `${e.type} carries instruction text at capture ${e.capture ?? 'metadata (default)'}; it needs redacted or above`,
      place,
      eventId: e.id,
    });
  }

  private session(id: string, time: string): SessionRecord {
    let s = this.sessionsByKey.get(id);
    if (!s) {
      s = newSessionRecord(id, time);
      this.sessionsByKey.set(id, s);
    }
    return s;
  }

  /** D46: every request that ended, with who decided it, in the order the ends were seen. */
  requestDecisions(): RequestDecision[] {
    return this.requests.list();
  }

  /** Each instruction's lifecycle, in order of first sighting per session. */
  instructions(): InstructionRecord[] {
    return [...this.sessionsByKey.values()].flatMap((s) => resolveSession(s).records);
  }

  /** Every session's current state, as the session machine would hold it. */
  sessions(): SessionView[] {
    return [...this.sessionsByKey.values()].map((s) => this.view(s));
  }

  sessionView(id: string): SessionView | undefined {
    const s = this.sessionsByKey.get(id);
    return s ? this.view(s) : undefined;
  }

  /** Every breach of the steering rules seen so far (D4, D9, D10, AEP-0004 §3). */
  findings(): Finding[] {
    const out = [...this.immediate];
    for (const s of this.sessionsByKey.values()) out.push(...resolveSession(s).findings);
    return out;
  }

  private view(s: SessionRecord): SessionView {
    const { records } = resolveSession(s);
    // D44: the queue in the order the sender's moves left it, each at its newest text version.
    const replay = replayQueue(s);
    const place = (id: string) => {
      const at = replay.order.indexOf(id);
      return at < 0 ? Number.MAX_SAFE_INTEGER : at;
    };
    const queue = records
      .filter((r) => r.status === 'pending' && r.accepted)
      .sort((a, b) => place(a.id) - place(b.id) || order(a.accepted!, b.accepted!))
      .map((r) => {
        const q: SessionView['queue'][number] = { id: r.id, acceptedAt: r.accepted!.time };
        if (r.sender !== undefined) q.sender = r.sender;
        const text = replay.texts.get(r.id) ?? r.text;
        if (text !== undefined) q.text = text;
        const delivery = replay.delivery.get(r.id) ?? r.delivery;
        if (delivery !== undefined && (delivery !== 'moment' || r.delivery !== undefined)) q.delivery = delivery;
        const version = replay.versions.get(r.id);
        if (version !== undefined) q.version = version;
        const changed = replay.changedBy.get(r.id);
        if (changed !== undefined) q.changedBy = changed;
        return q;
      });
    const holds = [...s.holds.values()].map((h) => {
      const first = this.requests.firstOf(h.request);
      return first === undefined ? h : { ...h, firstBy: first };
    });
    const hold = holds.at(-1);
    const state: SessionState =
      lastMark(s)?.kind === 'end'
        ? 'ended'
        : hold
          ? hold.kind === 'form'
            ? 'holding.elicitation'
            : 'holding.permission'
          : queue.length > 0
            ? 'queued'
            : 'idle';
    const v: SessionView = { session: s.session, state, queue, holds, events: s.events, updatedAt: s.updatedAt };
    // D43: a turn runs from its run.started to its end; "idle" says only that nothing waits.
    const lastRun = s.runs.reduce<(typeof s.runs)[number] | undefined>(
      (a, r) => (a === undefined || order(r.sighting, a.sighting) >= 0 ? r : a),
      undefined,
    );
    if (state !== 'ended' && lastRun?.kind === 'start') v.running = true;
    if (replay.paused) v.paused = true;
    if (replay.pausedBy !== undefined) v.pausedBy = replay.pausedBy;
    if (s.agent !== undefined) v.agent = s.agent;
    if (s.source !== undefined) v.source = s.source;
    if (s.epoch !== undefined) v.epoch = s.epoch;
    if (s.seq !== undefined) v.seq = s.seq;
    if (s.startedAt !== undefined) v.startedAt = s.startedAt;
    if (s.ended !== undefined) v.endedAt = s.ended.time;
    return v;
  }
}

/** A held request as the fold keeps it: what it asks, its options or fields, and a D48 risk mark. */
function holdOf(e: AepEvent): HoldView {
  const data = e.data ?? {};
  const hold: HoldView = { request: e.id, kind: str(data['kind']) ?? 'other', since: e.time };
  const prompt = str(data['prompt']);
  if (prompt !== undefined) hold.prompt = prompt;
  const options = Array.isArray(data['options'])
    ? data['options'].map((o) => str((o as { id?: unknown } | null)?.id)).filter((o): o is string => o !== undefined)
    : [];
  if (options.length > 0) hold.options = options;
  if (Array.isArray(data['fields'])) hold.fields = data['fields'];
  const risky = riskyOf(data);
  if (risky !== undefined) hold.risky = risky;
  return hold;
}
