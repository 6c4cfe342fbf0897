// control.cancel as pure steps, for vendors whose user-plane channel aborts the active run
// (Cline hub `run.abort`). The ack follows the channel's answer (an abort the vendor refused is
// no accepted command); the outcome is not invented here: the vendor's own abort moment maps to
// `run.cancelled`, which the host stamps with this command as its cause.
import { decisionOf, withDecision } from './decisions.js';
import { commandKey, decideCancel, type GateDecision } from './gate.js';
import type { Rejection } from '../protocol/index.js';
import { unlessAccepted, type Step } from './step.js';
import { cancelledBy } from './lane-steps.js';
import { decidedByOf, isRejection } from './decided-by.js';
import { clearQueue } from './queue-verbs.js';
import type { CancelAnsweredInput } from './vendor-inputs.js';
import type { CancelInput } from './command-inputs.js';
import type { SessionContext } from './session-context.js';
import type { SessionOutput } from './session-output.js';

/** The cancel refused `cancel-refused` after the gate took it: the agent did not stop the run, or may not have. */
export const cancelRefused = (c: { id: string; key: string }, detail: string): SessionOutput => ({
  type: 'control.rejected',
  cause: c.id,
  key: c.key,
  rejection: { reason: 'refused', rule: 'cancel-refused', detail },
});

export function cancel(ctx: SessionContext, input: CancelInput, ended: boolean): Step {
  if (input.unreached !== undefined) {
    const key = commandKey(input.command);
    const rejection: Rejection = {
      reason: 'unsupported',
      rule: 'lane-unreached',
      detail: `this session runs on the hook lane only, which cannot stop a turn; to be able to stop its turns, ${input.unreached}`,
    };
    const d: GateDecision =
      decisionOf(ctx.decisions, key) === undefined ? { kind: 'reject', key, rejection } : { kind: 'duplicate', key };
    return unlessAccepted(ctx, d, input.command.id) ?? { outputs: [] };
  }
  const view = {
    decisions: ctx.decisions,
    ended,
    turnOpen: ctx.turnOpen,
    ...(ctx.cancel ? { cancel: ctx.cancel } : {}),
    ...(ctx.run === undefined ? {} : { run: ctx.run }),
  };
  const d = decideCancel(view, input.command, input.gateOpen, input.ready);
  const cause = input.command.id;
  const refused = unlessAccepted(ctx, d, cause);
  if (refused !== undefined) return refused;
  const lane = input.lane === undefined ? {} : { lane: input.lane };
  // `kill_tools`: the lane also ends the tool processes the vendor leaves running (only a lane can).
  const kill =
    input.lane !== undefined && (input.command.data as { kill_tools?: unknown } | undefined)?.kill_tools === true
      ? { killTools: true as const }
      : {};
  const run = ctx.run === undefined ? {} : { run: ctx.run };
  const found = decidedByOf(input.command);
  const by = isRejection(found) ? {} : { by: found };
  // D44: the queue stays unless the sender asks to clear it; then it is held until the answer.
  const clear = (input.command.data as { clear?: unknown } | undefined)?.clear === true ? { clear: true } : {};
  return {
    context: { cancel: { id: cause, key: d.key, acked: false, ...lane, ...run, ...kill, ...by, ...clear } },
    outputs: [{ type: 'run.cancel', cause, ...lane, ...kill }],
  };
}

export function cancelAnswered(ctx: SessionContext, input: CancelAnsweredInput): Step {
  const c = ctx.cancel;
  if (!c || c.id !== input.commandId || c.acked) return { outputs: [] };
  // D33: the lane saw the turn end interrupted before this answer: the ack, then its outcome.
  // D44: with `clear`, the stop's ack withdraws everything waiting, each drop caused by the cancel.
  const cleared = input.ok && c.clear === true ? clearQueue(ctx, c.id, c.by) : { outputs: [] };
  const { clear: _done, ...kept } = c;
  if (input.ok && c.interrupted === true) {
    return {
      context: { ...cleared.context, cancel: undefined, decisions: withDecision(ctx.decisions, c.key, 'accepted') },
      outputs: [
        { type: 'control.accepted', cause: c.id, key: c.key },
        ...cleared.outputs,
        cancelledBy(ctx, c, c.tools),
      ],
    };
  }
  if (input.ok) {
    return {
      context: {
        ...cleared.context,
        cancel: { ...kept, acked: true },
        decisions: withDecision(ctx.decisions, c.key, 'accepted'),
      },
      outputs: [{ type: 'control.accepted', cause: c.id, key: c.key }, ...cleared.outputs],
    };
  }
  return {
    context: { cancel: undefined, decisions: withDecision(ctx.decisions, c.key, 'rejected') },
    outputs: [cancelRefused(c, 'the agent did not abort the run (no active run on its side, or it is unreachable)')],
  };
}
