// D32: taking back an instruction that still waits. Only its sender may (or a token the relay
// checked is granted withdraw for the session); what was handed to the
// agent already, or stopped waiting otherwise, is refused with how it ended.
import { droppedType, type AepCommand, type Rejection } from '../protocol/index.js';
import { GRANT_ATTR, WITHDRAW_GRANT } from '../protocol/types.js';
import { decisionOf, withDecision } from './decisions.js';
import { commandKey, type GateDecision } from './gate.js';
import { unlessAccepted, type Step } from './step.js';
import type {
  FinishedHow,
  FinishedInstruction,
  LanedInstruction,
  LaneWithdrawnInput,
  QueuedInstruction,
  SessionContext,
  WithdrawInput,
} from './session-types.js';

/** Finished instructions remembered for late withdraws; older ones are answered `unknown-instruction`. */
export const FINISHED_KEPT = 64;

/** The session's finished list with these instructions added, newest last, at most FINISHED_KEPT long. */
export function finishedWith(ctx: SessionContext, how: FinishedHow, ids: readonly string[]): FinishedInstruction[] {
  return [...(ctx.finished ?? []), ...ids.map((id) => ({ id, how }))].slice(-FINISHED_KEPT);
}

export const WITHDRAW_REJECT = {
  gateOff: {
    reason: 'unsupported',
    rule: 'gate-off',
    detail: 'withdraw is not enabled on this adapter (AEP_INSTRUCT)',
  },
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
  dropped: {
    reason: 'refused',
    rule: 'not-waiting',
    detail: 'no longer waiting: it was dropped (expired, its turn or session ended) and never delivered',
  },
} as const satisfies Record<string, Rejection>;

const ENDED: Record<FinishedHow, Rejection> = {
  delivered: WITHDRAW_REJECT.delivered,
  withdrawn: WITHDRAW_REJECT.withdrawn,
  dropped: WITHDRAW_REJECT.dropped,
};

export function decideWithdraw(
  ctx: SessionContext,
  command: AepCommand,
  gateOpen: boolean,
): GateDecision & { item?: QueuedInstruction; laned?: LanedInstruction } {
  const key = commandKey(command);
  if (decisionOf(ctx.decisions, key) !== undefined) return { kind: 'duplicate', key };
  if (!gateOpen) return { kind: 'reject', key, rejection: WITHDRAW_REJECT.gateOff };
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
  // D32: a queue a native lane holds for a later turn is asked of the lane (its answer decides).
  const laned = ctx.laned?.find((i) => i.id === id && i.delivery === 'queue');
  if (laned !== undefined)
    return owned(laned)
      ? { kind: 'accept', key, laned }
      : { kind: 'reject', key, rejection: WITHDRAW_REJECT.notSender };
  // A send_input is handed to the vendor's own queue at once, and this lane cannot take it back (D32).
  if (ctx.inputs.some((i) => i.id === id) || ctx.laned?.some((i) => i.id === id) === true)
    return { kind: 'reject', key, rejection: WITHDRAW_REJECT.handedOver };
  const ended = ctx.finished?.find((f) => f.id === id);
  return { kind: 'reject', key, rejection: ended === undefined ? WITHDRAW_REJECT.unknown : ENDED[ended.how] };
}

/** D32: the instruction leaves the queue; its drop names the withdraw as cause and the instruction as subject. */
export function withdraw(ctx: SessionContext, input: WithdrawInput): Step {
  const d = decideWithdraw(ctx, input.command, input.gateOpen);
  const cause = input.command.id;
  const refused = unlessAccepted(ctx, d, cause);
  if (refused === undefined && d.laned !== undefined) return askLane(ctx, d.laned, cause, d.key);
  if (refused !== undefined || d.item === undefined) return refused ?? { outputs: [] };
  const item = d.item;
  return {
    context: {
      decisions: withDecision(ctx.decisions, d.key, 'accepted'),
      queue: ctx.queue.filter((i) => i !== item),
      finished: finishedWith(ctx, 'withdrawn', [item.id]),
    },
    outputs: [
      { type: 'control.accepted', cause, key: d.key },
      { type: 'instruction.dropped', eventType: droppedType(ctx.vendor), cause, reason: 'withdrawn', subject: item.id },
    ],
  };
}

/** The withdraw goes to the lane holding the instruction; a second one while it is asked waits for the same answer. */
function askLane(ctx: SessionContext, item: LanedInstruction, cause: string, key: string): Step {
  if (item.withdrawing !== undefined) return { outputs: [] };
  return {
    context: { laned: (ctx.laned ?? []).map((i) => (i === item ? { ...i, withdrawing: { id: cause, key } } : i)) },
    outputs: [{ type: 'lane.withdraw', cause, key, subject: item.id, lane: item.lane }],
  };
}

/** D32: the lane's answer. Removed: the withdraw is accepted and the instruction dropped; else refused. */
export function laneWithdrawn(ctx: SessionContext, input: LaneWithdrawnInput): Step {
  if (decisionOf(ctx.decisions, input.key) !== undefined) return { outputs: [] };
  const item = ctx.laned?.find((i) => i.id === input.commandId);
  const laned = (ctx.laned ?? []).filter((i) => i !== item);
  if (input.removed === true) {
    return {
      context: {
        decisions: withDecision(ctx.decisions, input.key, 'accepted'),
        laned,
        finished: finishedWith(ctx, 'withdrawn', [input.commandId]),
      },
      outputs: [
        { type: 'control.accepted', cause: input.withdrawId, key: input.key },
        {
          type: 'instruction.dropped',
          eventType: droppedType(ctx.vendor),
          cause: input.withdrawId,
          reason: 'withdrawn',
          subject: input.commandId,
        },
      ],
    };
  }
  // Not taken back: the instruction keeps its course (its receipt, or its drop, follows).
  const unasked = (ctx.laned ?? []).map((i) => {
    if (i !== item) return i;
    const { withdrawing: _asked, ...rest } = i;
    return rest;
  });
  return {
    context: { decisions: withDecision(ctx.decisions, input.key, 'rejected'), laned: unasked },
    outputs: [
      {
        type: 'control.rejected',
        cause: input.withdrawId,
        key: input.key,
        rejection: input.removed === false ? WITHDRAW_REJECT.delivered : WITHDRAW_REJECT.handedOver,
      },
    ],
  };
}
