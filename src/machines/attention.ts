// The steps of a held hook's attention request (D13, D14, D34): it opens, and it ends answered by
// a respond, answered at the agent, dismissed when the vendor closes the hook, or timed out.
import { withDecision } from './decisions.js';
import { settledWith, type Step } from './step.js';
import { REJECT, decideRespond, optionFor } from './gate.js';
import { answeredAtAgent, dismissed, resolvedBy } from './hold-ends.js';
import { AT_AGENT, BY_TIMEOUT, decidedByOf, isRejection } from './decided-by.js';
import { secondKey } from './second-key.js';
import type { Rejection } from '../protocol/index.js';
import type { SessionOutput } from './session-output.js';
import type { HeldInput, HoldClosedInput, MomentInput } from './hook-inputs.js';
import type { RespondInput } from './command-inputs.js';
import type { OpenHold, SessionContext } from './session-context.js';
import type { TimeoutInput } from './session-input.js';

/** D14: a respond answers the open request named by its `subject`; D46: it says who decided; D48: a risky allow needs two. */
export function respond(ctx: SessionContext, input: RespondInput): Step {
  const d = decideRespond(ctx, input.command);
  const cause = input.command.id;
  if (d.kind === 'duplicate') return { outputs: [{ type: 'control.reack', cause, key: d.key }] };
  const by = d.kind === 'reject' ? undefined : decidedByOf(input.command);
  if (d.kind === 'reject' || !d.hold || !d.decision || by === undefined || isRejection(by)) {
    const rejection =
      d.kind === 'reject' ? d.rejection : by !== undefined && isRejection(by) ? by : REJECT.answerInvalid;
    return rejected(ctx, cause, d.key, rejection);
  }
  const hold = d.hold;
  const two = secondKey(hold, d.decision.option, by);
  if (two.kind === 'refuse') return rejected(ctx, cause, d.key, two.rejection);
  if (two.kind === 'first') {
    const waiting: OpenHold = { ...hold, firstAllow: by };
    return {
      context: {
        decisions: withDecision(ctx.decisions, d.key, 'accepted'),
        holds: ctx.holds.map((h) => (h === hold ? waiting : h)),
      },
      outputs: [{ type: 'control.accepted', cause, key: d.key, pendingSecond: by, subject: hold.requestId }],
    };
  }
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
      resolvedBy(hold, input.answeredId, input.at, by, two.kind === 'second' ? two.first : undefined),
      hold.external === undefined
        ? { type: 'reply.decision', hookId: hold.hookId, decision: d.decision }
        : { type: 'approval.answer', approvalId: hold.external, decision: d.decision },
    ],
  };
}

const rejected = (ctx: SessionContext, cause: string, key: string, rejection: Rejection): Step => ({
  context: { decisions: withDecision(ctx.decisions, key, 'rejected') },
  outputs: [{ type: 'control.rejected', cause, key, rejection }],
});

/**
 * D34: the moment reports that a held tool call ran, so the person allowed it in the agent's own
 * dialog (Claude Code keeps the held hook open then): the request is answered `via: "oob"`, and
 * the hook, which the vendor no longer reads, gets the neutral reply.
 */
export function ranAtAgent(ctx: SessionContext, input: MomentInput): Step | undefined {
  const ran = input.ran;
  const hold = ran === undefined ? undefined : ctx.holds.find((h) => h.call === ran.call && h.external === undefined);
  if (ran === undefined || hold === undefined) return undefined;
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
      ...answeredAtAgent(hold, ran.answeredId, option, input.at),
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
    outputs: [dismissed(hold, input.at, AT_AGENT), { type: 'reply.decision', hookId: hold.hookId }],
  };
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
      {
        type: 'attention.timeout',
        subject: hold.requestId,
        cause: hold.requestId,
        afterMs: hold.timeoutMs,
        decidedBy: BY_TIMEOUT,
      },
      { type: 'reply.decision', hookId: hold.hookId },
    ],
  };
}
