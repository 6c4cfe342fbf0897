// OpenHands agent-server events → AEP observations (AEP-0002 Annex A, the openhands mapping
// fixture). Pure: the receiver (openhands/receiver.ts) wraps each transport event with the state
// only it can know (the status before this event, the run ids, the open attention request, first
// sight), so the same frame always maps the same way. Observations stay at capture metadata:
// names, ids, counts and digests, never message text, thoughts or command output.
import type { EventData } from '../../protocol/envelope.js';
import type { ObservationSpec } from '../../streams/surface.js';
import { arr, obj, str } from '../hook-input.js';
import { compact, digest } from '../hook-maps.js';
import { snakeCase } from '../table.js';

export const TOKEN = 'openhands';

/** The server's ConversationExecutionStatus enum (openhands-agent-server §2.3), unchanged v1.36.1 → HEAD. */
const STATUSES = [
  'idle',
  'running',
  'paused',
  'waiting_for_confirmation',
  'finished',
  'error',
  'stuck',
  'deleting',
] as const;
export type Status = (typeof STATUSES)[number];

const isStatus = (v: unknown): v is Status => typeof v === 'string' && (STATUSES as readonly string[]).includes(v);

/** The prompt of the read-only attention request: structural, no vendor text (AEP-0003 §9.2). */
export const CONFIRMATION_PROMPT = 'Awaiting confirmation for a pending action';

/** What the receiver knows when it hands one transport event to the table. */
export interface OpenHandsFrame {
  /** The conversation the socket is scoped to: the AEP session (events do not repeat it). */
  conversation_id: string;
  /** The transport event as the server sent it (with or without `parent_id`). */
  event: Record<string, unknown>;
  /** execution_status before this event; null before the first one seen. */
  status_before?: Status | null;
  /** The run open before this event, and the one open after it (`run:<conversation>:<n>`). */
  run_before?: string;
  run_after?: string;
  /** Id of the attention request this event opens or closes. */
  attention?: string;
  /** The conversation's first event seen by this bridge: session.started goes first. */
  first?: boolean;
  /** AEP_OPENHANDS_DELTAS: StreamingDeltaEvent is mapped instead of suppressed. */
  deltas?: boolean;
  /** AEP_OPENHANDS_CONTROL: the confirmation request is answerable (options, respond path). */
  answerable?: boolean;
  /**
   * A control.attention.respond the server took (REST 2xx) before this flip out of waiting: the
   * flip is its outcome, so attention.answered (id preset) and attention.resolved name it.
   */
  answered?: { id: string; cause: string; answer: Record<string, unknown> };
  /** A pause, resume or interrupt the server took: this status change is its outcome. */
  caused_by?: string;
  /**
   * A status update from the server's stored log, resent on attach behind the snapshot: mapped as
   * the event it is (state.delta), never as a transition (no run, request or answer from it).
   */
  history?: true;
}

export interface Moment {
  type: string;
  data: EventData;
}

/**
 * The status plane's AEP moments for one transition (fixture `status_transitions`): runs open on
 * `running`, close on the terminal statuses and on running → idle; `paused` and
 * `waiting_for_confirmation` never close a run; leaving `waiting_for_confirmation` resolves its
 * attention request (dismissed when the exit is paused or deleting); deleting ends the session.
 */
export function statusMoments(prev: Status | null, next: Status): Moment[] {
  if (prev === next) return [];
  const out: Moment[] = [];
  const open = prev === 'running' || prev === 'paused' || prev === 'waiting_for_confirmation';
  if (prev === 'waiting_for_confirmation') {
    out.push({
      type: 'attention.resolved',
      data: { resolution: next === 'paused' || next === 'deleting' ? 'dismissed' : 'answered' },
    });
  }
  switch (next) {
    case 'running':
      if (!open) out.push({ type: 'run.started', data: {} });
      break;
    case 'finished':
      if (open) out.push({ type: 'run.finished', data: {} });
      break;
    case 'idle':
      // The server's "ready for tasks": only a running run closes on it (the reject path goes
      // waiting → idle and is answered, not finished).
      if (prev === 'running') out.push({ type: 'run.finished', data: { reason: 'idle' } });
      break;
    case 'error':
    case 'stuck':
      if (open) out.push({ type: 'run.failed', data: { reason: next } });
      break;
    case 'deleting':
      if (open) out.push({ type: 'run.cancelled', data: { reason: 'deleting' } });
      out.push({ type: 'session.ended', data: { reason: 'killed' } });
      break;
    case 'waiting_for_confirmation':
      if (!open) out.push({ type: 'run.started', data: {} });
      out.push({ type: 'attention.requested', data: { kind: 'permission', prompt: CONFIRMATION_PROMPT } });
      break;
    case 'paused':
      break;
  }
  return out;
}

/** The execution_status a state update carries: `key: execution_status`, or inside `full_state`. */
export function statusOf(event: Record<string, unknown>): Status | undefined {
  if (event.kind !== 'ConversationStateUpdateEvent') return undefined;
  if (event.key === 'execution_status') return isStatus(event.value) ? event.value : undefined;
  if (event.key === 'full_state') {
    const s = obj(event.value).execution_status;
    return isStatus(s) ? s : undefined;
  }
  return undefined;
}

/**
 * The mechanical vendor type of a kind (design record, field maps): snake-case it, drop a
 * trailing `_event`, split family from leaf at the last underscore, and give a single segment the
 * leaf `event` (the type grammar wants two segments after the token).
 */
export function kindType(kind: string): string {
  const name = snakeCase(kind).replace(/_event$/, '') || 'unknown';
  const cut = name.lastIndexOf('_');
  return cut <= 0 ? `x.${TOKEN}.${name}.event` : `x.${TOKEN}.${name.slice(0, cut)}.${name.slice(cut + 1)}`;
}

/** Vendor time (naive, server-local) and the vendor id (the dedupe key) ride at metadata. */
const base = (e: Record<string, unknown>): EventData =>
  compact({ vendor_ts: str(e.timestamp), vendor_event_id: str(e.id) });

const toolOf = (e: Record<string, unknown>): EventData =>
  compact({ name: str(e.tool_name) ?? 'unknown', call_id: str(e.tool_call_id) });

const textOf = (content: unknown): string =>
  arr(content)
    .map((p) => str(obj(p).text) ?? '')
    .join('');

/**
 * The tool call's arguments as the model sent them; the action object when there are none.
 * The server's `tool_call` is its MessageToolCall `{id, name, arguments, origin}`, `arguments`
 * a JSON string (openhands-sdk `llm/message.py`, v1.35.0, v1.36.1 and main); the mapping fixture
 * writes the Chat Completions shape `{function: {arguments}}`, read too. `args_digest` is this
 * project's one digest (AEP-0003 §9.3) of the parsed arguments, the value the Codex and Claude
 * Code mappings give for the same arguments. The OpenHands fixture pins another value: the digest
 * of the whole `action` object (`kind` included) written as canonical JSON text and that text then
 * digested as a JSON string, so encoded twice (test/adapters/openhands.test.ts shows it).
 */
function argsOf(e: Record<string, unknown>): unknown {
  const call = obj(e.tool_call);
  const raw = typeof call.arguments === 'string' ? call.arguments : obj(call.function).arguments;
  if (typeof raw === 'string') {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  const { kind: _kind, ...rest } = obj(e.action);
  return rest;
}

function spec(type: string, data: EventData, extra: { subject?: string; step?: string } = {}): ObservationSpec {
  const o: ObservationSpec = { type, data };
  if (extra.subject !== undefined) o.subject = extra.subject;
  if (extra.step !== undefined) o.step = extra.step;
  // The vendor plane rides at debug (design record, field maps).
  if (type.startsWith('x.')) o.severity = 'debug';
  return o;
}

type EventRule = (e: Record<string, unknown>, f: OpenHandsFrame) => ObservationSpec[];

const RULES: Record<string, EventRule> = {
  ActionEvent: (e) => {
    const risk = str(e.security_risk);
    return [
      spec(
        'tool.requested',
        compact({
          ...base(e),
          tool: toolOf(e),
          risk: risk === 'UNKNOWN' ? undefined : risk,
          args_digest: digest(argsOf(e)),
        }),
        { subject: str(e.tool_name) ?? 'unknown', step: str(e.llm_response_id) },
      ),
    ];
  },
  // The observation model types the outcome: is_error splits completed from failed.
  ObservationEvent: (e) => {
    const o = obj(e.observation);
    const subject = str(e.tool_name) ?? 'unknown';
    if (o.is_error === true)
      return [spec('tool.failed', { ...base(e), tool: toolOf(e), error: { type: 'tool_error' } }, { subject })];
    return [
      spec('tool.completed', { ...base(e), tool: toolOf(e), result_digest: digest(textOf(o.content)) }, { subject }),
    ];
  },
  // A hook's rejection is a policy block; a user's is a human decision, kept vendor-scoped.
  UserRejectObservation: (e) => {
    const subject = str(e.tool_name) ?? 'unknown';
    if (e.rejection_source === 'hook')
      return [spec('tool.denied', { ...base(e), tool: toolOf(e), by: 'policy' }, { subject })];
    return [spec(kindType('UserRejectObservation'), { ...base(e), tool: toolOf(e) }, { subject })];
  },
  AgentErrorEvent: (e) => [
    spec(
      'tool.failed',
      { ...base(e), tool: toolOf(e), error: { type: 'agent_error' } },
      { subject: str(e.tool_name) ?? 'unknown' },
    ),
  ],
  MessageEvent: (e) => {
    const skills = arr(e.activated_skills).length;
    return [
      spec(
        kindType('MessageEvent'),
        compact({
          ...base(e),
          role: str(obj(e.llm_message).role),
          sender: str(e.sender),
          skills: skills > 0 ? skills : undefined,
        }),
        { step: str(e.llm_response_id) },
      ),
    ];
  },
  Condensation: (e) => [spec('session.compacted', { ...base(e), forgotten: arr(e.forgotten_event_ids).length })],
  ConversationStateUpdateEvent: (e) =>
    e.key === 'full_state'
      ? [spec('state.snapshot', base(e))]
      : [spec('state.delta', compact({ ...base(e), key: str(e.key) }))],
  ConversationErrorEvent: (e) => [spec('error.raised', compact({ ...base(e), code: str(e.code) }))],
  // Suppressed by default; the vendor does not persist deltas, so a replay lacks them anyway.
  StreamingDeltaEvent: (e, f) => (f.deltas === true ? [spec(kindType('StreamingDeltaEvent'), base(e))] : []),
  // Raw token ids are not observability: nothing, ever.
  TokenEvent: () => [],
};

/** One transport event, mapped alone (the fixture's `events` and `fallback`). */
export function mapEvent(e: Record<string, unknown>, f: Pick<OpenHandsFrame, 'deltas'> = {}): ObservationSpec[] {
  const kind = str(e.kind) ?? 'Unknown';
  const rule = RULES[kind];
  return rule ? rule(e, { conversation_id: '', event: e, ...f }) : [spec(kindType(kind), base(e))];
}

/**
 * A framed event: session.started on first sight, the event's own mapping, then the status
 * plane's moments with their run ids. `session.ended` is left to the runtime, which emits it at
 * the end moment after closing what is open (D10).
 */
export function mapFrame(f: OpenHandsFrame): ObservationSpec[] {
  const out: ObservationSpec[] = [];
  if (f.first === true) out.push({ type: 'session.started', data: { client: { name: 'openhands-agent-server' } } });
  const own = mapEvent(f.event, f);
  const next = f.history === true ? undefined : statusOf(f.event);
  // A status update belongs to the run it leaves; anything else to the run open around it.
  const run = next === undefined ? (f.run_after ?? f.run_before) : f.run_before;
  for (const o of own) if (run !== undefined) o.run = run;
  out.push(...own);
  if (next === undefined) return out;
  for (const m of statusMoments(f.status_before ?? null, next)) {
    if (m.type === 'session.ended') continue;
    const o: ObservationSpec = { type: m.type, data: m.data };
    if (m.type === 'run.started') {
      if (f.run_after !== undefined) o.run = f.run_after;
    } else if (f.run_before !== undefined) o.run = f.run_before;
    if (m.type === 'attention.requested') {
      if (f.attention !== undefined) o.id = f.attention;
      o.severity = 'notice';
      // Under the control gate a receiver-side decoration; the pinned read-only payload is unchanged.
      if (f.answerable === true) o.data = { ...m.data, options: ANSWER_OPTIONS, respond_via: ['control'] };
    }
    if (m.type === 'attention.resolved') {
      if (f.attention !== undefined) o.subject = f.attention;
      if (f.answered !== undefined && m.data.resolution === 'answered') {
        const a = f.answered;
        const textual = a.answer.text !== undefined;
        const answered: ObservationSpec = {
          type: 'attention.answered',
          id: a.id,
          cause: a.cause,
          data: { answer: a.answer, via: 'control' },
          capture: textual ? 'redacted' : 'metadata',
        };
        if (f.attention !== undefined) answered.subject = f.attention;
        if (o.run !== undefined) answered.run = o.run;
        out.push(answered);
        o.cause = a.id;
      }
    }
    out.push(o);
  }
  if (f.caused_by !== undefined) for (const o of own) if (o.type === 'state.delta') o.cause = f.caused_by;
  return out;
}

/** allow → `{accept: true}`, deny → `{accept: false, reason?}`; labels are ids at metadata. */
export const ANSWER_OPTIONS = [
  { id: 'allow', label: 'allow' },
  { id: 'deny', label: 'deny' },
];
