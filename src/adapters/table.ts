// A vendor is data: one VendorTable per vendor, and one interpreter (surfaceFrom) that turns any
// table into the VendorSurface the session runtime speaks. Nothing here branches on a vendor name;
// every difference between vendors is a field of the table.
import { SteeringError } from '../protocol/errors.js';
import { instructType, sendInputType, vendorType } from '../protocol/types.js';
import type { InstallReport } from './install.js';
import type {
  AttentionRequestSpec, ClassifiedHook, HeldDecision, HookClass, HookReply, ObservationSpec, VendorSurface,
} from '../streams/surface.js';

/** A parsed hook body as the vendor sent it. */
export type HookInput = Record<string, unknown>;

/** What a held hook asks for: the runtime's hold state and the attention request (D13, D14). */
export interface HeldSpec {
  hold: 'permission' | 'elicitation';
  request: AttentionRequestSpec;
}

interface RowBase {
  /** Where the row's behaviour is proven: `e2e/<token>#<test name>` or `<doc> §<section>`. */
  evidence: string;
  /** First vendor version the row holds for; the table's pinned version when absent. */
  since?: string;
}

/** A moment whose reply accepts context that the main agent consumes (D7). */
export interface ContextRow extends RowBase {
  role: 'context';
  /** A further condition on this arrival: returns why it is not eligible, or undefined when it is. */
  unless?: (input: HookInput) => string | undefined;
}

/** A moment that is observed but never carries steering; `reason` says why (D7). */
export interface ObserveRow extends RowBase {
  role: 'observe';
  reason: string;
}

/** A held loop: the reply waits for a decision and never carries steering (D13). */
export interface HeldRow extends RowBase {
  role: 'held';
  hold: (input: HookInput) => HeldSpec;
  /** The vendor's decision reply body for an answered hold. */
  decide: (hook: ClassifiedHook, decision: HeldDecision) => unknown;
}

/** The session's end moment: still-queued instructions drop here (D10). */
export interface EndRow extends RowBase {
  role: 'end';
}

/**
 * A moment an opt-in gate may hold (VS Code `PreToolUse`, Hermes `pre_tool_call`): held when `gate`
 * returns a spec, otherwise it is the `open` row. A held reply carries only the decision (D13).
 */
export interface GatedRow extends RowBase {
  role: 'gated';
  gate: (input: HookInput) => HeldSpec | undefined;
  decide: (hook: ClassifiedHook, decision: HeldDecision) => unknown;
  open: ContextRow | ObserveRow;
}

export type MomentRow = ContextRow | ObserveRow | HeldRow | EndRow | GatedRow;

/** Hook input → observation events (AEP-0002 Annex A). An empty list means deliberately none. */
export type MapRule = (input: HookInput) => ObservationSpec[];

export interface InstallOptions {
  /** Project directory for a project-level install. */
  project?: string;
  /** User-level install (the default when no project is given). */
  user?: boolean;
  port: number;
  secret: string;
  /** The vendor's neutral reply, printed by the shim on any failure (D15). */
  neutral: unknown;
  attentionTimeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/** Writes and removes a vendor's hook configuration; removal touches only the adapter's own hooks. */
export interface Installer {
  install(opts: InstallOptions): InstallReport;
  uninstall(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport;
  /** One line on where the configuration goes, for `--help`. */
  describeTarget: string;
}

export interface VendorTable {
  /** AEP agent token: envelope `agent` and `x.{token}.…` (vendor-surfaces §0.2). */
  token: string;
  /** The vendor CLI version the rows were observed on. */
  version: string;
  /** `instruct` for context-injecting vendors, `send_input` for user-plane ones (D1). */
  steering: 'instruct' | 'send_input';
  /** Default hook port (D15). */
  port: number;
  /** Attention timeout default (D14). */
  attentionTimeoutMs: number;
  /** Reads the vendor's session id and hook event name; undefined when the body lacks them. */
  identify: (input: HookInput) => { session: string; event: string } | undefined;
  /** D7: true when the hook fired inside a subagent, whose context never reaches the main agent. */
  subagent: (input: HookInput) => boolean;
  moments: Record<string, MomentRow>;
  /** Why a hook with no row is not eligible (kept on the classification for the log). */
  unlistedReason: string;
  replies: {
    /** Body of the neutral reply; undefined means an empty 200 (D15). */
    neutral: unknown;
    /** Body of a reply carrying steering text at an eligible moment (D8). */
    context: (event: string, text: string) => unknown;
  };
  maps: Record<string, MapRule>;
  /** Observations for a hook with no `maps` rule; `x.{token}.session.<snake_case>` when absent. */
  fallback?: MapRule;
  /** How `aep-steer install <token>` wires the vendor's hooks to the adapter. */
  installer?: Installer;
}

/** `PostToolUseFailure` → `post_tool_use_failure`, `pre_llm_call` unchanged. */
export const snakeCase = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();

/** The fallback observation for a hook with no Annex A mapping: `x.{token}.session.<snake_case>`. */
export const fallbackType = (token: string, event: string): string => vendorType(token, `session.${snakeCase(event) || 'unknown'}`);

/** Reads `session` and `event` from two top-level string fields. */
export const byFields = (sessionField: string, eventField: string) => (input: HookInput) => {
  const session = input[sessionField];
  const event = input[eventField];
  if (typeof session !== 'string' || session === '' || typeof event !== 'string' || event === '') return undefined;
  return { session, event };
};

function classOf(table: VendorTable, input: HookInput, event: string): HookClass {
  const row = table.moments[event];
  if (row === undefined) return { kind: 'moment', eligible: false, reason: table.unlistedReason };
  return rowClass(table, input, row);
}

function rowClass(table: VendorTable, input: HookInput, row: MomentRow): HookClass {
  switch (row.role) {
    case 'gated': {
      const spec = row.gate(input);
      return spec === undefined ? rowClass(table, input, row.open) : { kind: 'held', hold: spec.hold, request: spec.request };
    }
    case 'end':
      return { kind: 'end' };
    case 'held': {
      const spec = row.hold(input);
      return { kind: 'held', hold: spec.hold, request: spec.request };
    }
    case 'observe':
      return { kind: 'moment', eligible: false, reason: row.reason };
    case 'context': {
      if (table.subagent(input)) return { kind: 'moment', eligible: false, reason: 'fired inside a subagent (D7)' };
      const why = row.unless?.(input);
      return why === undefined ? { kind: 'moment', eligible: true } : { kind: 'moment', eligible: false, reason: why };
    }
  }
}

function observationsOf(table: VendorTable, input: HookInput, event: string): ObservationSpec[] {
  const rule = table.maps[event];
  if (rule !== undefined) return rule(input);
  if (table.fallback !== undefined) return table.fallback(input);
  return [{ type: fallbackType(table.token, event), data: { hook: event } }];
}

/** Interprets a vendor table as the runtime's VendorSurface. */
export function surfaceFrom(table: VendorTable): VendorSurface {
  const neutral: HookReply = { body: table.replies.neutral };
  return {
    token: table.token,
    steeringType: table.steering === 'instruct' ? instructType(table.token) : sendInputType(table.token),
    port: table.port,
    attentionTimeoutMs: table.attentionTimeoutMs,
    classify(input) {
      if (input === null || typeof input !== 'object' || Array.isArray(input)) {
        throw new SteeringError('HOOK_BODY_INVALID', 'hook body is not a JSON object');
      }
      const id = table.identify(input);
      if (id === undefined) throw new SteeringError('HOOK_BODY_INVALID', `${table.token} hook body lacks its session id or event name`);
      let cls: HookClass;
      let observations: ObservationSpec[];
      try {
        cls = classOf(table, input, id.event);
        observations = observationsOf(table, input, id.event);
      } catch (cause) {
        if (cause instanceof SteeringError) throw cause;
        throw new SteeringError('HOOK_BODY_INVALID', `${table.token} ${id.event} hook body could not be read`, { cause });
      }
      return { session: id.session, event: id.event, class: cls, observations };
    },
    contextReply(hook, text) {
      // Only an eligible moment may carry text (D7, D13); anything else gets the neutral reply.
      if (hook.class.kind !== 'moment' || !hook.class.eligible) return neutral;
      return { body: table.replies.context(hook.event, text) };
    },
    neutralReply() {
      return neutral;
    },
    decisionReply(hook, decision) {
      // No decision (timeout, D14): the neutral reply lets the vendor fall back to its own dialog.
      const row = table.moments[hook.event];
      if (decision === undefined || hook.class.kind !== 'held' || (row?.role !== 'held' && row?.role !== 'gated')) return neutral;
      return { body: row.decide(hook, decision) };
    },
  };
}

/**
 * The context reply Claude Code, Codex and Qwen Code share: `hookEventName` must equal the firing
 * event or the context is dropped (vendor-clis-observed §1.7).
 */
export const hookSpecificOutputContext = (event: string, text: string): unknown => ({
  hookSpecificOutput: { hookEventName: event, additionalContext: text },
});
