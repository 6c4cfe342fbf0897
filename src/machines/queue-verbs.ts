// D44: the sender's verbs on what still waits: edit its text in place, move it, promote it to a
// steer now, and pause or resume the session's queue. They carry withdraw's rights (D32) and answer
// as withdraw does once an instruction stopped waiting. Each is decided in one step, so a verb
// racing a delivery ends one way only: the moment that took the instruction first makes it
// `already-delivered`, and a verb that came first changes what that moment carries.
import { droppedType, type AepCommand, type Rejection } from '../protocol/index.js';
import { GRANT_ATTR, WITHDRAW_GRANT, queueChangeType } from '../protocol/types.js';
import { decisionOf, withDecision } from './decisions.js';
import { decidedByOf, isRejection, surfaceRefusal, type DecidedBy } from './decided-by.js';
import { checkText, commandKey, gateOff, REJECT, type GateDecision } from './gate.js';
import { unlessAccepted, type Step } from './step.js';
import { finishedWith, NAMED_REJECT } from './withdraw.js';
import { honoured, laneFor, startWay, toLane } from './lane-steps.js';
import type { NativeLanes, QueueVerbInput } from './command-inputs.js';
import { handOver, noTurnRunning } from './queue-handover.js';
import type { FinishedHow, QueuedInstruction, SessionContext } from './session-context.js';
import type { SessionOutput } from './session-output.js';

const QUEUE_REJECT = {
  gateOff: gateOff('queue verbs are not enabled on this adapter (AEP_INSTRUCT)'),
  ...NAMED_REJECT,
  notSender: {
    reason: 'unauthorized',
    rule: 'not-sender',
    detail: 'only the sender of an instruction may change it; nothing was changed',
  },
  handedOver: {
    reason: 'refused',
    rule: 'already-delivered',
    detail: "handed to the agent's own queue or a lane already: it can no longer be changed here",
  },
  moveInvalid: {
    reason: 'invalid',
    rule: 'move-invalid',
    detail: 'move needs `before` (another instruction waiting in this session) or `to` ("front" or "back")',
  },
  unknownTarget: {
    reason: 'invalid',
    rule: 'move-target-unknown',
    detail: "`before` names no other instruction waiting in this session's queue: `aep-steer queue` lists them",
  },
  pausedInvalid: { reason: 'invalid', rule: 'paused-invalid', detail: 'paused must be true or false' },
  noQueue: {
    reason: 'unsupported',
    rule: 'no-queue',
    detail:
      'this agent keeps no queue to change: it takes instruct only with idle "start", to begin a turn in an idle session, ' +
      'and send_input appends to the conversation at once (a running turn reads it at its next step); nothing was changed',
  },
  noSteer: {
    reason: 'unsupported',
    rule: 'delivery-unsupported',
    detail: 'no way into this session delivers a steer within a turn; it stays where it was in the queue',
  },
  idle: {
    reason: 'refused',
    rule: 'session-idle',
    detail:
      'no turn is running, so there is nothing to steer; it stays where it was: promote with idle "start" to begin a turn with it',
  },
} as const satisfies Record<string, Rejection>;

const ENDED: Record<FinishedHow, Rejection> = {
  delivered: {
    reason: 'refused',
    rule: 'already-delivered',
    detail: 'already delivered to the agent: it can no longer be changed',
  },
  withdrawn: { reason: 'refused', rule: 'not-waiting', detail: 'withdrawn; nothing was changed' },
  dropped: {
    reason: 'refused',
    rule: 'not-waiting',
    detail: 'no longer waiting: it was dropped (expired, its turn or session ended) and never delivered',
  },
};

const dataOf = (c: AepCommand): Record<string, unknown> => (c.data ?? {}) as Record<string, unknown>;

/** D32 rights: the instruction's sender, or a token the relay checked is granted withdraw for the session. */
const owns = (c: AepCommand, i: { from?: string }): boolean =>
  c[GRANT_ATTR] === WITHDRAW_GRANT || i.from === undefined || i.from === c.agent;

/** The waiting instruction a verb names, or the decision that refuses it (as withdraw would, D32). */
function waitingItem(ctx: SessionContext, c: AepCommand, key: string): QueuedInstruction | GateDecision {
  const id = dataOf(c).instruction;
  const reject = (rejection: Rejection): GateDecision => ({ kind: 'reject', key, rejection });
  if (typeof id !== 'string' || id === '') return reject(QUEUE_REJECT.noId);
  const item = ctx.queue.find((i) => i.id === id);
  if (item !== undefined) return owns(c, item) ? item : reject(QUEUE_REJECT.notSender);
  const flying = ctx.inFlight.flatMap((b) => b.items).find((i) => i.id === id);
  if (flying !== undefined) return reject(owns(c, flying) ? ENDED.delivered : QUEUE_REJECT.notSender);
  const held = ctx.laned?.find((i) => i.id === id) ?? ctx.inputs.find((i) => i.id === id);
  if (held !== undefined) return reject(owns(c, held) ? QUEUE_REJECT.handedOver : QUEUE_REJECT.notSender);
  const ended = ctx.finished?.find((f) => f.id === id);
  return reject(ended === undefined ? QUEUE_REJECT.unknown : ENDED[ended.how]);
}

/** D46: who made the change; the gate refused a command whose surface claim is bad, so this one is good. */
const byOf = (c: AepCommand): { decidedBy?: DecidedBy } => {
  const by = decidedByOf(c);
  return isRejection(by) ? {} : { decidedBy: by };
};

const changed = (
  ctx: SessionContext,
  c: AepCommand,
  change: 'edited' | 'moved' | 'promoted' | 'held',
  data: Record<string, unknown>,
  subject?: string,
): SessionOutput => ({
  type: 'queue.changed',
  eventType: queueChangeType(ctx.vendor, change),
  cause: c.id,
  ...(subject === undefined ? {} : { subject }),
  data,
  ...byOf(c),
});

/** The accepted verb: its ack, then what it settled (its `decided_by` beside the outcome, D46). */
const accepted = (
  ctx: SessionContext,
  key: string,
  cause: string,
  patch: Partial<SessionContext>,
  out: SessionOutput[],
): Step => ({
  context: { ...patch, decisions: withDecision(ctx.decisions, key, 'accepted') },
  outputs: [{ type: 'control.accepted', cause, key }, ...out],
});

function edit(ctx: SessionContext, c: AepCommand, key: string, item: QueuedInstruction): Step | GateDecision {
  const checked = checkText(c.data);
  if ('rule' in checked) return { kind: 'reject', key, rejection: checked };
  const version = (item.version ?? 1) + 1;
  const queue = ctx.queue.map((i) => (i === item ? { ...i, text: checked.text, version } : i));
  return accepted(ctx, key, c.id, { queue }, [changed(ctx, c, 'edited', { version }, item.id)]);
}

function move(ctx: SessionContext, c: AepCommand, key: string, item: QueuedInstruction): Step | GateDecision {
  const { before, to } = dataOf(c);
  const rest = ctx.queue.filter((i) => i !== item);
  let queue: QueuedInstruction[];
  if (to === 'front' && before === undefined) queue = [item, ...rest];
  else if (to === 'back' && before === undefined) queue = [...rest, item];
  else if (typeof before === 'string' && to === undefined && before !== '') {
    if (before === item.id) queue = ctx.queue;
    else {
      const at = rest.findIndex((i) => i.id === before);
      if (at < 0) return { kind: 'reject', key, rejection: QUEUE_REJECT.unknownTarget };
      queue = [...rest.slice(0, at), item, ...rest.slice(at)];
    }
  } else return { kind: 'reject', key, rejection: QUEUE_REJECT.moveInvalid };
  const position = queue.indexOf(item) + 1;
  return accepted(ctx, key, c.id, { queue }, [changed(ctx, c, 'moved', { position }, item.id)]);
}

/**
 * D44: a steer now. Through a lane that reaches the session when one does, else at the front of the
 * hook lane's queue for the turn's next moment; while no turn runs only `idle: "start"` takes it,
 * on a lane that starts turns (D43). A refusal leaves it as it was.
 */
function promote(
  ctx: SessionContext,
  input: QueueVerbInput,
  key: string,
  item: QueuedInstruction,
  ended: boolean,
): Step | GateDecision {
  const reject = (rejection: Rejection): GateDecision => ({ kind: 'reject', key, rejection });
  const idle = dataOf(input.command).idle;
  if (idle !== undefined && idle !== 'start' && idle !== 'refuse')
    return reject({ reason: 'invalid', rule: 'idle-invalid', detail: 'idle must be "start" or "refuse"' });
  if (ended) return reject(REJECT.ended);
  const c = input.command;
  const rest = ctx.queue.filter((i) => i !== item);
  const steer: QueuedInstruction = { ...item, delivery: 'steer' };
  if (!ctx.turnOpen) {
    if (idle !== 'start') return reject(QUEUE_REJECT.idle);
    const way = startWay(ctx, input.starts);
    if (way === undefined || 'unsupported' in way)
      return reject({
        reason: 'unsupported',
        rule: 'start-unsupported',
        detail: `no way into this session can start a turn${way === undefined ? '' : `: ${way.unsupported}`}; it stays where it was`,
      });
    const laned = toLane({ ...ctx, queue: rest }, steer, way.lane, 'steer');
    return accepted(ctx, key, c.id, { queue: rest, ...laned.context }, [
      changed(ctx, c, 'promoted', { lane: way.lane }, item.id),
      ...laned.outputs,
    ]);
  }
  if (!honoured(ctx, input).includes('steer')) return reject(QUEUE_REJECT.noSteer);
  const lane = laneFor(ctx, 'steer', input.native);
  if (lane !== undefined) {
    const laned = toLane({ ...ctx, queue: rest }, steer, lane);
    return accepted(ctx, key, c.id, { queue: rest, ...laned.context }, [
      changed(ctx, c, 'promoted', { lane }, item.id),
      ...laned.outputs,
    ]);
  }
  return accepted(ctx, key, c.id, { queue: [steer, ...rest] }, [changed(ctx, c, 'promoted', {}, item.id)]);
}

function hold(ctx: SessionContext, c: AepCommand, key: string, native?: NativeLanes): Step | GateDecision {
  const paused = dataOf(c).paused;
  if (typeof paused !== 'boolean') return { kind: 'reject', key, rejection: QUEUE_REJECT.pausedInvalid };
  const held = accepted(ctx, key, c.id, { paused: paused ? true : undefined }, [changed(ctx, c, 'held', { paused })]);
  // A resume with no turn running hands over what the turn's end would have (the lane's row).
  if (paused || native?.handover === undefined || !noTurnRunning(ctx)) return held;
  const h = handOver({ ...ctx, ...held.context }, native.handover);
  return { context: { ...held.context, ...h.context }, outputs: [...held.outputs, ...h.outputs] };
}

/** D44: one queue verb, decided at once: a duplicate is re-acked, a refusal changes nothing. */
export function queueVerb(ctx: SessionContext, input: QueueVerbInput, ended: boolean): Step {
  const c = input.command;
  const key = commandKey(c);
  const decide = (): Step | GateDecision => {
    if (decisionOf(ctx.decisions, key) !== undefined) return { kind: 'duplicate', key };
    if (input.startOnly === true) return { kind: 'reject', key, rejection: QUEUE_REJECT.noQueue };
    if (!input.gateOpen) return { kind: 'reject', key, rejection: QUEUE_REJECT.gateOff };
    const surface = surfaceRefusal(c);
    if (surface !== undefined) return { kind: 'reject', key, rejection: surface };
    if (input.verb === 'hold') return hold(ctx, c, key, input.native);
    const item = waitingItem(ctx, c, key);
    if ('kind' in item) return item;
    if (input.verb === 'edit') return edit(ctx, c, key, item);
    if (input.verb === 'move') return move(ctx, c, key, item);
    return promote(ctx, input, key, item, ended);
  };
  const d = decide();
  if ('outputs' in d) return d;
  return unlessAccepted(ctx, d, c.id) ?? { outputs: [] };
}

/** D44: `control.cancel {clear: true}` took effect: everything waiting is withdrawn, each drop caused by the cancel. */
export function clearQueue(ctx: SessionContext, cancel: string, by?: DecidedBy): Step {
  if (ctx.queue.length === 0) return { outputs: [] };
  return {
    context: {
      queue: [],
      finished: finishedWith(
        ctx,
        'withdrawn',
        ctx.queue.map((i) => i.id),
      ),
    },
    outputs: ctx.queue.map((i) => ({
      type: 'instruction.dropped',
      eventType: droppedType(ctx.vendor),
      cause: cancel,
      reason: 'withdrawn',
      subject: i.id,
      // D46: whoever asked for the clear withdrew each of them.
      ...(by === undefined ? {} : { decidedBy: by }),
    })),
  };
}
