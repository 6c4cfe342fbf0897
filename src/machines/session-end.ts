// The end moment (D10, D25, D36) and the start moment that reopens an ended session (D6).
import { closedType, reopenedType } from '../protocol/index.js';
import { settledAll, type Step } from './step.js';
import { dismissed } from './hold-ends.js';
import { droppedInstructions } from './queue.js';
import { finishedAll } from './withdraw.js';
import { cancelledBy } from './lane-steps.js';
import { moment } from './moment.js';
import type { SessionOutput } from './session-output.js';
import type { EndInput, MomentInput } from './hook-inputs.js';
import type { SessionContext } from './session-context.js';

/**
 * D10: the end moment drops what is still queued, closes open requests, then ends the session.
 * `session.ended` goes out once per session (AEP terminal exclusivity): a session reopened by a
 * start moment drops at its later end moments without a second `session.ended`.
 */
export function end(ctx: SessionContext, input: EndInput): Step {
  // D25: inside a resume window the queue waits for the resumed run; window 0 is D10 as written.
  // Inputs the vendor still held unread end with the session either way (D28).
  const windowMs = input.windowMs ?? 0;
  // Cline 3.0.65 answers a hub run.abort with its shutdown moment, not an abort moment: the run
  // the cancel aimed at ends here, and its run.cancelled names the command.
  const outputs: SessionOutput[] = ctx.cancel?.acked === true ? [cancelledBy(ctx, ctx.cancel, ctx.cancel.tools)] : [];
  // D31: a steer waits for no resumed run: its turn is over.
  const gone = windowMs > 0 ? ctx.queue.filter((i) => i.delivery === 'steer') : ctx.queue;
  outputs.push(
    ...droppedInstructions(ctx, gone, windowMs > 0 ? 'turn-ended' : 'session-ended'),
    ...droppedInstructions(ctx, ctx.inputs, 'session-ended'),
    // A steer a native lane took without a receipt may or may not have been read (D12).
    ...droppedInstructions(ctx, ctx.laned ?? [], 'delivery-unknown'),
  );
  // AEP-0002 §7: every request gets its terminal before session.ended.
  for (const h of ctx.holds) outputs.push(dismissed(h, input.at), { type: 'reply.decision', hookId: h.hookId });
  const reason = input.reason ?? 'normal';
  const ended: SessionOutput = ctx.endedOnce
    ? { type: 'session.closed', eventType: closedType(ctx.vendor), reason }
    : { type: 'session.ended', reason };
  if (input.causeId !== undefined) ended.cause = input.causeId;
  // D36: the window is stated on the stream, so the audit can tell a legal acceptance from a late one.
  if (windowMs > 0) ended.resumeWindowMs = windowMs;
  outputs.push(ended);
  outputs.push({ type: 'reply.neutral', hookId: input.hookId });
  const common = {
    holds: [],
    ...settledAll(ctx, 'dismissed', ctx.holds),
    ...finishedAll(ctx, 'dropped', gone),
    inputs: [],
    ...(ctx.laned === undefined ? {} : { laned: [] }),
    turnOpen: false,
    cancel: undefined,
    run: undefined,
    endedOnce: true,
  };
  if (windowMs > 0)
    return {
      context: { ...common, queue: ctx.queue.filter((i) => i.delivery !== 'steer'), resumeUntil: input.at + windowMs },
      outputs,
    };
  return { context: { ...common, queue: [], resumeUntil: undefined }, outputs };
}

/** D6: a start moment reopens an ended session; its own reply is then an ordinary moment's. */
export function reopen(ctx: SessionContext, input: MomentInput): Step {
  const reopened: SessionOutput = { type: 'session.reopened', eventType: reopenedType(ctx.vendor) };
  if (input.causeId !== undefined) reopened.cause = input.causeId;
  const delivery = moment(ctx, input, false);
  return { context: { ...delivery.context, resumeUntil: undefined }, outputs: [reopened, ...delivery.outputs] };
}
