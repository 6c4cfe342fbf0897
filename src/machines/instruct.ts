// The instruct step: the gate decides the command once (D2–D6), and an accepted instruction is
// queued for a hook moment or handed to a lane that reaches the session (D30, D31), or to a lane
// that starts a turn with it where the sender asked for that and no turn runs (D43).
import { withDecision } from './decisions.js';
import { unlessAccepted, type Step } from './step.js';
import { decideInstruct } from './gate.js';
import { pendingCount } from './queue.js';
import { honoured, laneFor, laneHint, startWay, toLane } from './lane-steps.js';
import { handOver } from './queue-handover.js';
import type { SessionOutput } from './session-output.js';
import type { InstructInput } from './command-inputs.js';
import type { QueuedInstruction, SessionContext } from './session-context.js';
import type { QueueHandover } from './vendor-inputs.js';

/** D43: a vendor steered through send_input takes instruct only to start a turn. */
const START_ONLY = (key: string): ReturnType<typeof decideInstruct> => ({
  kind: 'reject',
  key,
  rejection: {
    reason: 'unsupported',
    rule: 'start-only',
    detail:
      'this vendor takes instruct only with idle start, to begin a turn in an idle session: send other input, or input for a running turn, with send_input',
  },
});

/**
 * D44: a lane whose row hands all of what waits over as one start (Claude Code stream-json) takes
 * it along with a start into an idle session: what a cancel kept goes into that turn's first
 * message through the lane, ahead of the start's text (queued first), never through a hook moment.
 */
function takenAlong(ctx: SessionContext, lane: string, row: QueueHandover | undefined): Step {
  if (row?.take !== 'all' || row.as !== 'start' || ctx.lanes?.[0] !== lane) return { outputs: [] };
  return handOver(ctx, row);
}

/** D2–D6: one decision per command; D4 ack as soon as the instruction is queued. */
export function instruct(ctx: SessionContext, input: InstructInput, ended: boolean): Step {
  const view = {
    decisions: ctx.decisions,
    ended,
    pending: pendingCount(ctx.queue, ctx.inFlight) + (ctx.laned?.length ?? 0),
    turnOpen: ctx.turnOpen,
  };
  const start = startWay(ctx, input.starts);
  const decided = decideInstruct(
    view,
    input.command,
    input.gateOpen,
    honoured(ctx, input),
    laneHint(ctx, input),
    start,
  );
  const d =
    input.startOnly === true && decided.kind === 'accept' && decided.idle !== 'start'
      ? START_ONLY(decided.key)
      : decided;
  const cause = input.command.id;
  const refused = unlessAccepted(ctx, d, cause);
  // Every refusal names its rule on the wire (the `code` attribute), so the sender is told what to do.
  if (refused !== undefined) return refused;
  const item: QueuedInstruction = { id: cause, key: d.key, text: d.text ?? '', acceptedAt: input.at };
  if (typeof input.command.agent === 'string') item.from = input.command.agent;
  if (d.delivery !== undefined) item.delivery = d.delivery;
  const accepted: SessionOutput = { type: 'control.accepted', cause, key: d.key };
  const decisions = withDecision(ctx.decisions, d.key, 'accepted');
  // D43: a start goes to the lane that can start a turn; if one began meanwhile it goes in as asked.
  if (d.idle === 'start' && start !== undefined && 'lane' in start) {
    const along = takenAlong(ctx, start.lane, input.native?.handover);
    const laned = toLane({ ...ctx, ...along.context }, item, start.lane, d.delivery === 'queue' ? 'queue' : 'steer');
    return {
      context: { decisions, ...along.context, ...laned.context },
      outputs: [accepted, ...along.outputs, ...laned.outputs],
    };
  }
  // D30: a steer goes in through a native lane that reaches the session, never also through the
  // queue; one that waits for the next turn (D43 `wait`) waits in the hook lane's queue, and so
  // does a queue sent while the sender paused the queue (D44), so the pause holds it.
  // A lane with a hand-over row leaves it here while a turn runs (D44, queue-handover).
  const between = input.native?.handover !== undefined && ctx.turnOpen === true;
  const kept = d.idle === 'wait' || ((ctx.paused === true || between) && d.delivery === 'queue');
  const lane = kept ? undefined : laneFor(ctx, d.delivery, input.native);
  if (lane !== undefined) {
    const laned = toLane(ctx, item, lane);
    return { context: { decisions, ...laned.context }, outputs: [accepted, ...laned.outputs] };
  }
  return { context: { decisions, queue: [...ctx.queue, item] }, outputs: [accepted] };
}
