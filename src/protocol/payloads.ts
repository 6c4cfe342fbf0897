// Payload shapes for every registered AEP 0.1 type (AEP-0002 §4–§7, AEP-0004 §2–§3, AEP-0006)
// and this project's vendor types (D1, D9, D10, D12). One declaration per type gives the check,
// the TypeScript payload type (PayloadMap) and the capture annotations capture.ts reads.
import {
  anyObject,
  arrayOf,
  bool,
  either,
  int,
  num,
  obj,
  oneOf,
  str,
  type Infer,
  type Shape,
  type ShapeIssue,
} from './shape.js';
import { parseVendorType } from './types.js';
import { QUEUE_PAYLOADS } from './queue-payloads.js';
import { KNOWLEDGE_PAYLOADS } from './knowledge-payloads.js';
import { captureRank, type CaptureLevel } from './envelope.js';

const R = 'redacted' as const;
const F = 'full' as const;

// Shared parts ---------------------------------------------------------------------------

/** AEP-0002 §5.2: an amount never travels without its currency. */
const cost = obj(
  { currency: str() },
  {
    total: num({ min: 0 }),
    prompt: num({ min: 0 }),
    completion: num({ min: 0 }),
    cache: num({ min: 0 }),
    reasoning: num({ min: 0 }),
  },
);
const usage = { 'gen_ai.usage.input_tokens': int({ min: 0 }), 'gen_ai.usage.output_tokens': int({ min: 0 }) };
const tool = obj({ name: str() }, { call_id: str() });
/** `error_info`: the type is structural, the message is free text. */
const errorInfo = obj({}, { type: str(), message: str().at(R) });
const child = obj({}, { session: str(), run: str(), agent: str() });
const task = obj({}, { id: str(), title: str().at(R) });
const toolProcess = obj({}, { pid: int({ min: 1 }), command: str().at(R) });

/** D31: how an instruction reaches the agent; `moment` (the next eligible hook moment) when absent. */
export const DELIVERIES = ['moment', 'steer', 'queue'] as const;
export type Delivery = (typeof DELIVERIES)[number];
/** D43: what an instruct asks for when no turn runs (`refuse`, `wait`, or `start` a turn with it). */
export const IDLE = ['refuse', 'wait', 'start'] as const;

export const NACK_REASONS = ['unsupported', 'unauthorized', 'busy', 'refused', 'invalid'] as const;

/** AEP-0006 field_spec: a select field must list its choices. */
const fieldSpec = obj(
  { id: str(), type: oneOf(['string', 'number', 'boolean', 'select']), label: str() },
  {
    required: bool(),
    multi: bool(),
    other: bool(),
    choices: arrayOf(obj({ id: str(), label: str() })),
    min: num(),
    max: num(),
  },
).refine((f, path, out) => {
  if (f.type === 'select' && f.choices === undefined)
    out.push({ path: `${path}.choices`, message: `${path}.choices is required when type is select (AEP-0006)` });
});
export type FieldSpec = Infer<typeof fieldSpec>;

/** `answer` of attention.answered and control.attention.respond (AEP-0002 §7, AEP-0004 §5). */
const answer = obj({}, { option: str(), text: str().at(R), values: anyObject() });

// Core types -----------------------------------------------------------------------------

const core = {
  'session.started': obj(
    {},
    {
      label: str().at(R),
      parent: obj({ session: str() }, { run: str(), agent: str() }),
      client: obj({ name: str() }, { version: str() }),
      'gen_ai.request.model': str(),
      cwd: str().at(R),
    },
  ),
  'session.ended': obj(
    {},
    {
      reason: oneOf(['normal', 'error', 'timeout', 'killed', 'compaction']),
      duration_ms: int({ min: 0 }),
      runs: int({ min: 0 }),
    },
  ),
  'session.compacted': obj(
    {},
    {
      trigger: str(),
      strategy: str(),
      estimated_token_count: int({ min: 0 }),
      forgotten: int({ min: 0 }),
      ...usage,
    },
  ),
  'run.started': obj(
    {},
    {
      trigger: oneOf(['user', 'schedule', 'agent', 'control', 'resume']),
      prompt: str().at(R),
      ...usage,
      cost,
    },
  ),
  'run.finished': obj({}, { duration_ms: int({ min: 0 }), summary: str().at(R), ...usage, cost }),
  'run.failed': obj({ reason: str() }, { error: errorInfo, duration_ms: int({ min: 0 }) }),
  'run.cancelled': obj(
    {},
    {
      by: oneOf(['user', 'control', 'policy', 'shutdown']),
      reason: str().at(R),
      duration_ms: int({ min: 0 }),
      // D33: the tool processes the vendor left running when it stopped the turn, and those the
      // adapter ended on the cancel's `kill_tools`; a command line is redacted-class text (D35).
      left_running: arrayOf(toolProcess),
      killed: arrayOf(toolProcess),
    },
  ),
  'run.step.started': obj({}, { name: str().at(R), initial_num_steps: int({ min: 0 }) }),
  'run.step.finished': obj({}, { status: str() }),
  'tool.requested': obj({ tool }, { args_digest: str(), args_redacted: anyObject().at(R), args: anyObject().at(F) }),
  'tool.completed': obj(
    { tool },
    {
      duration_ms: int({ min: 0 }),
      status: str(),
      result_digest: str(),
      result_redacted: either(anyObject(), str()).at(R),
      result: either(anyObject(), str()).at(F),
      ...usage,
      cost,
    },
  ),
  'tool.failed': obj({ tool, error: errorInfo }, { duration_ms: int({ min: 0 }) }),
  'tool.denied': obj({ tool, by: oneOf(['policy', 'user_setting', 'runtime']) }, { rule: str() }),
  'progress.status': obj({}, { message: str().at(R), phase: str(), percent: num({ min: 0, max: 100 }) }),
  'progress.task.planned': obj({}, { task, parent: str() }),
  'progress.task.completed': obj({}, { task, status: str() }),
  'progress.artifact.produced': obj(
    {},
    {
      artifact: obj({}, { id: str(), name: str().at(R), mime: str(), bytes: int({ min: 0 }), uri: str().at(R) }),
    },
  ),
  'delegation.subagent.started': obj({}, { child, agent_type: str(), role: str() }),
  'delegation.subagent.stopped': obj({}, { child, agent_type: str(), status: str(), duration_ms: int({ min: 0 }) }),
  'attention.requested': obj(
    { kind: oneOf(['permission', 'input', 'auth', 'review', 'form', 'other']), prompt: str() },
    {
      options: arrayOf(obj({ id: str(), label: str() })),
      fields: arrayOf(fieldSpec),
      expires_at: str().refine((s, path, out) => {
        if (!isDateTime(s)) out.push({ path, message: `${path} must be an RFC 3339 date-time with a timezone` });
      }),
      respond_via: arrayOf(oneOf(['control', 'oob'])),
      context: anyObject().at(F),
    },
  ),
  'attention.routed': obj({}, { to: str(), via: str() }),
  'attention.answered': obj({ answer }, { by: str(), via: oneOf(['control', 'oob']) }),
  'attention.resolved': obj({ resolution: oneOf(['answered', 'auto', 'dismissed']) }, { latency_ms: int({ min: 0 }) }),
  'attention.timeout': obj({}, { after_ms: int({ min: 0 }) }),
  'agent.presence': obj({ state: oneOf(['online', 'offline', 'busy']) }),
  'agent.idle': obj({}, { since_ms: int({ min: 0 }), reason: str() }),
  'agent.health': obj({ status: oneOf(['ok', 'degraded', 'failing']) }, { detail: str().at(R) }),
  'agent.heartbeat': obj({}, { tick: int({ min: 0 }), interval_ms: int({ min: 0 }) }),
  'error.raised': obj({}, { error: errorInfo, code: str(), fatal: bool() }),
  'state.snapshot': obj({}, { state: anyObject().at(R), key: str(), rev: int({ min: 0 }) }),
  'state.delta': obj({}, { delta: arrayOf(anyObject()).at(R), key: str(), rev: int({ min: 0 }) }),
  ...KNOWLEDGE_PAYLOADS,
  'control.attention.respond': obj({ answer }),
  // D33: `kill_tools` also ends the tool processes the vendor leaves running, where the adapter can.
  // D44: `clear` also withdraws everything waiting in the session's queue.
  'control.cancel': obj(
    { scope: oneOf(['run', 'session']) },
    { reason: str().at(R), kill_tools: bool(), clear: bool() },
  ),
  'control.pause': obj({}),
  'control.resume': obj({}),
  'control.accepted': obj({}),
  'control.rejected': obj({ reason: oneOf(NACK_REASONS) }, { detail: str().at(R) }),
} satisfies Record<string, Shape>;

// Vendor types of this project -------------------------------------------------------------

/** Vendor payloads, keyed by `{category}.{rest}` after `x.{vendor}.`. */
const vendor = {
  /**
   * D1: `{ text }`, text is instruction content ([redacted]-class); D31 the sender's delivery; D43
   * what to do when no turn runs; extra fields ignored.
   */
  'control.instruct': obj({ text: str().at(R) }, { delivery: oneOf(DELIVERIES), idle: oneOf(IDLE) }),
  /** D32: takes back an instruction that still waits, named by its command id. */
  'control.withdraw': obj({ instruction: str() }),
  ...QUEUE_PAYLOADS,
  /** D45: a new session from the adapter's home session: its prompt (redacted-class) in `cwd` under a spawn root. */
  'control.spawn': obj({ prompt: str().at(R), cwd: str() }, { worktree: either(bool(), str()), model: str() }),
  /** Cline / OpenHands user-plane input (vendor-surfaces §6.5, §7.5). */
  'control.send_input': obj({ text: str().at(R) }, { delivery: oneOf(['queue', 'steer']) }),
  /**
   * D9; D27 names the moment (the vendor's hook event) whose reply carried it. D30: `lane` names
   * the way in (`hook`, or a native lane of the vendor table such as `app-server`, `serve`,
   * `stream-json`); `ref` is the vendor's own receipt (accepting turn id, message id, uuid). D43:
   * `started` true when it began the turn (`ref` that turn), false when a start found a turn begun
   * meanwhile and went into it as `delivery` says.
   */
  'instruction.delivered': obj(
    { queued_ms: int({ min: 0 }) },
    {
      moment: str(),
      delivery: oneOf(DELIVERIES),
      lane: str(),
      ref: str(),
      started: bool(),
      version: int({ min: 2 }),
      // D50: the steer moved the running shell command to the background (Copilot's `immediate`).
      backgrounded: obj({ command: str() }),
    },
  ),
  /** D10, D12; D31 a steer whose turn ended first; D32 withdrawn (cause: the withdraw, subject: the instruction). */
  'instruction.dropped': obj({
    reason: oneOf(['session-ended', 'expired', 'delivery-unknown', 'send-failed', 'turn-ended', 'withdrawn']),
  }),
  /** Outcome of send_input; the text is never echoed. */
  'input.sent': obj({}, { delivery: oneOf(['queue', 'steer']) }),
  /** The vendor reports the agent consumed a sent input (D28); the text is never echoed. */
  'input.consumed': obj({ queued_ms: int({ min: 0 }) }),
  /** D6: a start moment reopened a session that had ended (a resumed session keeps its id). */
  'session.reopened': obj({}),
  /**
   * D37: what the adapter knows of a session beyond its events: the working directory, the stale
   * window of its vendor, and a title (the first prompt's first line, redacted-class); D30 the
   * lanes that reach it now, and D43 whether one of them can start a turn in it (`startable`).
   */
  'session.described': obj(
    {},
    {
      cwd: str(),
      title: str().at(R),
      stale_after_ms: int({ min: 0 }),
      lanes: arrayOf(str()),
      startable: bool(),
      /** D45: who started the session: the spawner's identity, its spawn command, its own session. */
      spawned_by: obj({ identity: str(), command: str() }, { parent: str() }),
      /** D45: the git worktree a spawn made for the session (kept after it ends). */
      worktree: str(),
    },
  ),
  /** D10: a reopened session's later end moment; AEP allows one session.ended per session. */
  'session.closed': obj({}, { reason: oneOf(['normal', 'error', 'timeout', 'killed', 'compaction']) }),
} satisfies Record<string, Shape>;

type Core = typeof core;
type Vendor = typeof vendor;

/** The vendor-scoped types a payload is looked up by, as `x.<vendor>.<name>` for any vendor. */
type Scoped =
  | 'control.instruct'
  | 'control.withdraw'
  | keyof typeof QUEUE_PAYLOADS
  | 'control.spawn'
  | 'control.send_input'
  | 'instruction.delivered'
  | 'instruction.dropped'
  | 'input.sent'
  | 'input.consumed';

/** Every payload type this project builds or reads, by AEP type string. */
export type PayloadMap = { [K in keyof Core]: Infer<Core[K]> } & {
  [N in Scoped as `x.${string}.${N}`]: Infer<Vendor[N]>;
};

/** Registered core types with a payload shape (registry/types.json, schema ≠ null). */
export const CORE_PAYLOAD_TYPES = Object.keys(core) as (keyof Core)[];

/** The payload shape of a type, or undefined when none is known (unknown or foreign vendor types). */
export function payloadShape(type: string): Shape | undefined {
  if (Object.hasOwn(core, type)) return core[type as keyof Core];
  const v = parseVendorType(type);
  if (!v) return undefined;
  const key = `${v.category}.${v.rest}`;
  return Object.hasOwn(vendor, key) ? vendor[key as keyof Vendor] : undefined;
}

/** A payload failure: rule `payload`, path under `data`. */
export interface PayloadIssue {
  rule: 'payload';
  path: string;
  message: string;
}

/**
 * Checks `data` against the type's payload shape. Unknown types pass (consumers tolerate
 * them, AEP-0001 §6). An absent `data` is checked as `{}`, so a type with a required field fails.
 * With the event's `capture`, a required field gated above it may be absent: a hop that
 * down-levels drops it even when the schema requires it (AEP-0002 §5.1, aep-wire.md §2.2).
 */
export function validatePayload(type: string, data: unknown, capture?: CaptureLevel): PayloadIssue[] {
  const shape = payloadShape(type);
  if (!shape) return [];
  if (capture === 'none' && data === undefined) return [];
  const out: ShapeIssue[] = [];
  shape.check(data === undefined ? {} : data, 'data', out, capture === undefined ? undefined : captureRank(capture));
  return out.map((i) => ({ rule: 'payload', path: i.path, message: `${type}: ${i.message}` }));
}

/** RFC 3339 date-time with a mandatory offset (AEP-0001 §5.1 `time`). */
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-](\d{2}):(\d{2}))$/;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** Two ASCII digits at `i`, or -1. */
function two(s: string, i: number): number {
  const a = s.charCodeAt(i) - 48;
  const b = s.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * The common shape (`2026-12-01T17:12:41.123Z`) read by character codes, no regex and no
 * allocation: every relayed event carries a `time`. Anything else takes the regex path.
 */
function fastDateTime(s: string): boolean | undefined {
  if (
    s.length < 20 ||
    s.charCodeAt(4) !== 45 ||
    s.charCodeAt(7) !== 45 ||
    (s.charCodeAt(10) | 32) !== 116 ||
    s.charCodeAt(13) !== 58 ||
    s.charCodeAt(16) !== 58
  )
    return undefined;
  const hi = two(s, 0);
  const lo = two(s, 2);
  const mo = two(s, 5);
  const d = two(s, 8);
  const h = two(s, 11);
  const mi = two(s, 14);
  const se = two(s, 17);
  if (hi < 0 || lo < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || se < 0) return undefined;
  let i = 19;
  if (s.charCodeAt(i) === 46) {
    i += 1;
    const start = i;
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i += 1;
    if (i === start) return undefined;
  }
  if (i !== s.length - 1 || (s.charCodeAt(i) | 32) !== 122) return undefined;
  const y = hi * 100 + lo;
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 60) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = mo === 2 && leap ? 29 : DAYS[mo - 1]!;
  return d >= 1 && d <= days;
}

export function isDateTime(s: string): boolean {
  const fast = fastDateTime(s);
  if (fast !== undefined) return fast;
  const m = DATE_TIME.exec(s);
  if (!m) return false;
  const [y, mo, d, h, mi, se] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (mo < 1 || mo > 12 || h > 23 || mi > 59 || se > 60) return false;
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][mo - 1]!;
  if (d < 1 || d > days) return false;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return false;
  return true;
}

/**
 * AEP-0006 form values against the request's field_spec: every required field answered, a
 * select answered with choice ids (free text only where `other: true`), multi as an array.
 */
export function formValuesIssues(fields: readonly FieldSpec[], values: Record<string, unknown>): ShapeIssue[] {
  const out: ShapeIssue[] = [];
  for (const f of fields) {
    const v = values[f.id];
    const path = `answer.values.${f.id}`;
    if (v === undefined) {
      if (f.required === true) out.push({ path, message: `${path} is required by the form` });
      continue;
    }
    switch (f.type) {
      case 'string':
        if (typeof v !== 'string') out.push({ path, message: `${path} must be a string` });
        break;
      case 'number':
        if (typeof v !== 'number' || !Number.isFinite(v)) out.push({ path, message: `${path} must be a number` });
        else if ((f.min !== undefined && v < f.min) || (f.max !== undefined && v > f.max))
          out.push({ path, message: `${path} is out of range` });
        break;
      case 'boolean':
        if (typeof v !== 'boolean') out.push({ path, message: `${path} must be a boolean` });
        break;
      case 'select': {
        const ids = new Set((f.choices ?? []).map((c) => c.id));
        const one = (x: unknown): boolean => typeof x === 'string' && (ids.has(x) || f.other === true);
        const ok = f.multi === true ? Array.isArray(v) && v.every(one) : one(v);
        if (!ok)
          out.push({
            path,
            message: `${path} must be ${f.multi === true ? 'an array of choice ids' : 'a choice id'}${f.other === true ? ' or free text' : ''}`,
          });
        break;
      }
    }
  }
  return out;
}
