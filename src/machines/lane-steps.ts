// Native lanes (D30–D33) as pure steps: which way an accepted instruction goes in, and what the
// lane's answers, receipts and turns do to the session. A steer goes to a native lane whenever one
// reaches the session, and so does a queue where the lane keeps a next-turn queue of its own (the
// Qwen serve lane); the vendor's receipt then says it was read. Everything else stays with the
// hook lane's queue, so an instruction has one way in and is delivered once, with both lanes open.
import { deliveredType, describedType, droppedType } from '../protocol/index.js';
import { finishedWith } from './withdraw.js';
import { withDecision } from './decisions.js';
import type { Step } from './step.js';
import type { DropReason, SessionOutput } from './session-output.js';
import type { InstructInput, LaneStarts } from './command-inputs.js';
import type { StartWay } from './gate.js';
import type { LaneAnsweredInput, LaneDeliveredInput, LaneReachInput, LaneTurnInput } from './vendor-inputs.js';
import type { LanedInstruction, QueuedInstruction, SessionContext, ToolsAtStop } from './session-context.js';
import type { DecidedBy } from './decided-by.js';

/** The lane every hook vendor has (D30): the reply to the next eligible hook moment. */
const HOOK_LANE = 'hook';
/** Steers whose echo is still awaited, per session (a vendor that fires no echo never empties it). */
const ECHOES_KEPT = 20;

/** D31: what instruct honours on this session now: the hook lane's, plus a reaching native lane's. */
export function honoured(ctx: SessionContext, input: Pick<InstructInput, 'deliveries' | 'native'>): readonly string[] {
  const hook = input.deliveries ?? ['moment'];
  if (input.native === undefined || (ctx.lanes?.length ?? 0) === 0) return hook;
  return [...hook, ...input.native.deliveries.filter((d) => !hook.includes(d))];
}

/**
 * How a session gets a native lane, said only where it would help: no lane reaches the session and
 * one would honour the delivery asked for (a lane adding `steer` does nothing for a refused `queue`).
 */
export function laneHint(ctx: SessionContext, input: InstructInput): string | undefined {
  const asked = (input.command.data as { delivery?: unknown } | undefined)?.delivery;
  if (input.native === undefined || (ctx.lanes?.length ?? 0) > 0 || typeof asked !== 'string') return undefined;
  return input.native.deliveries.includes(asked) ? input.native.hint : undefined;
}

/**
 * The native lane an accepted instruction goes to, if any: a steer, while one reaches the session;
 * a queue too where the lanes have a next-turn queue of their own (`native` lists `queue`).
 */
export const laneFor = (
  ctx: SessionContext,
  delivery: string | undefined,
  native?: { deliveries: readonly string[] },
): string | undefined =>
  delivery === 'steer' || (delivery === 'queue' && native?.deliveries.includes('queue') === true)
    ? ctx.lanes?.[0]
    : undefined;

/**
 * D43: the lane that would start a turn in this session (one reaching it, or the vendor's channel,
 * which reaches every session), or why none can; undefined where the vendor has none at all.
 */
export function startWay(ctx: SessionContext, starts: LaneStarts | undefined): StartWay | undefined {
  if (starts === undefined) return undefined;
  const lane = ctx.lanes?.find((l) => starts.lanes.includes(l)) ?? starts.channel;
  return lane === undefined ? { unsupported: starts.hint } : { lane };
}

/**
 * The accepted steer is handed to the lane at once; it holds a slot (D3) until it settles. With
 * `start` (D43) the lane starts a turn with it, or, finding one begun meanwhile, puts it in as that.
 */
export function toLane(ctx: SessionContext, item: QueuedInstruction, lane: string, start?: 'steer' | 'queue'): Step {
  const laned: LanedInstruction = {
    id: item.id,
    key: item.key,
    text: item.text,
    acceptedAt: item.acceptedAt,
    lane,
    phase: 'sending',
    ...(item.from === undefined ? {} : { from: item.from }),
    ...(item.version === undefined ? {} : { version: item.version }),
    ...(item.delivery === 'queue' && start === undefined ? { delivery: 'queue' as const } : {}),
    ...(start === undefined ? {} : { start: 'asked' as const }),
  };
  // D27: the started turn's first moment says who started it (kept like echoes, newest last).
  const opener = { id: item.id, text: item.text, ...(item.from === undefined ? {} : { from: item.from }) };
  return {
    context: {
      laned: [...(ctx.laned ?? []), laned],
      ...(start === undefined ? {} : { openers: [...(ctx.openers ?? []), opener].slice(-ECHOES_KEPT) }),
    },
    outputs: [
      {
        type: 'lane.steer',
        cause: item.id,
        text: item.text,
        lane,
        ...(laned.delivery ? { delivery: 'queue' } : {}),
        ...(start === undefined ? {} : { start }),
      },
    ],
  };
}

const dropLaned = (ctx: SessionContext, items: readonly LanedInstruction[], reason: DropReason): Step => {
  const gone = new Set(items);
  return {
    context: {
      laned: (ctx.laned ?? []).filter((i) => !gone.has(i)),
      finished: finishedWith(
        ctx,
        'dropped',
        items.map((i) => i.id),
      ),
    },
    outputs: items.map((i) => ({
      type: 'instruction.dropped',
      eventType: droppedType(ctx.vendor),
      cause: i.id,
      reason,
    })),
  };
};

/**
 * The lane's answer. Taken: the receipt is awaited, and the echo the vendor may fire for it is
 * expected. A turn that ended first (or was never running) drops it `turn-ended` and never
 * becomes a turn start (D31); an unreachable or refusing lane drops it `send-failed`.
 */
export function laneAnswered(ctx: SessionContext, input: LaneAnsweredInput): Step {
  const item = ctx.laned?.find((i) => i.id === input.commandId && i.phase === 'sending');
  if (item === undefined) return { outputs: [] };
  // A start that began no turn of its own has no first moment to tell the person at.
  const unopened = (ctx.openers ?? []).filter((o) => o.id !== item.id);
  const openers = item.start === 'asked' && (!input.ok || input.became !== undefined) ? { openers: unopened } : {};
  if (!input.ok) {
    const reason = input.reason === 'turn-ended' || input.reason === 'idle' ? 'turn-ended' : 'send-failed';
    const dropped = dropLaned(ctx, [item], reason);
    return { context: { ...dropped.context, ...openers }, outputs: dropped.outputs };
  }
  // D43: a start either began the turn, or went into one begun meanwhile as what it became.
  const taken: LanedInstruction =
    item.start === 'asked'
      ? input.became === undefined
        ? { ...item, phase: 'sent', start: 'started' }
        : { ...item, phase: 'sent', start: 'raced', ...(input.became === 'queue' ? { delivery: 'queue' } : {}) }
      : { ...item, phase: 'sent' };
  // A queued one, or one that began a turn, opens a turn of its own: its prompt is no echo.
  const own = taken.delivery === 'queue' || taken.start === 'started';
  return {
    context: {
      laned: (ctx.laned ?? []).map((i) => (i === item ? taken : i)),
      ...openers,
      ...(own ? {} : { echoes: [...(ctx.echoes ?? []), { id: item.id, text: item.text }].slice(-ECHOES_KEPT) }),
    },
    outputs: [],
  };
}

/** The vendor's receipt (it may come before the lane's answer): delivered once, with the lane and its ref. */
export function laneDelivered(ctx: SessionContext, input: LaneDeliveredInput): Step {
  const item = ctx.laned?.find((i) => i.id === input.commandId);
  if (item === undefined) return { outputs: [] };
  const echoes = ctx.echoes ?? [];
  // D43: whether it began the turn, as the lane says, or as its answer said.
  const started = input.started ?? (item.start === 'started' ? true : item.start === 'raced' ? false : undefined);
  return {
    context: {
      laned: (ctx.laned ?? []).filter((i) => i !== item),
      finished: finishedWith(ctx, 'delivered', [item.id]),
      ...(item.delivery !== 'queue' &&
      started !== true &&
      (item.phase === 'sending' || !echoes.some((e) => e.id === item.id))
        ? { echoes: [...echoes, { id: item.id, text: item.text }].slice(-ECHOES_KEPT) }
        : {}),
    },
    outputs: [
      {
        type: 'instruction.delivered',
        eventType: deliveredType(ctx.vendor),
        cause: item.id,
        queuedMs: Math.max(0, Math.floor(input.at - item.acceptedAt)),
        // A turn it began took it as its prompt: no delivery into a turn to name.
        ...(started === true ? {} : { delivery: item.delivery ?? 'steer' }),
        lane: item.lane,
        ref: input.ref,
        ...(started === undefined ? {} : { started }),
        ...(item.version === undefined ? {} : { version: item.version }),
        ...(input.backgrounded === undefined ? {} : { backgrounded: input.backgrounded }),
      },
    ],
  };
}

/**
 * A turn seen on the lane. Its start proves a turn runs; its end closes it, settles a cancel under
 * way (`run.cancelled` names the command, D33), and drops a taken steer that was never read.
 */
export function laneTurn(ctx: SessionContext, input: LaneTurnInput): Step {
  if (input.open) return ctx.turnOpen ? { outputs: [] } : { context: { turnOpen: true }, outputs: [] };
  const outputs: SessionOutput[] = [];
  const c = ctx.cancel;
  let cancel: Partial<SessionContext> = {};
  const tools = toolsAtStop(input);
  if (c?.lane !== undefined) {
    // The interrupt's answer may come after the turn's end: the end is kept for it (cancelAnswered).
    if (c.acked && input.interrupted === true) outputs.push(cancelledBy(ctx, c, tools));
    cancel =
      !c.acked && input.interrupted === true
        ? { cancel: { ...c, interrupted: true, ...(tools === undefined ? {} : { tools }) } }
        : { cancel: undefined };
  }
  // A queued one waits in the vendor's queue for the next turn, and a lane whose vendor runs an
  // unread steer as a prompt of its own (qwen serve) reports its receipt later; except at the end
  // of a cancel asked here, where the lane took back what it held first (D33), unless the lane
  // hands the adapter's queue over (D44): a cancel keeps what waits, there as here.
  const stopped = c?.lane !== undefined && input.interrupted === true;
  const kept = input.keepsUnread === true && !stopped;
  // D43: a start awaits the receipt of the turn it began, not this turn's end.
  const unread = kept
    ? []
    : (ctx.laned ?? []).filter(
        (i) =>
          i.phase === 'sent' &&
          (i.delivery !== 'queue' || (stopped && input.handover === undefined)) &&
          (i.start !== 'started' || stopped) &&
          input.kept?.includes(i.id) !== true,
      );
  const dropped = unread.length === 0 ? { outputs: [] } : dropLaned(ctx, unread, 'turn-ended');
  // The turn is over: its run with it (a vendor that fires no closing hook on an interrupt leaves none).
  return {
    context: { turnOpen: false, run: undefined, ...cancel, ...dropped.context },
    outputs: [...outputs, ...dropped.outputs],
  };
}

/**
 * D30: a lane reaches the session, or no longer does (the daemon died: said once, on the stream).
 * A steer it took without a receipt may or may not have been read: `delivery-unknown` (D12).
 * What waits in the hook lane's queue keeps its course.
 */
export function laneReach(ctx: SessionContext, input: LaneReachInput): Step {
  const now = ctx.lanes ?? [];
  if (now.includes(input.lane) === input.reaches) return { outputs: [] };
  const lanes = input.reaches ? [...now, input.lane] : now.filter((l) => l !== input.lane);
  const changed: SessionOutput = {
    type: 'lanes.changed',
    eventType: describedType(ctx.vendor),
    lanes: [HOOK_LANE, ...lanes],
  };
  if (input.reaches) return { context: { lanes }, outputs: [changed] };
  // A turn only a lane that went could have ended is not waited for (queue-handover.ts).
  const gone = { lanes, ...(ctx.laneTurnOpen === true ? { laneTurnOpen: undefined } : {}) };
  const stranded = (ctx.laned ?? []).filter((i) => i.lane === input.lane);
  const dropped = stranded.length === 0 ? { outputs: [] } : dropLaned(ctx, stranded, 'delivery-unknown');
  return { context: { ...gone, ...dropped.context }, outputs: [changed, ...dropped.outputs] };
}

/** After a restart: no lane reaches any session until it says so again; its unread steers are delivery-unknown. */
export function recoverLanes(ctx: SessionContext): Step {
  const lanes = ctx.lanes ?? [];
  if (lanes.length === 0 && (ctx.laned ?? []).length === 0) return { outputs: [] };
  const dropped = dropLaned(ctx, ctx.laned ?? [], 'delivery-unknown');
  const changed: SessionOutput[] =
    lanes.length === 0 ? [] : [{ type: 'lanes.changed', eventType: describedType(ctx.vendor), lanes: [HOOK_LANE] }];
  // A withdraw the lane never answered: its ack is owed, and the instruction's fate is unknown.
  const unanswered: SessionOutput[] = (ctx.withdrawing ?? []).map((w) => ({
    type: 'control.rejected',
    cause: w.id,
    key: w.key,
    rejection: {
      reason: 'refused',
      rule: 'not-waiting',
      detail: 'the adapter restarted before the agent answered the withdraw; the instruction may have been read',
    },
  }));
  let decisions = ctx.decisions;
  for (const w of ctx.withdrawing ?? []) decisions = withDecision(decisions, w.key, 'rejected');
  return {
    context: {
      lanes: [],
      ...(ctx.laneTurnOpen === true ? { laneTurnOpen: undefined } : {}),
      ...(ctx.laned === undefined ? {} : dropped.context),
      ...(unanswered.length === 0 ? {} : { withdrawing: [], decisions }),
    },
    outputs: [...changed, ...unanswered, ...dropped.outputs],
  };
}

const toolsAtStop = (input: ToolsAtStop): ToolsAtStop | undefined => {
  const t: ToolsAtStop = {
    ...(input.leftRunning?.length ? { leftRunning: input.leftRunning } : {}),
    ...(input.killed?.length ? { killed: input.killed } : {}),
  };
  return t.leftRunning === undefined && t.killed === undefined ? undefined : t;
};

/**
 * `run.cancelled {by: "control"}` caused by the cancel command. It names the run the cancel
 * stopped, as that run's start did (AEP-0002 §2.1 pairs them by `run`), and what the lane saw of
 * the tool processes: one the vendor left running is said, never passed over as stopped.
 */
export const cancelledBy = (
  ctx: SessionContext,
  c: { id: string; run?: string; by?: DecidedBy },
  tools?: ToolsAtStop,
): SessionOutput => {
  const run = c.run ?? ctx.run;
  const by = c.by === undefined ? {} : { decidedBy: c.by };
  return { type: 'run.cancelled', cause: c.id, ...(run === undefined ? {} : { run }), ...tools, ...by };
};

/** The echo of a steer at a hook moment is taken off the awaited list. */
export const echoTaken = (ctx: SessionContext, id: string): Partial<SessionContext> => ({
  echoes: (ctx.echoes ?? []).filter((e) => e.id !== id),
});

/** A session's lanes as the roster shows them (D30): the hook lane, then the native ones reaching it. */
export const lanesOf = (ctx: SessionContext | undefined): string[] => [HOOK_LANE, ...(ctx?.lanes ?? [])];
