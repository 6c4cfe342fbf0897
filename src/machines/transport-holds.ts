// Requests the vendor raises on its user-plane channel rather than in a hook (Cline hub
// approvals) as pure steps: the same holds and attention events as a held hook (D13, D14), with
// the answer going back through the channel, answers given in the vendor's own UI mirrored
// `via: "oob"`, and every open request dismissed when the channel is lost (AEP-0002 §7).
import { settledAll, settledWith, type Step } from './step.js';
import { answeredAtAgent, dismissed } from './hold-ends.js';
import { optionFor } from './gate.js';
import type { ApprovalRequestedInput, ApprovalResolvedInput, TransportLostInput } from './vendor-inputs.js';
import type { OpenHold, SessionContext } from './session-context.js';

export function approvalRequested(ctx: SessionContext, input: ApprovalRequestedInput, ended: boolean): Step {
  if (ended || ctx.holds.some((h) => h.external === input.approvalId)) return { outputs: [] };
  // No timer: the vendor's own UI can answer the same request at any time.
  const hold: OpenHold = {
    requestId: input.requestId,
    hookId: '',
    hold: 'permission',
    request: input.request,
    openedAt: input.at,
    timeoutMs: 0,
    external: input.approvalId,
  };
  return {
    context: { holds: [...ctx.holds, hold] },
    outputs: [{ type: 'attention.requested', id: input.requestId, request: input.request }],
  };
}

/** The vendor settled a request this adapter had not answered: mirrored as an out-of-band answer, or dismissed. */
export function approvalResolved(ctx: SessionContext, input: ApprovalResolvedInput): Step {
  const hold = ctx.holds.find((h) => h.external === input.approvalId);
  if (!hold) return { outputs: [] };
  const holds = ctx.holds.filter((h) => h !== hold);
  if (input.approved === undefined) {
    return {
      context: { holds, settled: settledWith(ctx, 'dismissed', [hold.requestId]) },
      outputs: [dismissed(hold, input.at)],
    };
  }
  // D34: the request's own option for what was done (Cline's `approve`, a lane's `allow`).
  const word = input.approved ? 'allow' : 'deny';
  const option = optionFor(hold.request.options ?? [], word) ?? (input.approved ? 'approve' : 'deny');
  return {
    context: { holds, settled: settledWith(ctx, 'answered-oob', [hold.requestId]) },
    outputs: answeredAtAgent(hold, input.answeredId, option, input.at),
  };
}

/** The channel is gone: its requests cannot be answered from here any more, so each is dismissed. */
export function transportLost(ctx: SessionContext, input: TransportLostInput): Step {
  const lost = ctx.holds.filter((h) => h.external !== undefined);
  if (lost.length === 0) return { outputs: [] };
  return {
    context: { holds: ctx.holds.filter((h) => h.external === undefined), ...settledAll(ctx, 'dismissed', lost) },
    outputs: lost.map((h) => dismissed(h, input.at)),
  };
}
