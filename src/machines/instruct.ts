// The instruct step: the gate decides the command once (D2–D6), and an accepted instruction is
// queued for a hook moment or handed to a native lane that reaches the session (D30, D31).
import { withDecision } from './decisions.js';
import { unlessAccepted, type Step } from './step.js';
import { decideInstruct } from './gate.js';
import { pendingCount } from './queue.js';
import { honoured, laneFor, laneHint, toLane } from './lane-steps.js';
import type { SessionOutput } from './session-output.js';
import type { InstructInput } from './command-inputs.js';
import type { QueuedInstruction, SessionContext } from './session-context.js';

/** D2–D6: one decision per command; D4 ack as soon as the instruction is queued. */
export function instruct(ctx: SessionContext, input: InstructInput, ended: boolean): Step {
  const view = {
    decisions: ctx.decisions,
    ended,
    pending: pendingCount(ctx.queue, ctx.inFlight) + (ctx.laned?.length ?? 0),
    turnOpen: ctx.turnOpen,
  };
  const d = decideInstruct(view, input.command, input.gateOpen, honoured(ctx, input), laneHint(ctx, input));
  const cause = input.command.id;
  const refused = unlessAccepted(ctx, d, cause);
  // Every refusal names its rule on the wire (the `code` attribute), so the sender is told what to do.
  if (refused !== undefined) return refused;
  const item: QueuedInstruction = { id: cause, key: d.key, text: d.text ?? '', acceptedAt: input.at };
  if (typeof input.command.agent === 'string') item.from = input.command.agent;
  if (d.delivery !== undefined) item.delivery = d.delivery;
  const accepted: SessionOutput = { type: 'control.accepted', cause, key: d.key };
  const decisions = withDecision(ctx.decisions, d.key, 'accepted');
  // D30: a steer goes in through a native lane that reaches the session, never also through the queue.
  const lane = laneFor(ctx, d.delivery, input.native);
  if (lane !== undefined) {
    const laned = toLane(ctx, item, lane);
    return { context: { decisions, ...laned.context }, outputs: [accepted, ...laned.outputs] };
  }
  return { context: { decisions, queue: [...ctx.queue, item] }, outputs: [accepted] };
}
