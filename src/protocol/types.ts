// Type grammar (AEP-0001 §6) and scoping (AEP-0001 §5.2, AEP-0004 §2.2).

export const CATEGORIES = [
  'agent',
  'session',
  'run',
  'progress',
  'tool',
  'delegation',
  'attention',
  'resource',
  'error',
  'state',
  'assessment',
  'message',
  'control',
] as const;

/** The schema's type pattern, verbatim in meaning: 13 core categories or `x.{vendor}.{category}.{rest}`. */
export const TYPE_PATTERN = new RegExp(
  `^((${CATEGORIES.join('|')})(\\.[a-z0-9_]+)+|x\\.[a-z0-9_-]+\\.[a-z0-9_]+(\\.[a-z0-9_]+)+)$`,
);

/** Foreign-emitter session events: carry `session`, omit `seq`. */
export const COMMAND_SCOPED_PATTERN =
  /^(control\.attention\.respond|control\.cancel|control\.pause|control\.resume|x\.[a-z0-9_-]+\.control\..+|attention\.routed)$/;

export type Scope = 'agent' | 'command' | 'session';

export const scopeOf = (type: string): Scope =>
  type.startsWith('agent.') ? 'agent' : COMMAND_SCOPED_PATTERN.test(type) ? 'command' : 'session';

/** A command is a `control.*` imperative or a vendor `x.{vendor}.control.*` verb (D17). */
export const isCommandType = (type: string): boolean =>
  /^control\.(attention\.respond|cancel|pause|resume)$/.test(type) || /^x\.[a-z0-9_-]+\.control\./.test(type);

/** Types already checked: a session step builds the same few per vendor on every output. */
const checkedTypes = new Set<string>();

/** Builds a vendor type `x.{vendor}.{category}.{rest}`; throws on a malformed result. */
export function vendorType<V extends string, R extends string>(vendor: V, rest: R): `x.${V}.${R}` {
  const t = `x.${vendor}.${rest}` as const;
  if (checkedTypes.has(t)) return t;
  if (!TYPE_PATTERN.test(t)) throw new TypeError(`not a valid vendor type: ${t}`);
  if (checkedTypes.size < 1024) checkedTypes.add(t);
  return t;
}

/** The project's vendor verbs and audit types (D1, D9, D10; Cline/OpenHands send_input). */
export const instructType = (vendor: string) => vendorType(vendor, 'control.instruct');
export const sendInputType = (vendor: string) => vendorType(vendor, 'control.send_input');
export const withdrawType = (vendor: string) => vendorType(vendor, 'control.withdraw');
/** D44: the sender's queue verbs and what each settles on the stream. */
export const queueVerbType = (vendor: string, verb: 'edit' | 'move' | 'promote' | 'hold') =>
  vendorType(vendor, `control.${verb}`);
export const queueChangeType = (vendor: string, change: 'edited' | 'moved' | 'promoted' | 'held') =>
  vendorType(vendor, change === 'held' ? 'queue.held' : `instruction.${change}`);
/** D45: `x.{vendor}.control.spawn`, which starts a session; sent to the adapter's home session. */
export const isSpawnType = (type: string): boolean => /^x\.[a-z0-9_-]+\.control\.spawn$/.test(type);
export const deliveredType = (vendor: string) => vendorType(vendor, 'instruction.delivered');
export const droppedType = (vendor: string) => vendorType(vendor, 'instruction.dropped');
export const reopenedType = (vendor: string) => vendorType(vendor, 'session.reopened');
export const closedType = (vendor: string) => vendorType(vendor, 'session.closed');
/**
 * D37: what an adapter says in answer to a command or a timer (acks, instruction outcomes, a held
 * request's end, its own description of the session), not the agent speaking. None of these
 * refreshes a session's last activity.
 */
const ADAPTER_ANSWERS = new RegExp(
  '^(?:control\\.(?:accepted|rejected)|attention\\.(?:answered|resolved|timeout)' +
    '|x\\.[a-z0-9_-]+\\.(?:instruction\\.(?:delivered|dropped|edited|moved|promoted)|queue\\.held' +
    '|input\\.(?:sent|consumed)|session\\.described))$',
);
/** D37: an event of the session's agent, which refreshes its last activity (a command never does). */
export const isAgentActivity = (type: string): boolean => !isCommandType(type) && !ADAPTER_ANSWERS.test(type);

/**
 * The extension attribute (AEP-0001 §5.4) of a `control.rejected` that names the rule it failed,
 * a stable code beside the AEP `reason` enum (docs/errors.md).
 */
export const CODE_ATTR = 'code';

/**
 * D36: the extension attribute (AEP-0001 §5.4) of an end event that states its D25 resume window
 * in ms: instructions are accepted until the end's time plus this.
 */
/**
 * D32: the extension attribute of a withdraw sent on a tokens-file grant rather than as the
 * instruction's sender (value `withdraw`). The relay refuses it `unauthorized` unless the sender's
 * token is granted withdraw for the session, so an adapter behind the relay may honour it.
 */
export const GRANT_ATTR = 'grant';
export const WITHDRAW_GRANT = 'withdraw';

export const RESUME_WINDOW_ATTR = 'resumewindowms';
/** D45: the extension attribute of a forwarded spawn naming the sender's own session; only the relay sets it. */
export const SPAWN_PARENT_ATTR = 'spawnparent';
/** D37: the adapter's description of a session (working directory, stale window, title). */
export const describedType = (vendor: string) => vendorType(vendor, 'session.described');
export const inputSentType = (vendor: string) => vendorType(vendor, 'input.sent');
export const inputConsumedType = (vendor: string) => vendorType(vendor, 'input.consumed');

/** `x.{vendor}.{category}.{rest}` → its parts, or undefined for a core type. */
export function parseVendorType(type: string): { vendor: string; category: string; rest: string } | undefined {
  const m = /^x\.([a-z0-9_-]+)\.([a-z0-9_]+)\.(.+)$/.exec(type);
  return m ? { vendor: m[1]!, category: m[2]!, rest: m[3]! } : undefined;
}

/** Registration status of a core type (registry/types.json, AEP-0002 §4). */
export type TypeStatus = 'mandatory' | 'optional' | 'reserved';

const MANDATORY = [
  'session.started',
  'session.ended',
  'run.started',
  'run.finished',
  'run.failed',
  'run.cancelled',
  'tool.requested',
  'tool.completed',
  'tool.failed',
  'tool.denied',
  'attention.requested',
  'attention.answered',
  'attention.resolved',
  'attention.timeout',
] as const;
const OPTIONAL = [
  'session.compacted',
  'run.step.started',
  'run.step.finished',
  'progress.status',
  'progress.task.planned',
  'progress.task.completed',
  'progress.artifact.produced',
  'delegation.subagent.started',
  'delegation.subagent.stopped',
  'attention.routed',
  'agent.presence',
  'agent.idle',
  'agent.health',
  'agent.heartbeat',
  'error.raised',
  'state.snapshot',
  'state.delta',
  'resource.retrieval.requested',
  'resource.retrieval.returned',
  'resource.retrieval.reranked',
  'resource.citation.recorded',
  'assessment.evaluation.recorded',
  'assessment.feedback.received',
  'assessment.guardrail.recorded',
  'control.attention.respond',
  'control.cancel',
  'control.pause',
  'control.resume',
  'control.accepted',
  'control.rejected',
] as const;
const RESERVED = ['message.user.submitted', 'message.agent.replied'] as const;

/** The 0.1 registry: every core type and its status. Vendor types are not registered. */
export const REGISTRY: ReadonlyMap<string, TypeStatus> = new Map<string, TypeStatus>([
  ...MANDATORY.map((t) => [t, 'mandatory'] as const),
  ...OPTIONAL.map((t) => [t, 'optional'] as const),
  ...RESERVED.map((t) => [t, 'reserved'] as const),
]);

/** Status of a core type, `undefined` for an unregistered core type, `'vendor'` for `x.*`. */
export const typeStatus = (type: string): TypeStatus | 'vendor' | undefined =>
  type.startsWith('x.') ? 'vendor' : REGISTRY.get(type);
