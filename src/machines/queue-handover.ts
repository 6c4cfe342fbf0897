// D44 on a lane that takes a `queue` only between turns (opencode's server lane, which has no way
// to edit, reorder or take back a prompt it admitted): what is queued while a turn runs stays in
// the session's own queue, where edit, move, promote and withdraw work on it, and is handed to the
// lane in the queue's order with each item's latest text when the turn ends, or when a resume
// finds no turn running. Nothing goes while the queue is paused or a clearing cancel awaits its
// answer, and nothing at the end of a stopped turn: what waits goes at a later turn's end.
import { laneTurn, toLane } from './lane-steps.js';
import type { Step } from './step.js';
import type { SessionContext } from './session-context.js';
import type { SessionOutput } from './session-output.js';
import type { LaneTurnInput } from './vendor-inputs.js';

/** Hands every waiting `queue` instruction to the lane reaching the session, first to last. */
export function handQueued(ctx: SessionContext): Step {
  const lane = ctx.lanes?.[0];
  const going = ctx.queue.filter((i) => i.delivery === 'queue');
  if (lane === undefined || going.length === 0 || ctx.paused === true || ctx.cancel?.clear === true)
    return { outputs: [] };
  let now: SessionContext = { ...ctx, queue: ctx.queue.filter((i) => i.delivery !== 'queue') };
  const outputs: SessionOutput[] = [];
  for (const item of going) {
    const s = toLane(now, item, lane);
    now = { ...now, ...s.context };
    outputs.push(...s.outputs);
  }
  return { context: { queue: now.queue, laned: now.laned ?? [] }, outputs };
}

/** A lane's turn start or end; a normal end on a lane that keeps its queue here hands what waits over. */
export function laneTurnHanding(ctx: SessionContext, input: LaneTurnInput): Step {
  const s = laneTurn(ctx, input);
  if (input.open || input.keepsQueued !== true || input.interrupted === true) return s;
  const h = handQueued({ ...ctx, ...s.context });
  return { context: { ...s.context, ...h.context }, outputs: [...s.outputs, ...h.outputs] };
}
