// D44: one hand-over for every lane whose vendor cannot change an item once it holds it (no edit,
// reorder or take-back call fit for the verbs). What is queued while a turn runs stays in the
// session's own queue, where edit, move, promote and withdraw work on it, and is handed to the
// lane at the turn's normal end, in the queue's order with each item's newest text, or when a
// resume finds no turn running. How much goes, and as what, is the lane's row (`QueueHandover`),
// never a vendor's name: the head alone, one per turn end, or every waiting one at once; as a
// turn of its own (D43 start) or into the vendor's next-turn queue. Nothing goes while the queue
// is paused, a clearing cancel awaits its answer, or an earlier hand-over awaits its receipt (the
// order stays true), and nothing at the end of a stopped turn: a cancel keeps what waits.
import { laneTurn, toLane } from './lane-steps.js';
import type { Step } from './step.js';
import type { LanedInstruction, SessionContext } from './session-context.js';
import type { SessionOutput } from './session-output.js';
import type { LaneTurnInput, QueueHandover } from './vendor-inputs.js';

/** D44: while paused, a clearing cancel is under way, or a hand-over awaits its receipt, only a steer leaves the queue. */
export const queueHeld = (ctx: SessionContext): boolean =>
  ctx.paused === true || ctx.cancel?.clear === true || ctx.laned?.some((i) => i.fromQueue === true) === true;

/**
 * D44: a resume finds no turn to wait for: none the hooks see running, and none the lane has not
 * seen end (a turn the vendor is still closing takes what is sent as queued behind it, so the
 * lane's own end of it hands over instead, as a start of the next turn).
 */
export const noTurnRunning = (ctx: SessionContext): boolean => ctx.turnOpen !== true && ctx.laneTurnOpen !== true;

/** Hands what waits (`queue` items, first to last) to the lane reaching the session, as its row says. */
export function handOver(ctx: SessionContext, row: QueueHandover): Step {
  const lane = ctx.lanes?.[0];
  const waiting = ctx.queue.filter((i) => i.delivery === 'queue');
  if (lane === undefined || waiting.length === 0 || queueHeld(ctx)) return { outputs: [] };
  const going = row.take === 'one' ? waiting.slice(0, 1) : waiting;
  const ids = new Set(going.map((i) => i.id));
  let now: SessionContext = { ...ctx, queue: ctx.queue.filter((i) => !ids.has(i.id)) };
  const outputs: SessionOutput[] = [];
  for (const item of going) {
    const s = toLane(now, item, lane, row.as === 'start' ? 'queue' : undefined);
    now = { ...now, ...s.context };
    outputs.push(...s.outputs);
  }
  const laned = (now.laned ?? []).map((i): LanedInstruction => (ids.has(i.id) ? { ...i, fromQueue: true } : i));
  return {
    context: { queue: now.queue, laned, ...(now.openers === ctx.openers ? {} : { openers: now.openers }) },
    outputs,
  };
}

/** A lane's turn start or end; a normal end on a lane with a hand-over row hands what waits over. */
export function laneTurnHanding(ctx: SessionContext, input: LaneTurnInput): Step {
  const turn = laneTurn(ctx, input);
  // Said only when it changes: a repeated start changes nothing.
  const s =
    input.open === (ctx.laneTurnOpen === true)
      ? turn
      : { ...turn, context: { ...turn.context, laneTurnOpen: input.open ? true : undefined } };
  if (input.open || input.handover === undefined || input.interrupted === true) return s;
  const h = handOver({ ...ctx, ...s.context }, input.handover);
  return { context: { ...s.context, ...h.context }, outputs: [...s.outputs, ...h.outputs] };
}
