// The one interpreter of vendor tables: any VendorTable becomes the VendorSurface the session
// runtime speaks (classification by the table's rows, the opt-in held gate, the replies). Nothing
// here branches on a vendor name; every difference between vendors is a field of the table.
import { SteeringError } from '../protocol/errors.js';
import { instructType, sendInputType } from '../protocol/types.js';
import type { Delivery } from '../protocol/payloads.js';
import type {
  ClassifiedHook,
  DeliveryNotice,
  HookClass,
  HookReply,
  ObservationSpec,
  VendorSurface,
} from '../streams/surface.js';
import { DEFAULT_POLICY, subjectOf, type RiskPolicy } from './risk-policy.js';
import {
  DEFAULT_INSTRUCT_TTL_MS,
  fallbackType,
  type HookInput,
  type MomentRow,
  type OptionTarget,
  type RowBase,
  type SurfaceOptions,
  type VendorOption,
  type VendorTable,
} from './table.js';

/**
 * D37: an agent with no heartbeat is silent while it waits for its user, so silence proves
 * nothing until the D26 TTL would drop what is sent to it anyway: one hour, the TTL's default.
 */
const DEFAULT_STALE_AFTER_MS = 3_600_000;

/** The table's D25 resume window: that of its end moment, 0 without one. */
const resumeWindowOf = (table: VendorTable): number =>
  Object.values(table.moments).reduce((w, row) => (row.role === 'end' ? Math.max(w, row.resumeWindowMs ?? 0) : w), 0);

/**
 * D31: what the hook lane honours. A table that claims `queue` or `steer` without the turn rows
 * that make it work is a table error, caught here rather than as an instruction that never lands.
 */
function deliveriesOf(table: VendorTable): readonly Delivery[] {
  const honours = table.deliveries?.honours ?? ['moment'];
  const rows = Object.values(table.moments);
  const opens = rows.some((r) => (r.turn ?? r.bounds) === 'opens');
  const closes = rows.some((r) => (r.turn ?? r.bounds) === 'closes');
  if (honours.includes('queue') && !opens)
    throw new SteeringError('CONFIG_INVALID', `${table.token}: queue needs a moment that opens a turn`);
  if (honours.includes('steer') && !(opens && closes))
    throw new SteeringError('CONFIG_INVALID', `${table.token}: steer needs moments that open and close a turn`);
  return honours.includes('moment') ? honours : ['moment', ...honours];
}

/** The gate as the interpreter applies it: off, or on with a compiled tool pattern. */
type Gate = { on: false } | { on: true; tools: RegExp | undefined };

/** The vendor's option that sets `target`; undefined where it has none. */
export const optionFor = (table: VendorTable, target: OptionTarget): VendorOption | undefined =>
  table.options?.find((o) => o.sets === target);

function gateOf(table: VendorTable, opts: SurfaceOptions): Gate {
  if (opts.control !== true) return { on: false };
  if (optionFor(table, 'gate') === undefined) {
    throw new SteeringError(
      'CONFIG_INVALID',
      `${table.token} has no opt-in held gate; its held loops, if any, are always on`,
    );
  }
  const pattern = opts.gateTools;
  if (pattern === undefined || pattern === '') return { on: true, tools: undefined };
  try {
    return { on: true, tools: new RegExp(`^(?:${pattern})$`) };
  } catch (cause) {
    throw new SteeringError(
      'CONFIG_INVALID',
      `${optionFor(table, 'gate-tools')?.env ?? 'the gate tool pattern'} is not a valid regular expression: ${pattern}`,
      { cause },
    );
  }
}

/** Whether any held loop is enabled: an always-held row, or a gated row with its gate on. */
export function holdsAny(table: VendorTable, opts: SurfaceOptions = {}): boolean {
  return Object.values(table.moments).some(
    (row) => row.role === 'held' || (row.role === 'gated' && opts.control === true),
  );
}

function classOf(table: VendorTable, gate: Gate, input: HookInput, event: string): HookClass {
  const row = table.moments[event];
  if (row === undefined) return { kind: 'moment', eligible: false, reason: table.unlistedReason };
  const cls = rowClass(table, gate, input, row);
  // D34: the tool call a held request is about, and the moment that reports it ran. Named only
  // where one of the two needs it: the name digests the tool input.
  if (table.callOf === undefined) return cls;
  const ran = row.role === 'gated' ? row.open.ran : row.ran;
  const named = cls.kind === 'held' || (cls.kind === 'moment' && ran !== undefined);
  if (!named) return cls;
  const call = table.callOf(input);
  if (call === undefined) return cls;
  return cls.kind === 'held' ? { ...cls, call } : { ...cls, ran: call };
}

function rowClass(table: VendorTable, gate: Gate, input: HookInput, row: MomentRow): HookClass {
  switch (row.role) {
    case 'gated': {
      if (!gate.on || (gate.tools !== undefined && !gate.tools.test(row.tool(input))))
        return rowClass(table, gate, input, row.open);
      const spec = row.hold(input);
      return { kind: 'held', hold: spec.hold, request: spec.request };
    }
    case 'end':
      return { kind: 'end', reason: row.reason(input) };
    case 'held': {
      const spec = row.hold(input);
      return { kind: 'held', hold: spec.hold, request: spec.request };
    }
    case 'observe': {
      const main = !table.subagent(input);
      const cls: HookClass = { kind: 'moment', eligible: false, reason: row.reason };
      return withTurn(row, main, row.starts === true && main ? { ...cls, starts: true } : cls);
    }
    case 'context': {
      if (table.subagent(input)) return { kind: 'moment', eligible: false, reason: 'fired inside a subagent (D7)' };
      const why = row.unless?.(input);
      const cls: HookClass =
        why === undefined ? { kind: 'moment', eligible: true } : { kind: 'moment', eligible: false, reason: why };
      return withTurn(row, true, row.starts === true ? { ...cls, starts: true } : cls);
    }
  }
}

/** A subagent's turns are not the main agent's: only the main agent's moments open or close one. */
const withTurn = (row: RowBase, main: boolean, cls: HookClass): HookClass =>
  row.turn !== undefined && main && cls.kind === 'moment' ? { ...cls, turn: row.turn } : cls;

function observationsOf(table: VendorTable, input: HookInput, event: string): ObservationSpec[] {
  const rule = table.maps[event];
  if (rule !== undefined) return rule(input);
  if (table.fallback !== undefined) return table.fallback(input);
  return [{ type: fallbackType(table.token, event), data: { hook: event } }];
}

/**
 * D48: a tool permission the policy finds risky carries the rule's name and why. Read from the
 * tool input the vendor's hold put in the request's context (`tool_name`, `tool_input`); the
 * working directory from the hook's own `cwd` when the table does not describe one.
 */
function markRisk(cls: HookClass & { kind: 'held' }, input: HookInput, cwd: string | undefined, policy: RiskPolicy) {
  const ctx = cls.request.context;
  if (cls.request.kind !== 'permission' || ctx === undefined || typeof ctx.tool_name !== 'string') return cls;
  const toolInput = ctx.tool_input;
  if (typeof toolInput !== 'object' || toolInput === null || Array.isArray(toolInput)) return cls;
  const dir = cwd ?? (typeof input.cwd === 'string' ? input.cwd : undefined);
  const risky = policy.match(subjectOf(ctx.tool_name, toolInput as Record<string, unknown>, dir));
  return risky === undefined ? cls : { ...cls, request: { ...cls.request, risky } };
}

/**
 * Interprets a vendor table as the runtime's VendorSurface. The opt-in held gate comes in as
 * options (from flags or the environment, D16); a bad tool pattern is CONFIG_INVALID here, once.
 */
export function surfaceFrom(table: VendorTable, opts: SurfaceOptions = {}): VendorSurface {
  const neutral: HookReply = { body: table.replies.neutral };
  const gate = gateOf(table, opts);
  return {
    token: table.token,
    steeringType: table.steering === 'instruct' ? instructType(table.token) : sendInputType(table.token),
    port: table.port,
    attentionTimeoutMs: table.attentionTimeoutMs,
    holds: holdsAny(table, opts),
    ...(table.sendInput === undefined
      ? {}
      : { sendInput: { type: sendInputType(table.token), policy: table.sendInput } }),
    ...(table.userPlane?.cancels === true ? { cancels: true } : {}),
    ...(table.userPlane?.approvals === true ? { approvals: true } : {}),
    ...(table.userPlane?.withdraws === true ? { withdrawsInputs: true } : {}),
    ...(table.controls === undefined ? {} : { controls: table.controls }),
    resumeWindowMs: resumeWindowOf(table),
    deliveries: deliveriesOf(table),
    // D37: the D26 TTL bounds every vendor's queue; a table may set its own.
    instructTtlMs: table.instructTtlMs ?? DEFAULT_INSTRUCT_TTL_MS,
    staleAfterMs: table.staleAfterMs ?? DEFAULT_STALE_AFTER_MS,
    ...(table.startNote === undefined ? {} : { startNote: table.startNote.text }),
    ...(table.instructStarts === true ? { startType: instructType(table.token) } : {}),
    classify(input) {
      if (input === null || typeof input !== 'object' || Array.isArray(input)) {
        throw new SteeringError('HOOK_BODY_INVALID', 'hook body is not a JSON object');
      }
      const id = table.identify(input);
      if (id === undefined)
        throw new SteeringError('HOOK_BODY_INVALID', `${table.token} hook body lacks its session id or event name`);
      let cls: HookClass;
      let observations: ObservationSpec[];
      try {
        cls = classOf(table, gate, input, id.event);
        observations = observationsOf(table, input, id.event);
      } catch (cause) {
        if (cause instanceof SteeringError) throw cause;
        throw new SteeringError('HOOK_BODY_INVALID', `${table.token} ${id.event} hook body could not be read`, {
          cause,
        });
      }
      const later = table.later?.(id.event, input);
      const about = table.describe?.(input, id.event);
      if (cls.kind === 'held') cls = markRisk(cls, input, about?.cwd, opts.policy ?? DEFAULT_POLICY);
      const bounds = table.moments[id.event]?.bounds;
      const main = cls.kind === 'moment' && bounds !== undefined && !table.subagent(input);
      const hook: ClassifiedHook = {
        session: id.session,
        event: id.event,
        class: cls,
        observations,
        ...(main ? { bounds } : {}),
      };
      if (about !== undefined && (about.cwd !== undefined || about.prompt !== undefined)) hook.about = about;
      if (later !== undefined) hook.later = later;
      return hook;
    },
    contextReply(hook, text, notice) {
      // Only an eligible moment may carry text (D7, D13); anything else gets the neutral reply.
      if (hook.class.kind !== 'moment' || !hook.class.eligible) return neutral;
      const body = table.replies.context(hook.event, text);
      const field = table.replies.userNotice?.field;
      if (notice === undefined || field === undefined || body === null || typeof body !== 'object') return { body };
      return { body: { ...(body as Record<string, unknown>), [field]: noticeText(notice, hook.event) } };
    },
    noticeReply(hook, notice) {
      const field = table.replies.userNotice?.field;
      if (field === undefined || hook.class.kind !== 'moment') return neutral;
      const body = neutral.body === null || typeof neutral.body !== 'object' ? {} : neutral.body;
      return { body: { ...(body as Record<string, unknown>), [field]: noticeText(notice, hook.event) } };
    },
    neutralReply() {
      return neutral;
    },
    decisionReply(hook, decision) {
      // No decision (timeout, D14): the neutral reply lets the vendor fall back to its own dialog.
      const row = table.moments[hook.event];
      if (decision === undefined || hook.class.kind !== 'held' || (row?.role !== 'held' && row?.role !== 'gated'))
        return neutral;
      return { body: row.decide(hook, decision) };
    },
  };
}

/**
 * D27: what the user at the agent reads, e.g. `aep-steer: 2 instructions from ops, ci reached the agent (PreToolUse)`.
 */
function noticeText(n: DeliveryNotice, moment: string): string {
  const what = n.count === 1 ? '1 instruction' : `${n.count} instructions`;
  const who = n.from.length === 0 ? '' : ` from ${n.from.join(', ')}`;
  // D43: a turn begun from outside says so first, naming who began it.
  const started =
    n.startedBy === undefined
      ? undefined
      : `${n.startedBy === '' ? 'a steering client' : n.startedBy} started this turn`;
  const reached = n.count === 0 ? undefined : `${what}${who} reached the agent`;
  return `aep-steer: ${[started, reached].filter((t) => t !== undefined).join('; ')} (${moment})`;
}
