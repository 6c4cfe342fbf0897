// The session actor's parts, written once: guards are questions about the context, steps are
// pure functions from (context, input) to a context patch and the outputs to announce.
// session.ts names them; nothing here reads a clock, mints an id or knows a vendor by name.
import { closedType, deliveredType, droppedType, reopenedType } from '../protocol/index.js';
import { decisionsFrom, withDecision } from './decisions.js';
import { droppedInputs } from './user-input.js';
import { settledWith, unlessAccepted, type Step } from './step.js';
import { REJECT, decideInstruct, decideRespond, optionFor } from './gate.js';
import { recoverForwards } from './forward.js';
import { fitsMoment, partitionExpired, pendingCount, takeFitting } from './queue.js';
import { finishedWith, recoverWithdrawals } from './withdraw.js';
import { cancelledBy, echoTaken, honoured, laneFor, laneHint, recoverLanes, toLane } from './lane-steps.js';
import type {
  DropReason,
  EndInput,
  FailedInput,
  HeldInput,
  HoldClosedInput,
  InstructInput,
  MomentInput,
  OpenHold,
  QueuedInstruction,
  RecoveredInput,
  RespondInput,
  SessionContext,
  SessionInput,
  SessionOutput,
  SessionSeed,
  TimeoutInput,
  TtlInput,
  WindowInput,
  WrittenInput,
} from './session-types.js';

export const seedContext = (seed: SessionSeed): SessionContext => ({
  session: seed.session,
  vendor: seed.vendor,
  queue: [],
  inFlight: [],
  holds: [],
  decisions: decisionsFrom(seed.decisions ?? {}),
  inputs: [],
  forwards: [],
  turnOpen: false,
  endedOnce: false,
});

// ---- guards ------------------------------------------------------------------------------

export const guards = {
  hasHolds: ({ context }: { context: SessionContext }) => context.holds.length > 0,
  hasPending: ({ context }: { context: SessionContext }) => context.queue.length > 0,
  isQueueEmpty: ({ context }: { context: SessionContext }) => context.queue.length === 0,
  isFirstHoldElicitation: ({ context }: { context: SessionContext }) => context.holds[0]?.hold === 'elicitation',
  isFirstHoldPermission: ({ context }: { context: SessionContext }) => context.holds[0]?.hold === 'permission',
  isReleased: ({ context }: { context: SessionContext }) => context.holds.length === 0,
  isReleasedWithPending: ({ context }: { context: SessionContext }) =>
    context.holds.length === 0 && context.queue.length > 0,
  /** The vendor's session-start moment (a resumed session keeps its id). */
  isStart: ({ event }: { event: SessionInput }) => event.type === 'hook.moment' && event.starts === true,
  /** D25: an ended session still inside its end moment's resume window. */
  inResumeWindow: ({ context, event }: { context: SessionContext; event: SessionInput }) =>
    context.resumeUntil !== undefined && 'at' in event && event.at < context.resumeUntil,
};

// ---- steps -------------------------------------------------------------------------------

const dropped = (ctx: SessionContext, items: readonly QueuedInstruction[], reason: DropReason): SessionOutput[] =>
  items.map((i) => ({ type: 'instruction.dropped', eventType: droppedType(ctx.vendor), cause: i.id, reason }));

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

/** D14: a respond answers the open request named by its `subject`. */
export function respond(ctx: SessionContext, input: RespondInput): Step {
  const d = decideRespond(ctx, input.command);
  const cause = input.command.id;
  if (d.kind === 'duplicate') return { outputs: [{ type: 'control.reack', cause, key: d.key }] };
  if (d.kind === 'reject' || !d.hold || !d.decision) {
    const rejection = d.kind === 'reject' ? d.rejection : REJECT.answerInvalid;
    return {
      context: { decisions: withDecision(ctx.decisions, d.key, 'rejected') },
      outputs: [{ type: 'control.rejected', cause, key: d.key, rejection }],
    };
  }
  const hold = d.hold;
  const answer: Record<string, unknown> = { option: d.decision.option };
  if (d.decision.message !== undefined) answer.text = d.decision.message;
  if (d.decision.values !== undefined) answer.values = d.decision.values;
  return {
    context: {
      decisions: withDecision(ctx.decisions, d.key, 'accepted'),
      holds: ctx.holds.filter((h) => h !== hold),
      settled: settledWith(ctx, 'answered', [hold.requestId]),
    },
    outputs: [
      { type: 'control.accepted', cause, key: d.key },
      { type: 'attention.answered', id: input.answeredId, subject: hold.requestId, cause, answer },
      {
        type: 'attention.resolved',
        subject: hold.requestId,
        cause: input.answeredId,
        resolution: 'answered',
        latencyMs: Math.max(0, input.at - hold.openedAt),
      },
      hold.external === undefined
        ? { type: 'reply.decision', hookId: hold.hookId, decision: d.decision }
        : { type: 'approval.answer', approvalId: hold.external, decision: d.decision },
    ],
  };
}

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

/**
 * D34: the moment reports that a held tool call ran, so the person allowed it in the agent's own
 * dialog (Claude Code keeps the held hook open then): the request is answered `via: "oob"`, and
 * the hook, which the vendor no longer reads, gets the neutral reply.
 */
function ranAtAgent(ctx: SessionContext, input: MomentInput): Step | undefined {
  const ran = input.ran;
  const hold = ran === undefined ? undefined : ctx.holds.find((h) => h.call === ran.call && h.external === undefined);
  if (ran === undefined || hold === undefined) return undefined;
  const answeredId = ran.answeredId;
  // A form answered in the dialog ran with the person's answers, which this moment does not carry.
  const option =
    hold.request.kind === 'form'
      ? 'submit'
      : (optionFor(hold.request.options ?? [{ id: 'allow' }], 'allow') ?? 'allow');
  return {
    context: {
      holds: ctx.holds.filter((h) => h !== hold),
      settled: settledWith(ctx, 'answered-oob', [hold.requestId]),
    },
    outputs: [
      {
        type: 'attention.answered',
        id: answeredId,
        subject: hold.requestId,
        cause: hold.requestId,
        answer: { option },
        via: 'oob',
      },
      {
        type: 'attention.resolved',
        subject: hold.requestId,
        cause: answeredId,
        resolution: 'answered',
        latencyMs: Math.max(0, input.at - hold.openedAt),
      },
      { type: 'reply.decision', hookId: hold.hookId },
    ],
  };
}

/**
 * D34: the vendor closed a held hook before its reply (the person answered No or pressed Esc in
 * its own dialog, or the turn was interrupted): the request is dismissed at once.
 */
export function holdClosed(ctx: SessionContext, input: HoldClosedInput): Step {
  const hold = ctx.holds.find((h) => h.hookId === input.hookId && h.external === undefined);
  if (hold === undefined) return { outputs: [] };
  return {
    context: { holds: ctx.holds.filter((h) => h !== hold), settled: settledWith(ctx, 'dismissed', [hold.requestId]) },
    outputs: [
      {
        type: 'attention.resolved',
        subject: hold.requestId,
        cause: hold.requestId,
        resolution: 'dismissed',
        latencyMs: Math.max(0, input.at - hold.openedAt),
      },
      { type: 'reply.decision', hookId: hold.hookId },
    ],
  };
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
  const place = { opensTurn: input.turn === 'opens', inTurn: ctx.turnOpen || (input.turn === 'within' && !ended) };
  // A moment answered early was decided by `repliesNeutral`: nothing is taken for it.
  const { taken, rest, text } =
    ended || !input.eligible || input.answered === true
      ? { taken: [], rest: ctx.queue, text: '' }
      : takeFitting(ctx.queue, place);
  if (taken.length === 0) {
    // D31: a steer whose turn closed before a moment could carry it is dropped, never turned into a queue.
    const late = input.turn === 'closes' ? rest.filter((i) => i.delivery === 'steer') : [];
    if (late.length === 0) return { context: turn, outputs: [{ type: 'reply.neutral', hookId: input.hookId }] };
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
      outputs: [...dropped(ctx, late, 'turn-ended'), { type: 'reply.neutral', hookId: input.hookId }],
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
      { type: 'reply.context', hookId: input.hookId, text, ids, from },
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
  input: Pick<MomentInput, 'eligible' | 'starts' | 'turn'>,
): boolean {
  if (state === undefined) return true;
  if (state.value === 'ended') return input.starts !== true;
  if (!input.eligible) return true;
  // D31: what waits may not fit this moment (a late steer dropped at a closing one still gets the neutral reply).
  const place = { opensTurn: input.turn === 'opens', inTurn: state.context.turnOpen || input.turn === 'within' };
  return !state.context.queue.some((i) => fitsMoment(i, place));
}

/** D13–D14: a held hook opens an attention request; its reply waits for a decision. */
export function held(ctx: SessionContext, input: HeldInput, ended: boolean): Step {
  if (ended) return { outputs: [{ type: 'reply.decision', hookId: input.hookId }] };
  const hold: OpenHold = {
    requestId: input.requestId,
    hookId: input.hookId,
    hold: input.hold,
    request: input.request,
    openedAt: input.at,
    timeoutMs: input.timeoutMs,
    ...(input.call === undefined ? {} : { call: input.call }),
  };
  const requested: SessionOutput = { type: 'attention.requested', id: input.requestId, request: input.request };
  if (input.causeId !== undefined) requested.cause = input.causeId;
  return {
    context: { holds: [...ctx.holds, hold] },
    outputs: [
      requested,
      { type: 'reply.hold', hookId: input.hookId, requestId: input.requestId, timeoutMs: input.timeoutMs },
    ],
  };
}

/** D14: no answer in time; the held reply goes out with no decision (the vendor asks locally). */
export function timeout(ctx: SessionContext, input: TimeoutInput): Step {
  const hold = ctx.holds.find((h) => h.requestId === input.requestId);
  if (!hold) return { outputs: [] };
  return {
    context: { holds: ctx.holds.filter((h) => h !== hold), settled: settledWith(ctx, 'timeout', [hold.requestId]) },
    outputs: [
      { type: 'attention.timeout', subject: hold.requestId, cause: hold.requestId, afterMs: hold.timeoutMs },
      { type: 'reply.decision', hookId: hold.hookId },
    ],
  };
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
      outputs: dropped(ctx, batch.items, 'session-ended'),
    };
  return { context: { inFlight, queue: [...batch.items, ...ctx.queue] }, outputs: [] };
}

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
    ...dropped(ctx, gone, windowMs > 0 ? 'turn-ended' : 'session-ended'),
    ...droppedInputs(ctx, ctx.inputs, 'session-ended'),
    // A steer a native lane took without a receipt may or may not have been read (D12).
    ...dropped(ctx, ctx.laned ?? [], 'delivery-unknown'),
  );
  // AEP-0002 §7: every request gets its terminal before session.ended.
  for (const h of ctx.holds) {
    outputs.push({
      type: 'attention.resolved',
      subject: h.requestId,
      cause: h.requestId,
      resolution: 'dismissed',
      latencyMs: Math.max(0, input.at - h.openedAt),
    });
    outputs.push({ type: 'reply.decision', hookId: h.hookId });
  }
  const reason = input.reason ?? 'normal';
  const ended: SessionOutput = ctx.endedOnce
    ? { type: 'session.closed', eventType: closedType(ctx.vendor), reason }
    : { type: 'session.ended', reason };
  if (input.causeId !== undefined) ended.cause = input.causeId;
  // D36: the window is stated on the stream, so the audit can tell a legal acceptance from a late one.
  if (windowMs > 0) ended.resumeWindowMs = windowMs;
  outputs.push(ended);
  outputs.push({ type: 'reply.neutral', hookId: input.hookId });
  const settled =
    ctx.holds.length === 0
      ? {}
      : {
          settled: settledWith(
            ctx,
            'dismissed',
            ctx.holds.map((h) => h.requestId),
          ),
        };
  const finished =
    gone.length === 0
      ? {}
      : {
          finished: finishedWith(
            ctx,
            'dropped',
            gone.map((i) => i.id),
          ),
        };
  const common = {
    holds: [],
    ...settled,
    ...finished,
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

/**
 * D25: the resume window has passed; each still-queued instruction drops `session-ended` (D10)
 * and later instructions are refused "session ended" (D6).
 */
export function closeWindow(ctx: SessionContext, input: WindowInput | InstructInput): Step {
  if (ctx.resumeUntil === undefined || input.at < ctx.resumeUntil) return { outputs: [] };
  const finished =
    ctx.queue.length === 0
      ? {}
      : {
          finished: finishedWith(
            ctx,
            'dropped',
            ctx.queue.map((i) => i.id),
          ),
        };
  return {
    context: { queue: [], resumeUntil: undefined, ...finished },
    outputs: dropped(ctx, ctx.queue, 'session-ended'),
  };
}

/** D6: a start moment reopens an ended session; its own reply is then an ordinary moment's. */
export function reopen(ctx: SessionContext, input: MomentInput): Step {
  const reopened: SessionOutput = { type: 'session.reopened', eventType: reopenedType(ctx.vendor) };
  if (input.causeId !== undefined) reopened.cause = input.causeId;
  const delivery = moment(ctx, input, false);
  return { context: { ...delivery.context, resumeUntil: undefined }, outputs: [reopened, ...delivery.outputs] };
}

/** D10 optional TTL: queued instructions older than the TTL are dropped `expired`. */
export function tick(ctx: SessionContext, input: TtlInput): Step {
  const { expired, kept } = partitionExpired(ctx.queue, input.at, input.ttlMs);
  if (expired.length === 0) return { outputs: [] };
  return {
    context: {
      queue: kept,
      finished: finishedWith(
        ctx,
        'dropped',
        expired.map((i) => i.id),
      ),
    },
    outputs: dropped(ctx, expired, 'expired'),
  };
}

/** D12: after a restart, in-flight instructions are reported, never re-delivered; held hooks are gone. */
export function recover(ctx: SessionContext, input: RecoveredInput): Step {
  const unknown = ctx.inFlight.flatMap((b) => b.items);
  const outputs: SessionOutput[] = dropped(ctx, unknown, 'delivery-unknown');
  // A send_input handed to the transport without an answer may or may not have reached the
  // vendor: reported, never re-sent (D12). Sent ones still await their consumption report.
  const sending = ctx.inputs.filter((i) => i.phase === 'sending');
  outputs.push(...droppedInputs(ctx, sending, 'delivery-unknown'));
  for (const h of ctx.holds) {
    outputs.push({
      type: 'attention.resolved',
      subject: h.requestId,
      cause: h.requestId,
      resolution: 'dismissed',
      latencyMs: Math.max(0, input.at - h.openedAt),
    });
  }
  // A cancel the transport never answered: its ack is owed, and the restart cannot know the answer.
  const c = ctx.cancel;
  const unanswered = c !== undefined && !c.acked;
  if (unanswered) {
    outputs.push({
      type: 'control.rejected',
      cause: c.id,
      key: c.key,
      rejection: {
        reason: 'refused',
        rule: 'cancel-refused',
        detail: 'the adapter restarted before the agent answered the cancel; send it again if the run goes on',
      },
    });
  }
  const forwards = recoverForwards(ctx);
  outputs.push(...forwards.outputs);
  const withdrawals = recoverWithdrawals({ ...ctx, ...forwards.context });
  outputs.push(...withdrawals.outputs);
  // D30, D12: the lanes' connections did not survive the restart; what they took unread is unknown.
  const lanes = recoverLanes(ctx);
  outputs.push(...lanes.outputs);
  return {
    context: {
      inFlight: [],
      holds: [],
      inputs: ctx.inputs.filter((i) => i.phase !== 'sending'),
      ...forwards.context,
      ...withdrawals.context,
      ...lanes.context,
      ...(unanswered ? { cancel: undefined } : {}),
      // D12: it may have reached the agent, so a withdraw cannot take it back.
      ...(unknown.length === 0
        ? {}
        : {
            finished: finishedWith(
              ctx,
              'delivered',
              unknown.map((i) => i.id),
            ),
          }),
      ...(ctx.holds.length === 0
        ? {}
        : {
            settled: settledWith(
              ctx,
              'dismissed',
              ctx.holds.map((h) => h.requestId),
            ),
          }),
    },
    outputs,
  };
}
