// D32: taking back an instruction that still waits. Only its sender may (or a token the relay
// checked is granted withdraw for the session); what was handed to the
// agent already, or stopped waiting otherwise, is refused with how it ended. A send_input waits
// in the vendor's own queue: where that queue gives inputs back, the withdraw is asked of it and
// its answer decides, so `withdrawn` is said only once the vendor no longer holds the text.
import { droppedType, type AepCommand, type Rejection } from '../protocol/index.js';
import { decidedByOf, isRejection, surfaceRefusal, type DecidedBy } from './decided-by.js';
import { GRANT_ATTR, WITHDRAW_GRANT } from '../protocol/types.js';
import { decisionOf, withDecision } from './decisions.js';
import { commandKey, gateOff, REJECT, type GateDecision } from './gate.js';
import { unlessAccepted, type Step } from './step.js';
import type {
  FinishedHow,
  FinishedInstruction,
  LanedInstruction,
  PendingInput,
  QueuedInstruction,
  SessionContext,
} from './session-context.js';
import type { LaneWithdrawnInput, WithdrawAnsweredInput } from './vendor-inputs.js';
import type { WithdrawInput } from './command-inputs.js';

/** Finished instructions remembered for late withdraws; older ones are answered `unknown-instruction`. */
const FINISHED_KEPT = 64;

/** The session's finished list with these instructions added, newest last, at most FINISHED_KEPT long. */
export function finishedWith(ctx: SessionContext, how: FinishedHow, ids: readonly string[]): FinishedInstruction[] {
  return [...(ctx.finished ?? []), ...ids.map((id) => ({ id, how }))].slice(-FINISHED_KEPT);
}

/** The context change that remembers these instructions finished; none when there are none. */
export const finishedAll = (
  ctx: SessionContext,
  how: FinishedHow,
  items: readonly { id: string }[],
): { finished?: FinishedInstruction[] } =>
  items.length === 0
    ? {}
    : {
        finished: finishedWith(
          ctx,
          how,
          items.map((i) => i.id),
        ),
      };

/** The refusals of a verb naming an instruction that is not there (withdraw, and the queue verbs, D44). */
export const NAMED_REJECT = {
  noId: {
    reason: 'invalid',
    rule: 'unknown-instruction',
    detail: 'instruction must name the command id of an instruction sent to this session',
  },
  unknown: {
    reason: 'invalid',
    rule: 'unknown-instruction',
    detail: 'this session never accepted an instruction with that id: `aep-steer queue` lists what still waits',
  },
} as const satisfies Record<string, Rejection>;

const WITHDRAW_REJECT = {
  gateOff: gateOff('withdraw is not enabled on this adapter (AEP_INSTRUCT)'),
  ...NAMED_REJECT,
  notSender: {
    reason: 'unauthorized',
    rule: 'not-sender',
    detail: 'only the sender of an instruction may withdraw it; nothing was changed',
  },
  delivered: {
    reason: 'refused',
    rule: 'already-delivered',
    detail: 'already delivered to the agent: it cannot be taken back',
  },
  handedOver: {
    reason: 'refused',
    rule: 'already-delivered',
    detail: "handed to the agent's own input queue already: this adapter cannot take it back",
  },
  withdrawn: { reason: 'refused', rule: 'not-waiting', detail: 'already withdrawn; nothing more was done' },
  withdrawing: {
    reason: 'refused',
    rule: 'not-waiting',
    detail: "a withdraw of it is already asked of the agent's queue or lane; that withdraw's answer settles it",
  },
  readByAgent: {
    reason: 'refused',
    rule: 'already-delivered',
    detail: "the agent's queue no longer holds it: the agent has read it, so it cannot be taken back",
  },
  dropped: {
    reason: 'refused',
    rule: 'not-waiting',
    detail: 'no longer waiting: it was dropped (expired, its turn or session ended) and never delivered',
  },
} as const satisfies Record<string, Rejection>;

/** D32: the withdraw `w` took `item` back: accepted, and the instruction dropped `withdrawn` (cause: the withdraw). */
function tookBack(
  ctx: SessionContext,
  w: { id: string; key: string; by?: DecidedBy },
  item: string,
  rest: Partial<SessionContext>,
): Step {
  return {
    context: {
      ...rest,
      decisions: withDecision(ctx.decisions, w.key, 'accepted'),
      finished: finishedWith(ctx, 'withdrawn', [item]),
    },
    outputs: [
      { type: 'control.accepted', cause: w.id, key: w.key },
      {
        type: 'instruction.dropped',
        eventType: droppedType(ctx.vendor),
        cause: w.id,
        reason: 'withdrawn',
        subject: item,
        ...(w.by === undefined ? {} : { decidedBy: w.by }),
      },
    ],
  };
}

/**
 * D32: the lane answered a withdraw. Taken back: dropped `withdrawn`, caused by the withdraw. Read
 * already: refused `already-delivered` (the receipt delivers it). No answer: refused, nothing changed.
 */
export function laneWithdrawn(ctx: SessionContext, input: LaneWithdrawnInput): Step {
  const w = ctx.withdrawing?.find((x) => x.id === input.commandId);
  if (w === undefined) return { outputs: [] };
  const withdrawing = (ctx.withdrawing ?? []).filter((x) => x !== w);
  const item = ctx.laned?.find((i) => i.id === w.instruction);
  if (input.removed === true && item !== undefined) {
    return tookBack(ctx, w, item.id, { withdrawing, laned: (ctx.laned ?? []).filter((i) => i !== item) });
  }
  const rejection: Rejection =
    input.removed === undefined
      ? { reason: 'busy', rule: 'transport-down', detail: "the agent's queue did not answer; send the withdraw again" }
      : WITHDRAW_REJECT.delivered;
  return {
    context: { withdrawing, decisions: withDecision(ctx.decisions, w.key, 'rejected') },
    outputs: [{ type: 'control.rejected', cause: w.id, key: w.key, rejection }],
  };
}

const ENDED: Record<FinishedHow, Rejection> = {
  delivered: WITHDRAW_REJECT.delivered,
  withdrawn: WITHDRAW_REJECT.withdrawn,
  dropped: WITHDRAW_REJECT.dropped,
};

function decideWithdraw(
  ctx: SessionContext,
  command: AepCommand,
  gateOpen: boolean,
  takesBackInputs = false,
  laneWithdraws: readonly string[] = [],
): GateDecision & { item?: QueuedInstruction; input?: PendingInput; laned?: LanedInstruction } {
  const key = commandKey(command);
  // A redelivery of a withdraw still asked of the vendor's queue or a lane is the same withdraw: its answer acks both.
  if (
    decisionOf(ctx.decisions, key) !== undefined ||
    ctx.withdrawals?.some((w) => w.key === key) ||
    ctx.withdrawing?.some((w) => w.key === key) === true
  )
    return { kind: 'duplicate', key };
  if (!gateOpen) return { kind: 'reject', key, rejection: WITHDRAW_REJECT.gateOff };
  const surface = surfaceRefusal(command);
  if (surface !== undefined) return { kind: 'reject', key, rejection: surface };
  const id = (command.data as Record<string, unknown> | undefined)?.instruction;
  if (typeof id !== 'string' || id === '') return { kind: 'reject', key, rejection: WITHDRAW_REJECT.noId };
  const item = ctx.queue.find((i) => i.id === id);
  // A grant is honoured as given: the relay forwards it only from a token granted withdraw for this session.
  const granted = command[GRANT_ATTR] === WITHDRAW_GRANT;
  const owned = (i: { from?: string }): boolean => granted || i.from === undefined || i.from === command.agent;
  if (item !== undefined)
    return owned(item) ? { kind: 'accept', key, item } : { kind: 'reject', key, rejection: WITHDRAW_REJECT.notSender };
  const flying = ctx.inFlight.flatMap((b) => b.items).find((i) => i.id === id);
  if (flying !== undefined)
    return { kind: 'reject', key, rejection: owned(flying) ? WITHDRAW_REJECT.delivered : WITHDRAW_REJECT.notSender };
  // D32: a lane that can take back what it holds is asked (its answer acks the withdraw).
  const laned = ctx.laned?.find((i) => i.id === id);
  if (laned !== undefined && laneWithdraws.includes(laned.lane)) {
    if (!owned(laned)) return { kind: 'reject', key, rejection: WITHDRAW_REJECT.notSender };
    if (ctx.withdrawing?.some((w) => w.instruction === id) === true)
      return { kind: 'reject', key, rejection: WITHDRAW_REJECT.withdrawing };
    return { kind: 'accept', key, laned };
  }
  if (laned !== undefined) return { kind: 'reject', key, rejection: WITHDRAW_REJECT.handedOver };
  // A send_input is handed to the vendor's own queue at once; only a queue that gives inputs back can undo that.
  const input = ctx.inputs.find((i) => i.id === id);
  if (input !== undefined) {
    if (!owned(input)) return { kind: 'reject', key, rejection: WITHDRAW_REJECT.notSender };
    if (!takesBackInputs) return { kind: 'reject', key, rejection: WITHDRAW_REJECT.handedOver };
    if (ctx.withdrawals?.some((w) => w.input === id))
      return { kind: 'reject', key, rejection: WITHDRAW_REJECT.withdrawing };
    return { kind: 'accept', key, input };
  }
  const ended = ctx.finished?.find((f) => f.id === id);
  return { kind: 'reject', key, rejection: ended === undefined ? WITHDRAW_REJECT.unknown : ENDED[ended.how] };
}

/** D32: the instruction leaves the queue; its drop names the withdraw as cause and the instruction as subject. */
export function withdraw(ctx: SessionContext, input: WithdrawInput): Step {
  const d = decideWithdraw(ctx, input.command, input.gateOpen, input.takesBackInputs === true, input.laneWithdraws);
  const cause = input.command.id;
  const refused = unlessAccepted(ctx, d, cause);
  if (refused !== undefined) return refused;
  // D46: checked by the gate above, so a sender's surface.
  const found = decidedByOf(input.command);
  const by = isRejection(found) ? undefined : { by: found };
  if (d.laned !== undefined) {
    const w = { id: cause, key: d.key, instruction: d.laned.id, ...by };
    return {
      context: { withdrawing: [...(ctx.withdrawing ?? []), w] },
      outputs: [{ type: 'lane.withdraw', cause, instruction: d.laned.id, lane: d.laned.lane }],
    };
  }
  if (d.input !== undefined) {
    // Not acked yet: the vendor's answer decides whether this withdraw took effect.
    return {
      context: { withdrawals: [...(ctx.withdrawals ?? []), { id: cause, key: d.key, input: d.input.id, ...by }] },
      outputs: [{ type: 'input.withdraw', cause, subject: d.input.id, text: d.input.text }],
    };
  }
  if (d.item === undefined) return { outputs: [] };
  const item = d.item;
  return tookBack(ctx, { id: cause, key: d.key, ...by }, item.id, { queue: ctx.queue.filter((i) => i !== item) });
}

/**
 * The vendor's queue answered a withdraw of a send_input. Removed: the input is dropped
 * `withdrawn`, cause-linked to the withdraw. Not there: the agent read it (its consumption report
 * settles the input) and the withdraw is refused `already-delivered`. A failed call is refused `busy`
 * and the input stays pending here.
 */
export function withdrawAnswered(ctx: SessionContext, answer: WithdrawAnsweredInput): Step {
  const w = ctx.withdrawals?.find((x) => x.id === answer.commandId);
  if (w === undefined) return { outputs: [] };
  const withdrawals = (ctx.withdrawals ?? []).filter((x) => x !== w);
  const refuse = (rejection: Rejection): Step => ({
    context: { withdrawals, decisions: withDecision(ctx.decisions, w.key, 'rejected') },
    outputs: [{ type: 'control.rejected', cause: w.id, key: w.key, rejection }],
  });
  if (answer.removed === undefined) {
    return refuse({
      ...REJECT.transportDown,
      detail: `the agent's queue did not answer (${answer.detail ?? 'no detail'}); the input is still counted as waiting: send the withdraw again`,
    });
  }
  const item = ctx.inputs.find((i) => i.id === w.input);
  if (!answer.removed) return refuse(WITHDRAW_REJECT.readByAgent);
  // Removed, yet no longer pending here: it ended meanwhile (its session ended) and says so already.
  if (item === undefined) return refuse(WITHDRAW_REJECT.dropped);
  return tookBack(ctx, w, item.id, { withdrawals, inputs: ctx.inputs.filter((i) => i !== item) });
}

/** D12: after a restart a withdraw the vendor's queue never answered is refused; the input stays as it was. */
export function recoverWithdrawals(ctx: SessionContext): Step {
  const open = ctx.withdrawals ?? [];
  if (open.length === 0) return { outputs: [] };
  let decisions = ctx.decisions;
  for (const w of open) decisions = withDecision(decisions, w.key, 'rejected');
  const rejection: Rejection = {
    ...REJECT.transportDown,
    detail: "the adapter restarted before the agent's queue answered the withdraw; send the withdraw again",
  };
  return {
    context: { withdrawals: [], decisions },
    outputs: open.map((w) => ({ type: 'control.rejected' as const, cause: w.id, key: w.key, rejection })),
  };
}
