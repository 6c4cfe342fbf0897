// The steps of a hook moment and its reply (D7–D9, D28, D31): the moment carries the FIFO prefix
// that fits it, and the reply's write confirms the delivery or puts the instructions back.
import { deliveredType } from '../protocol/index.js';
import type { Step } from './step.js';
import { droppedInstructions, fitsMoment, takeFitting } from './queue.js';
import { finishedWith } from './withdraw.js';
import { echoTaken } from './lane-steps.js';
import { ranAtAgent } from './attention.js';
import { queueHeld } from './queue-handover.js';
import type { SessionOutput } from './session-output.js';
import type { FailedInput, MomentInput, WrittenInput } from './hook-inputs.js';
import type { SessionContext } from './session-context.js';

/** D7–D8: an eligible moment carries the FIFO prefix that fits; anything else gets the neutral reply. */
export function moment(ctx: SessionContext, input: MomentInput, ended: boolean): Step {
  // The vendor's echo of a steer a native lane carried: no turn of its own, and nothing rides it.
  if (input.echo !== undefined)
    return { context: echoTaken(ctx, input.echo), outputs: [{ type: 'reply.neutral', hookId: input.hookId }] };
  const ran = ranAtAgent(ctx, input);
  if (ran === undefined) return deliver(ctx, input, ended);
  const rest = deliver({ ...ctx, ...ran.context }, input, ended);
  return { context: { ...ran.context, ...rest.context }, outputs: [...ran.outputs, ...rest.outputs] };
}

function deliver(ctx: SessionContext, input: MomentInput, ended: boolean): Step {
  // D28: the table marks the moments that open and close a turn; send_input to an idle session is refused.
  // A closing turn settles a cancel that was under way (its run.cancelled named the command).
  // A moment that fires only within a turn proves one runs, though its (detached) opening hook is late.
  const turn: Partial<SessionContext> =
    input.turn === undefined
      ? {}
      : input.turn === 'within'
        ? ctx.turnOpen || ended
          ? {}
          : { turnOpen: true }
        : input.turn === 'opens'
          ? { turnOpen: true, run: input.runId }
          : // A cancel through a native lane is settled by the lane's own end of the turn (D33).
            { turnOpen: false, cancel: ctx.cancel?.lane === undefined ? undefined : ctx.cancel, run: undefined };
  // D27, D43: the first moment of a turn a start began is its opener's, taken whatever the reply.
  const opener = input.opener === undefined ? undefined : ctx.openers?.find((o) => o.id === input.opener);
  if (opener !== undefined) turn.openers = (ctx.openers ?? []).filter((o) => o !== opener);
  const tells = opener !== undefined && !ended && input.eligible && input.answered !== true;
  const startedBy = tells ? { startedBy: opener.from ?? '' } : {};
  const place = {
    opensTurn: input.turn === 'opens',
    inTurn: ctx.turnOpen || (input.turn === 'within' && !ended),
    held: queueHeld(ctx),
  };
  // A moment answered early was decided by `repliesNeutral`: nothing is taken for it.
  const { taken, rest, text } =
    ended || !input.eligible || input.answered === true
      ? { taken: [], rest: ctx.queue, text: '' }
      : takeFitting(ctx.queue, place);
  if (taken.length === 0) {
    // D31: a steer whose turn closed before a moment could carry it is dropped, never turned into a queue.
    const late = input.turn === 'closes' ? rest.filter((i) => i.delivery === 'steer') : [];
    if (late.length === 0)
      return {
        context: turn,
        outputs: [
          tells
            ? { type: 'reply.notice', hookId: input.hookId, ...startedBy }
            : { type: 'reply.neutral', hookId: input.hookId },
        ],
      };
    return {
      context: {
        ...turn,
        queue: rest.filter((i) => i.delivery !== 'steer'),
        finished: finishedWith(
          ctx,
          'dropped',
          late.map((i) => i.id),
        ),
      },
      outputs: [...droppedInstructions(ctx, late, 'turn-ended'), { type: 'reply.neutral', hookId: input.hookId }],
    };
  }
  // Context at a closing moment (Claude Code Stop) makes the model go on: the turn is still running.
  if (input.turn === 'closes') delete turn.turnOpen;
  const ids = taken.map((i) => i.id);
  const from: string[] = [];
  for (const i of taken) if (i.from !== undefined && !from.includes(i.from)) from.push(i.from);
  const batch =
    input.moment === undefined
      ? { hookId: input.hookId, items: taken }
      : { hookId: input.hookId, items: taken, moment: input.moment };
  return {
    context: { ...turn, queue: rest, inFlight: [...ctx.inFlight, batch] },
    outputs: [
      { type: 'journal.inflight', hookId: input.hookId, ids },
      { type: 'reply.context', hookId: input.hookId, text, ids, from, ...startedBy },
    ],
  };
}

/**
 * D7–D8, the machine's announcement before the step: true when no instruction can fit this
 * moment, so the adapter answers it neutrally at once and steps it after with `answered`, which
 * the step takes as decided. Nothing fits a moment that is not eligible, finds an empty queue, or
 * reaches an ended session it does not reopen; a session's first moment finds an empty queue. The
 * paths test checks on every path that the step, asked again, would have answered the same.
 */
export function repliesNeutral(
  state: { value: unknown; context: SessionContext } | undefined,
  input: Pick<MomentInput, 'eligible' | 'starts' | 'turn' | 'opener'>,
): boolean {
  if (state === undefined) return true;
  if (state.value === 'ended') return input.starts !== true;
  if (!input.eligible) return true;
  // D27, D43: the first moment of a turn a start began tells the person who started it.
  if (input.opener !== undefined && state.context.openers?.some((o) => o.id === input.opener) === true) return false;
  // D31: what waits may not fit this moment (a late steer dropped at a closing one still gets the neutral reply).
  const place = {
    opensTurn: input.turn === 'opens',
    inTurn: state.context.turnOpen || input.turn === 'within',
    held: queueHeld(state.context),
  };
  return !state.context.queue.some((i) => fitsMoment(i, place));
}

/** D9: the reply was written; each instruction it carried is delivered, once. */
export function written(ctx: SessionContext, input: WrittenInput): Step {
  const batch = ctx.inFlight.find((b) => b.hookId === input.hookId);
  if (!batch) return { outputs: [] };
  return {
    context: {
      inFlight: ctx.inFlight.filter((b) => b !== batch),
      finished: finishedWith(
        ctx,
        'delivered',
        batch.items.map((i) => i.id),
      ),
    },
    outputs: batch.items.map((i): SessionOutput => {
      const o: SessionOutput = {
        type: 'instruction.delivered',
        eventType: deliveredType(ctx.vendor),
        cause: i.id,
        queuedMs: Math.max(0, Math.floor(input.at - i.acceptedAt)),
      };
      if (batch.moment !== undefined) o.moment = batch.moment;
      o.delivery = i.delivery ?? 'moment';
      if (i.version !== undefined) o.version = i.version;
      return o;
    }),
  };
}

/** D9: the write failed; the instructions go back to the head of the queue in order (D10 once ended). */
export function failed(ctx: SessionContext, input: FailedInput, ended: boolean): Step {
  const batch = ctx.inFlight.find((b) => b.hookId === input.hookId);
  if (!batch) return { outputs: [] };
  const inFlight = ctx.inFlight.filter((b) => b !== batch);
  if (ended)
    return {
      context: {
        inFlight,
        finished: finishedWith(
          ctx,
          'dropped',
          batch.items.map((i) => i.id),
        ),
      },
      outputs: droppedInstructions(ctx, batch.items, 'session-ended'),
    };
  return { context: { inFlight, queue: [...batch.items, ...ctx.queue] }, outputs: [] };
}
