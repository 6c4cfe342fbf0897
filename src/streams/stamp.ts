// What a step announced, stamped: each session output becomes an AEP event in the session's
// sequence (AEP-0001 §7), a log record, or an effect for the outside. A pure function of the
// session's emitter, the acks recorded before the step, the hooks still owed a reply and the
// vendor's reply builders: what it would change (acks recorded, hooks answered) it returns, and
// the actor host applies it with the step's undo beside it (D22).
import {
  CODE_ATTR,
  RESUME_WINDOW_ATTR,
  SteeringError,
  agentEvent,
  eventText,
  newId,
  scopeOf,
  type AepEvent,
  type EventFields,
  type SessionEmitter,
} from '../protocol/index.js';
import { redactText, redactValue } from '../protocol/redact.js';
import type { SessionContext } from '../machines/session-context.js';
import type { SessionInput } from '../machines/session-input.js';
import type { SessionOutput } from '../machines/session-output.js';
import type { Effect, SessionItem } from './step-types.js';
import type { LogRecord } from './log.js';
import type { ClassifiedHook, VendorSurface } from './surface.js';
import { cancelledFields, laneEffectOf } from './lane-host.js';
import { decidedByData, type DecidedBy } from '../machines/decided-by.js';

/** What stamping reads from the host that holds the sessions. */
export interface StampSource {
  /** The session's emitter for this step (built on first use): events take its next seqs. */
  emitter(session: string): SessionEmitter;
  /** An ack recorded before this step, byte for byte (D4: a re-ack repeats it). */
  ack(key: string): string | undefined;
  /** A hook still owed a reply, with what the vendor sent. */
  hook(hookId: string): ClassifiedHook | undefined;
}

/** The vendor's reply builders, and whether a delivering reply tells the user (D27). */
export type StampSurface = Pick<VendorSurface, 'contextReply' | 'noticeReply' | 'decisionReply'> & {
  notice: boolean;
  /** D43: whether a session these lanes reach can be started; absent: the vendor has no lane that can. */
  startable?: (lanes: readonly string[]) => boolean;
};

export interface Stamped {
  /** Events for the sinks, in order (re-acks included). */
  events: AepEvent[];
  /** Records for the event log, in order. */
  records: LogRecord[];
  effects: Effect[];
  /** Acks this step recorded, key and exact text, in order (D4). */
  acks: [string, string][];
  /** Hooks this step answered: no longer owed a reply. */
  answered: string[];
}

/** Observation types that belong to a run and so carry an adapter-minted run id. */
const RUN_SCOPED = /^(run|tool|delegation)\./;

/** Who emits a hook's observations, and who hears of one that cannot be emitted. */
export interface ObservationSink {
  vendor: string;
  /** Host segment of event sources. */
  host?: string | undefined;
  onError?: ((e: SteeringError) => void) | undefined;
}

/**
 * A hook's observations as events, before its step runs (the step's input names the first as
 * its cause). Agent-scoped ones carry no session, run or seq (AEP-0001 §5.2); run, tool and
 * delegation events carry the turn's run id; the vendor's abort moment answers a cancel under
 * way. A malformed observation is reported and skipped: steering for the hook goes on. Returns
 * the id of the first session event.
 */
export function stampObservations(
  item: Extract<SessionItem, { kind: 'hook' }>,
  emitter: SessionEmitter,
  session: { runId: string | undefined; ctx: SessionContext | undefined },
  sink: ObservationSink,
  events: AepEvent[],
  records: LogRecord[],
): string | undefined {
  let firstId: string | undefined;
  const { runId, ctx } = session;
  for (const o of item.hook.observations) {
    try {
      const f: EventFields = { type: o.type, at: item.at, id: o.id ?? newId(item.at) };
      if (o.data !== undefined) f.data = o.data;
      if (o.subject !== undefined) f.subject = o.subject;
      if (o.severity !== undefined) f.severity = o.severity;
      if (o.capture !== undefined) f.capture = o.capture;
      const scope = scopeOf(o.type);
      if (scope === 'agent') {
        const e = agentEvent(sink.vendor, f, sink.host);
        events.push(e);
        records.push({ k: 'ev', e });
        continue;
      }
      if (scope !== 'session') {
        sink.onError?.(new SteeringError('EVENT_INVALID', `observation type ${o.type} is a command type; not emitted`));
        continue;
      }
      if (o.run !== undefined) f.run = o.run;
      else if (runId !== undefined && RUN_SCOPED.test(o.type)) f.run = runId;
      if (o.step !== undefined) f.step = o.step;
      if (o.cause !== undefined) f.cause = o.cause;
      const cancel = o.type === 'run.cancelled' ? ctx?.cancel : undefined;
      if (cancel?.acked === true) {
        f.cause = cancel.id;
        f.data = { ...(f.data ?? {}), by: 'control' };
        if (cancel.by !== undefined) f.data.decided_by = decidedByData(cancel.by);
      }
      const e = emitter.emit(f);
      firstId ??= e.id;
      events.push(e);
      records.push({ k: 'ev', e });
    } catch (cause) {
      sink.onError?.(
        cause instanceof SteeringError
          ? cause
          : new SteeringError('EVENT_INVALID', `observation ${o.type} not emitted: ${String(cause)}`, { cause }),
      );
    }
  }
  return firstId;
}

/**
 * D35: a request says what it asks. It goes out at capture `redacted`: the vendor's prompt with
 * what the tool will do, and the real option and field labels, each through the AEP-0003 §9.4
 * pipeline. A hop to a metadata ceiling synthesises the prompt from kind and subject (the tool
 * name) and turns labels into ids (protocol/capture.ts downLevel), so a watcher sees `Bash` only.
 */
function requestedFields(o: Extract<SessionOutput, { type: 'attention.requested' }>): EventFields {
  const r = o.request;
  const prompt = redactText(r.detail === undefined ? r.prompt : `${r.prompt}: ${r.detail}`);
  const data: Record<string, unknown> = { kind: r.kind, prompt, respond_via: r.respondVia ?? ['control'] };
  if (r.kind === 'permission') {
    data.options = (
      r.options ?? [
        { id: 'allow', label: 'Allow' },
        { id: 'deny', label: 'Deny' },
      ]
    ).map((x) => ({ id: x.id, label: redactText(x.label) }));
  }
  if (r.fields) data.fields = redactValue(r.fields);
  // D48: the rule's name and why only, which a metadata reader sees; never the command it matched.
  if (r.risky !== undefined) data.risky = { rule: r.risky.rule, why: r.risky.why };
  const f: EventFields = { type: 'attention.requested', id: o.id, severity: 'notice', capture: 'redacted', data };
  if (r.subject !== undefined) f.subject = r.subject;
  if (o.cause !== undefined) f.cause = o.cause;
  return f;
}

/** D46: `decided_by` in an event's data, where the machine named who decided. */
const decided = (by: DecidedBy | undefined): { decided_by?: Record<string, string> } =>
  by === undefined ? {} : { decided_by: decidedByData(by) };

/** D48: a first allow of a risky request, taken: the ack says a second identity must allow it too, and who gave the first. */
function pendingSecond(o: Extract<SessionOutput, { type: 'control.accepted' }>): EventFields {
  const f: EventFields = {
    type: 'control.accepted',
    cause: o.cause,
    data: { status: 'pending-second', first_by: decidedByData(o.pendingSecond!) },
  };
  if (o.subject !== undefined) f.subject = o.subject;
  return f;
}

/** One stamping in progress: what it read and what it made so far. */
interface Stamping {
  session: string;
  source: StampSource;
  at: number;
  events: AepEvent[];
  records: LogRecord[];
  acks: [string, string][];
  answered: string[];
  emitter: SessionEmitter | undefined;
}

/** An ack recorded by this step first, else before it. */
function ackText(s: Stamping, key: string): string | undefined {
  for (let i = s.acks.length - 1; i >= 0; i -= 1) if (s.acks[i]![0] === key) return s.acks[i]![1];
  return s.source.ack(key);
}

const openHook = (s: Stamping, hookId: string): ClassifiedHook | undefined =>
  s.answered.includes(hookId) ? undefined : s.source.hook(hookId);

function takeHook(s: Stamping, hookId: string): ClassifiedHook {
  const hook = openHook(s, hookId);
  if (!hook) throw new SteeringError('INTERNAL', `no open hook ${hookId}`);
  s.answered.push(hookId);
  return hook;
}

/** Every `f` is a literal made for this one call, so it takes the step's time in place. */
function emit(s: Stamping, f: EventFields, ack?: string): void {
  f.at = s.at;
  s.emitter ??= s.source.emitter(s.session);
  const e = s.emitter.emit(f);
  s.events.push(e);
  s.records.push(ack === undefined ? { k: 'ev', e } : { k: 'ev', e, ack });
  if (ack !== undefined) s.acks.push([ack, eventText(e)]);
}

/**
 * Stamps `outputs` after what the step already holds (`events`, `records`: its observations come
 * first). Every event takes the input's time.
 */
export function stamp(
  session: string,
  source: StampSource,
  input: SessionInput,
  outputs: readonly SessionOutput[],
  surface: StampSurface,
  events: AepEvent[] = [],
  records: LogRecord[] = [],
): Stamped {
  const effects: Effect[] = [];
  const s: Stamping = { session, source, at: input.at, events, records, acks: [], answered: [], emitter: undefined };
  for (const o of outputs) {
    const call = laneEffectOf(o, session);
    if (call !== undefined) {
      effects.push(call);
      continue;
    }
    if (!stampEvent(s, o, surface)) stampEffect(s, o, surface, effects);
  }
  return { events, records, effects, acks: s.acks, answered: s.answered };
}

/** An output that becomes an event (or a re-ack, or a journal record): stamped; false for any other. */
function stampEvent(s: Stamping, o: SessionOutput, surface: StampSurface): boolean {
  switch (o.type) {
    case 'control.accepted':
      emit(s, o.pendingSecond === undefined ? { type: 'control.accepted', cause: o.cause } : pendingSecond(o), o.key);
      return true;
    case 'control.rejected':
      emit(s, rejectedFields(o), o.key);
      return true;
    case 'control.reack': {
      const bytes = ackText(s, o.key);
      if (bytes !== undefined) s.events.push(JSON.parse(bytes) as AepEvent);
      return true;
    }
    case 'instruction.delivered':
      emit(s, deliveredFields(o));
      return true;
    case 'queue.changed':
      emit(s, {
        type: o.eventType,
        cause: o.cause,
        data: { ...o.data, ...decided(o.decidedBy) },
        ...(o.subject === undefined ? {} : { subject: o.subject }),
      });
      return true;
    case 'instruction.dropped':
      emit(s, {
        type: o.eventType,
        cause: o.cause,
        data: { reason: o.reason, ...decided(o.decidedBy) },
        ...(o.subject === undefined ? {} : { subject: o.subject }),
      });
      return true;
    case 'attention.requested':
      emit(s, requestedFields(o));
      return true;
    case 'attention.answered': {
      const textual = o.answer.text !== undefined || o.answer.values !== undefined;
      emit(s, {
        type: 'attention.answered',
        id: o.id,
        subject: o.subject,
        cause: o.cause,
        capture: textual ? 'redacted' : 'metadata',
        data: { answer: o.answer, via: o.via ?? 'control' },
      });
      return true;
    }
    case 'attention.resolved':
      emit(s, {
        type: 'attention.resolved',
        subject: o.subject,
        cause: o.cause,
        data: {
          resolution: o.resolution,
          latency_ms: o.latencyMs,
          decided_by: decidedByData(o.decidedBy),
          ...(o.firstBy === undefined ? {} : { first_by: decidedByData(o.firstBy) }),
        },
      });
      return true;
    case 'attention.timeout':
      emit(s, {
        type: 'attention.timeout',
        subject: o.subject,
        cause: o.cause,
        data: { after_ms: o.afterMs, decided_by: decidedByData(o.decidedBy) },
      });
      return true;
    case 'session.ended':
    case 'session.closed': {
      // D36: the resume window rides the end event as the extension attribute `resumewindowms`.
      const f: EventFields = {
        type: o.type === 'session.ended' ? o.type : o.eventType,
        data: { reason: o.reason },
      };
      if (o.cause !== undefined) f.cause = o.cause;
      if (o.resumeWindowMs !== undefined) f.extensions = { [RESUME_WINDOW_ATTR]: o.resumeWindowMs };
      emit(s, f);
      return true;
    }
    case 'session.reopened':
      emit(s, o.cause === undefined ? { type: o.eventType } : { type: o.eventType, cause: o.cause });
      return true;
    case 'run.cancelled':
      emit(s, cancelledFields(o));
      return true;
    case 'lanes.changed': {
      const startable = surface.startable?.(o.lanes);
      emit(s, { type: o.eventType, data: { lanes: o.lanes, ...(startable === undefined ? {} : { startable }) } });
      return true;
    }
    case 'input.sent':
      emit(s, { type: o.eventType, cause: o.cause, data: o.delivery === undefined ? {} : { delivery: o.delivery } });
      return true;
    case 'input.consumed':
      emit(s, { type: o.eventType, cause: o.cause, data: { queued_ms: o.queuedMs } });
      return true;
    case 'journal.inflight':
      s.records.push({ k: 'flight', s: s.session, hook: o.hookId, ids: o.ids });
      return true;
  }
  return false;
}

type Output<T extends SessionOutput['type']> = Extract<SessionOutput, { type: T }>;

// control.rejected.detail is redacted-class; the detail never carries instruction text (D2). The
// rule's stable id rides beside AEP's coarse `reason` as the extension attribute `code` (AEP-0001
// §5.4, a scalar any capture level keeps; docs/errors.md).
const rejectedFields = (o: Output<'control.rejected'>): EventFields => ({
  type: 'control.rejected',
  cause: o.cause,
  capture: 'redacted',
  extensions: { [CODE_ATTR]: o.rejection.rule },
  data: { reason: o.rejection.reason, detail: o.rejection.detail },
});

const deliveredFields = (o: Output<'instruction.delivered'>): EventFields => ({
  type: o.eventType,
  cause: o.cause,
  data: {
    queued_ms: o.queuedMs,
    ...(o.moment === undefined ? {} : { moment: o.moment }),
    ...(o.delivery === undefined ? {} : { delivery: o.delivery }),
    ...(o.lane === undefined ? {} : { lane: o.lane, ...(o.ref === undefined ? {} : { ref: o.ref }) }),
    ...(o.started === undefined ? {} : { started: o.started }),
    ...(o.version === undefined ? {} : { version: o.version }),
    ...(o.backgrounded === undefined ? {} : { backgrounded: o.backgrounded }),
  },
});

/** An output that asks the outside for something (a reply, a vendor call): its effect. */
function stampEffect(s: Stamping, o: SessionOutput, surface: StampSurface, effects: Effect[]): void {
  switch (o.type) {
    case 'reply.context': {
      const hook = takeHook(s, o.hookId);
      const notice = surface.notice
        ? { count: o.ids.length, from: o.from, ...(o.startedBy === undefined ? {} : { startedBy: o.startedBy }) }
        : undefined;
      effects.push({
        kind: 'reply',
        session: s.session,
        hookId: o.hookId,
        reply: surface.contextReply(hook, o.text, notice),
        confirm: true,
      });
      return;
    }
    case 'reply.notice': {
      // D27, D43: nothing is carried, so nothing is confirmed; `--quiet` leaves the neutral reply.
      const hook = takeHook(s, o.hookId);
      effects.push(
        surface.notice && surface.noticeReply !== undefined
          ? {
              kind: 'reply',
              session: s.session,
              hookId: o.hookId,
              reply: surface.noticeReply(hook, { count: 0, from: [], startedBy: o.startedBy ?? '' }),
              confirm: false,
            }
          : { kind: 'neutral', session: s.session, hookId: o.hookId },
      );
      return;
    }
    case 'reply.neutral':
      takeHook(s, o.hookId);
      // The open hook writes its own neutral reply: no step builds one.
      effects.push({ kind: 'neutral', session: s.session, hookId: o.hookId });
      return;
    case 'reply.hold':
      effects.push({
        kind: 'hold',
        session: s.session,
        hookId: o.hookId,
        requestId: o.requestId,
        timeoutMs: o.timeoutMs,
      });
      return;
    case 'reply.decision': {
      const hook = openHook(s, o.hookId);
      if (hook) s.answered.push(o.hookId);
      if (hook)
        effects.push({
          kind: 'reply',
          session: s.session,
          hookId: o.hookId,
          reply: surface.decisionReply(hook, o.decision),
          confirm: false,
        });
      return;
    }
  }
}
