// The command gate: one decision per command, taken at once (AEP-0004 §3). Dedupe comes first so
// a redelivered command never reaches validation or the queue twice (D4); then AEP_INSTRUCT (D5),
// the session's life (D6), the payload (D2) and the queue cap (D3).
import { DELIVERIES, IDLE, dedupeKey, type AepCommand, type Rejection } from '../protocol/index.js';
import { QUEUE_CAP, TEXT_CAP } from './queue.js';
import { decisionOf } from './decisions.js';
import { surfaceRefusal } from './decided-by.js';
import type {
  AttentionRequest,
  Decision,
  Decisions,
  OpenHold,
  PendingInput,
  SettledHow,
  SettledRequest,
} from './session-context.js';
import type { InputPolicy } from './command-inputs.js';

export type GateDecision =
  | { kind: 'duplicate'; key: string }
  | { kind: 'reject'; key: string; rejection: Rejection }
  | { kind: 'accept'; key: string };

export const commandKey = (c: Pick<AepCommand, 'source' | 'id'>): string => dedupeKey(c);

/** A command whose gate is off on this adapter: unsupported until that gate is switched on. */
export const gateOff = (detail: string) => ({ reason: 'unsupported', rule: 'gate-off', detail }) as const;

export const REJECT = {
  gateOff: gateOff('command type not enabled on this adapter (AEP_INSTRUCT)'),
  notString: { reason: 'invalid', rule: 'text-not-string', detail: 'text must be a string' },
  empty: { reason: 'invalid', rule: 'text-empty', detail: 'text is empty' },
  tooLong: { reason: 'invalid', rule: 'text-too-long', detail: `text exceeds ${TEXT_CAP} characters` },
  queueFull: { reason: 'invalid', rule: 'queue-full', detail: `queue full (${QUEUE_CAP})` },
  unknownSession: { reason: 'refused', rule: 'unknown-session', detail: 'unknown session' },
  ended: { reason: 'refused', rule: 'session-ended', detail: 'session ended' },
  oobOnly: gateOff(
    "this request is answered in the agent's own UI (respond_via oob); answering it here needs the control gate",
  ),
  unknownRequest: {
    reason: 'invalid',
    rule: 'unknown-request',
    detail: 'unknown attention request: `aep-steer pending` lists the ones still held, with their ids',
  },
  answerInvalid: { reason: 'invalid', rule: 'answer-invalid', detail: 'answer does not fit the request' },
  controlGateOff: gateOff('control is not enabled on this adapter (its control gate is off)'),
  inputGateOff: gateOff('send_input is not enabled on this adapter (its control gate is off)'),
  idle: {
    reason: 'refused',
    rule: 'session-idle',
    detail: 'session idle: send_input would start a turn; send it while the agent is working',
  },
  transportDown: {
    reason: 'busy',
    rule: 'transport-down',
    detail: 'the agent connection is down; retry once the adapter has reconnected',
  },
  cancelGateOff: gateOff('control.cancel is not enabled on this adapter (its control gate is off)'),
  cancelScope: {
    reason: 'refused',
    rule: 'cancel-scope',
    detail: 'the agent has no session stop: send control.cancel with scope "run"',
  },
  scopeInvalid: { reason: 'invalid', rule: 'cancel-scope', detail: 'scope must be "run" or "session"' },
  noRun: { reason: 'refused', rule: 'no-active-run', detail: 'no active run to cancel' },
  otherRun: { reason: 'refused', rule: 'no-active-run', detail: 'the run named is not the active run' },
  cancelPending: { reason: 'refused', rule: 'cancel-pending', detail: 'a cancel of this run is already under way' },
  identicalPending: {
    reason: 'refused',
    rule: 'input-pending-identical',
    detail: 'an identical input is still pending; the agent would read it once',
  },
} as const satisfies Record<string, Rejection>;

/** D34: a respond to a request that already ended says how it ended; nothing was sent to the agent. */
export const NOT_PENDING = {
  'answered-oob': {
    reason: 'refused',
    rule: 'not-pending',
    detail:
      'already answered at the agent (in its own UI); nothing was sent: see `aep-steer pending` for what still waits',
  },
  answered: {
    reason: 'refused',
    rule: 'not-pending',
    detail: 'already answered by an earlier respond; nothing more was sent',
  },
  dismissed: {
    reason: 'refused',
    rule: 'not-pending',
    detail:
      'dismissed at the agent (answered or cancelled in its own UI, or its turn or session ended); nothing was sent: see `aep-steer pending` for what still waits',
  },
  timeout: {
    reason: 'refused',
    rule: 'not-pending',
    detail: 'timed out: the agent asked its own user instead; nothing was sent',
  },
} as const satisfies Record<SettledHow, Rejection>;

/**
 * D34: `allow` and `deny` mean the same on every vendor. Each group lists the option ids vendors
 * use for one meaning, with where they were seen; an answer naming an option the request lacks
 * counts as the request's own option of the same group.
 */
export const OPTION_WORDS: readonly (readonly { id: string; evidence: string }[])[] = [
  [
    {
      id: 'allow',
      evidence:
        'Claude Code, Codex, Qwen Code PermissionRequest (vendor-surfaces §1.5, §2.4, §3.4); OpenHands confirmation',
    },
    { id: 'approve', evidence: 'Cline hub approval.requested (cline-hub-observed; e2e/cline-respond)' },
    { id: 'accept', evidence: 'MCP elicitation action (vendor-surfaces §1.5)' },
    { id: 'once', evidence: 'Hermes approval choices (vendor-surfaces §5)' },
  ],
  [
    { id: 'deny', evidence: 'Claude Code, Codex, Qwen Code, Cline, Hermes' },
    { id: 'decline', evidence: 'MCP elicitation action (vendor-surfaces §1.5)' },
  ],
];

/** The request's own option that means what `word` means (D34), if it has one. */
export function optionFor(options: readonly { id: string }[], word: string): string | undefined {
  const w = word.toLowerCase();
  const exact = options.find((o) => o.id.toLowerCase() === w);
  if (exact) return exact.id;
  const group = OPTION_WORDS.find((g) => g.some((x) => x.id === w));
  return group?.map((x) => options.find((o) => o.id === x.id)?.id).find((id) => id !== undefined);
}

/** D2: the instruction text, or the rule it breaks. Never echoes the text. */
export function checkText(data: unknown): { text: string } | Rejection {
  const text = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).text : undefined;
  if (typeof text !== 'string') return REJECT.notString;
  if (text.trim() === '') return REJECT.empty;
  if (text.length > TEXT_CAP) return REJECT.tooLong;
  return { text };
}

/**
 * The first checks of a verb that carries text, in the gate's order: dedupe (D4), its gate (D5),
 * the session's life (D6), the text (D2). A decision when one of them decides, else the text.
 */
function textCommand(
  view: { decisions: Decisions; ended: boolean },
  command: AepCommand,
  gateOpen: boolean,
  gateOff: Rejection,
): GateDecision | { key: string; text: string } {
  const key = commandKey(command);
  if (decisionOf(view.decisions, key) !== undefined) return { kind: 'duplicate', key };
  if (!gateOpen) return { kind: 'reject', key, rejection: gateOff };
  if (view.ended) return { kind: 'reject', key, rejection: REJECT.ended };
  const checked = checkText(command.data);
  if ('rule' in checked) return { kind: 'reject', key, rejection: checked };
  return { key, text: checked.text };
}

export interface InstructGateView {
  decisions: Decisions;
  ended: boolean;
  pending: number;
  /** A turn is running (D31 `steer`); false where the table marks no turns. */
  turnOpen?: boolean;
}

/** D31: the session refuses a delivery its lanes cannot honour, naming those it can. */
const deliveryUnsupported = (delivery: string, honoured: readonly string[], hint?: string): Rejection => ({
  reason: 'unsupported',
  rule: 'delivery-unsupported',
  detail: `this session cannot take delivery "${delivery}": it accepts ${honoured.join(', ')}${hint === undefined ? '' : `; ${hint}`}`,
});

/** How each other delivery is named in the session-idle advice. */
const IDLE_ADVICE: Record<string, string> = { queue: 'with delivery queue', moment: 'as a moment' };

/** D31: a steer with no turn running; the advice names only what this session takes instead. */
export function steerIdle(honoured: readonly string[]): Rejection {
  const ways = ['queue', 'moment'].filter((d) => honoured.includes(d)).map((d) => IDLE_ADVICE[d]!);
  const next = ways.length === 0 ? 'send it while the agent works' : `send it ${ways.join(', or ')}`;
  return {
    reason: 'refused',
    rule: 'session-idle',
    detail: `no turn is running, and a steer never starts one: ${next}`,
  };
}

/** D31: the delivery the sender asked for (absent: `moment`), or the rule it breaks. */
function checkDelivery(
  data: unknown,
  honoured: readonly string[],
  hint?: string,
): { delivery?: 'steer' | 'queue' } | Rejection {
  const raw = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).delivery : undefined;
  if (raw === undefined || raw === 'moment') return {};
  if (typeof raw !== 'string' || !(DELIVERIES as readonly string[]).includes(raw)) {
    return { reason: 'invalid', rule: 'delivery-invalid', detail: `delivery must be one of ${DELIVERIES.join(', ')}` };
  }
  if (!honoured.includes(raw)) return deliveryUnsupported(raw, honoured, hint);
  return { delivery: raw as 'steer' | 'queue' };
}

/** D43: how a session may be started, as its lanes stand: a lane that can, or why none can here. */
export type StartWay = { lane: string } | { unsupported: string };

/**
 * D43: what an instruct asks for while no turn runs (absent: `refuse` for a steer, `wait` for the
 * rest), or the rule it breaks. `start` needs a lane that can start a turn in this session.
 */
function checkIdle(
  data: unknown,
  delivery: 'steer' | 'queue' | undefined,
  turnOpen: boolean,
  honoured: readonly string[],
  start: StartWay | undefined,
): { idle?: 'wait' | 'start' } | Rejection {
  const raw = typeof data === 'object' && data !== null ? (data as Record<string, unknown>).idle : undefined;
  if (raw !== undefined && (typeof raw !== 'string' || !(IDLE as readonly string[]).includes(raw)))
    return { reason: 'invalid', rule: 'idle-invalid', detail: `idle must be one of ${IDLE.join(', ')}` };
  // While a turn runs, idle changes nothing.
  if (turnOpen) return {};
  const idle = raw ?? (delivery === 'steer' ? 'refuse' : 'wait');
  if (idle === 'refuse')
    return delivery === 'steer'
      ? steerIdle(honoured)
      : { reason: 'refused', rule: 'session-idle', detail: 'no turn is running, and idle "refuse" was asked for' };
  if (idle === 'wait') return delivery === 'steer' ? { idle: 'wait' } : {};
  if (start === undefined || 'unsupported' in start)
    return {
      reason: 'unsupported',
      rule: 'start-unsupported',
      detail: `no way into this session can start a turn${start === undefined ? '' : `: ${start.unsupported}`}`,
    };
  return { idle: 'start' };
}

export function decideInstruct(
  view: InstructGateView,
  command: AepCommand,
  gateOpen: boolean,
  honoured: readonly string[] = ['moment'],
  hint?: string,
  start?: StartWay,
): GateDecision & { text?: string; delivery?: 'steer' | 'queue'; idle?: 'wait' | 'start' } {
  const checked = textCommand(view, command, gateOpen, REJECT.gateOff);
  if ('kind' in checked) return checked;
  const { key, text } = checked;
  const delivery = checkDelivery(command.data, honoured, hint);
  if ('rule' in delivery) return { kind: 'reject', key, rejection: delivery };
  const idle = checkIdle(command.data, delivery.delivery, view.turnOpen === true, honoured, start);
  if ('rule' in idle) return { kind: 'reject', key, rejection: idle };
  if (view.pending >= QUEUE_CAP) return { kind: 'reject', key, rejection: REJECT.queueFull };
  return { kind: 'accept', key, text, ...delivery, ...idle };
}

export interface SendInputGateView {
  decisions: Decisions;
  ended: boolean;
  turnOpen: boolean;
  inputs: readonly PendingInput[];
}

/**
 * send_input (D28, D29), in the instruct gate's order: dedupe, gate, session life, payload (D2
 * text, then `delivery`), then the vendor policy (idle refusal, identical pending text), the
 * transport, the cap (D3). Refusals never echo the text.
 */
export function decideSendInput(
  view: SendInputGateView,
  command: AepCommand,
  gateOpen: boolean,
  ready: boolean,
  policy: InputPolicy,
): GateDecision & { text?: string; delivery?: string } {
  const checked = textCommand(view, command, gateOpen, REJECT.inputGateOff);
  if ('kind' in checked) return checked;
  const { key, text } = checked;
  const raw = (command.data as Record<string, unknown>).delivery;
  const delivery = raw === undefined ? policy.defaultDelivery : raw;
  if (raw !== undefined && (typeof raw !== 'string' || !policy.deliveries.includes(raw))) {
    const detail =
      policy.deliveries.length === 0
        ? 'this verb takes no delivery'
        : `delivery must be ${policy.deliveries.join(' or ')}`;
    return { kind: 'reject', key, rejection: { reason: 'invalid', rule: 'delivery-invalid', detail } };
  }
  if (policy.refuseIdle && !view.turnOpen) return { kind: 'reject', key, rejection: REJECT.idle };
  if (policy.mergesIdentical && view.inputs.some((i) => i.text === text))
    return { kind: 'reject', key, rejection: REJECT.identicalPending };
  if (!ready) return { kind: 'reject', key, rejection: REJECT.transportDown };
  if (view.inputs.length >= QUEUE_CAP) return { kind: 'reject', key, rejection: REJECT.queueFull };
  return { kind: 'accept', key, text, ...(typeof delivery === 'string' ? { delivery } : {}) };
}

/**
 * control.cancel (AEP-0004 §5) against a vendor whose transport aborts the active run: scope
 * `run` only (the vendor has no session stop), and only while a run is active.
 */
export function decideCancel(
  view: { decisions: Decisions; ended: boolean; turnOpen: boolean; cancel?: { key: string }; run?: string },
  command: AepCommand,
  gateOpen: boolean,
  ready: boolean,
): GateDecision {
  const key = commandKey(command);
  if (decisionOf(view.decisions, key) !== undefined || view.cancel?.key === key) return { kind: 'duplicate', key };
  if (!gateOpen) return { kind: 'reject', key, rejection: REJECT.cancelGateOff };
  const surface = surfaceRefusal(command);
  if (surface !== undefined) return { kind: 'reject', key, rejection: surface };
  if (view.ended) return { kind: 'reject', key, rejection: REJECT.ended };
  const scope = (command.data as Record<string, unknown> | undefined)?.scope;
  if (scope === 'session') return { kind: 'reject', key, rejection: REJECT.cancelScope };
  if (scope !== 'run') return { kind: 'reject', key, rejection: REJECT.scopeInvalid };
  if (!view.turnOpen) return { kind: 'reject', key, rejection: REJECT.noRun };
  // The vendor aborts the active run only: a command naming another one is never guessed at.
  if (command.run !== undefined && view.run !== undefined && command.run !== view.run)
    return { kind: 'reject', key, rejection: REJECT.otherRun };
  if (view.cancel !== undefined) return { kind: 'reject', key, rejection: REJECT.cancelPending };
  if (!ready) return { kind: 'reject', key, rejection: REJECT.transportDown };
  return { kind: 'accept', key };
}

/** D6 for a session the adapter never saw (no actor exists). */
export function decideUnknownSession(decisions: Decisions, command: AepCommand): GateDecision {
  const key = commandKey(command);
  if (decisionOf(decisions, key) !== undefined) return { kind: 'duplicate', key };
  return { kind: 'reject', key, rejection: REJECT.unknownSession };
}

const DENY = 'deny';

/**
 * Turns a respond's answer into the decision the held reply carries (D14, AEP-0008 text answers):
 * text equal to an option id or label counts as that option; other text on a permission is a
 * deny with the text as its message, never the permissive choice.
 */
export function readAnswer(request: AttentionRequest, answer: unknown): Decision | undefined {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return undefined;
  const a = answer as Record<string, unknown>;
  const options =
    request.options ??
    (request.kind === 'permission'
      ? [
          { id: 'allow', label: 'Allow' },
          { id: DENY, label: 'Deny' },
        ]
      : []);
  if (request.kind === 'form') {
    if (typeof a.option === 'string' && a.values === undefined) return { option: a.option };
    if (typeof a.values !== 'object' || a.values === null || Array.isArray(a.values)) return undefined;
    const values = a.values as Record<string, unknown>;
    for (const f of request.fields ?? []) {
      if (f.required === true && typeof f.id === 'string' && values[f.id] === undefined) return undefined;
    }
    return { option: 'submit', values };
  }
  if (typeof a.option === 'string') {
    const option = options.some((o) => o.id === a.option) ? a.option : optionFor(options, a.option);
    if (option === undefined) return undefined;
    return typeof a.text === 'string' && a.text.trim() !== '' ? { option, message: a.text } : { option };
  }
  if (typeof a.text === 'string' && a.text.trim() !== '') {
    const t = a.text.trim().toLowerCase();
    const byLabel = options.filter((o) => o.label.toLowerCase() === t);
    const hit = optionFor(options, t) ?? (byLabel.length === 1 ? byLabel[0]!.id : undefined);
    if (hit) return { option: hit };
    return { option: optionFor(options, DENY) ?? DENY, message: a.text };
  }
  return undefined;
}

/** The answer does not fit: which answers would (D34: the sentence names what to send instead). */
function answerMisfit(request: AttentionRequest): Rejection {
  if (request.kind === 'form') {
    return {
      ...REJECT.answerInvalid,
      detail: 'answer does not fit the request: send --values with every required field, or decline',
    };
  }
  const ids = (request.options ?? [{ id: 'allow' }, { id: DENY }]).map((o) => o.id);
  return {
    ...REJECT.answerInvalid,
    detail: `answer does not fit the request: its options are ${ids.join(', ')} (allow and deny map onto them), or free text`,
  };
}

export function decideRespond(
  view: { decisions: Decisions; holds: readonly OpenHold[]; settled?: readonly SettledRequest[] },
  command: AepCommand,
): GateDecision & { hold?: OpenHold; decision?: Decision } {
  const key = commandKey(command);
  if (decisionOf(view.decisions, key) !== undefined) return { kind: 'duplicate', key };
  const hold = view.holds.find((h) => h.requestId === command.subject);
  if (!hold) {
    const ended = view.settled?.find((r) => r.requestId === command.subject);
    return { kind: 'reject', key, rejection: ended === undefined ? REJECT.unknownRequest : NOT_PENDING[ended.how] };
  }
  // A request observed without the control gate is answered in the agent's own UI only.
  if (hold.request.respondVia !== undefined && !hold.request.respondVia.includes('control'))
    return { kind: 'reject', key, rejection: REJECT.oobOnly };
  const data = command.data as Record<string, unknown> | undefined;
  const decision = readAnswer(hold.request, data?.answer);
  if (!decision) return { kind: 'reject', key, rejection: answerMisfit(hold.request) };
  return { kind: 'accept', key, hold, decision };
}
