// The events that end an open request (AEP-0006, D34): resolved answered by an answer event,
// answered in the agent's own UI (mirrored `via: "oob"`), or dismissed once it cannot be answered.
import type { OpenHold } from './session-context.js';
import type { SessionOutput } from './session-output.js';

const latencyMs = (hold: OpenHold, at: number): number => Math.max(0, at - hold.openedAt);

/** The request resolved `answered`, caused by the answer event `answeredId`. */
export const resolvedBy = (hold: OpenHold, answeredId: string, at: number): SessionOutput => ({
  type: 'attention.resolved',
  subject: hold.requestId,
  cause: answeredId,
  resolution: 'answered',
  latencyMs: latencyMs(hold, at),
});

/** D34: answered at the agent with `option`: the answer mirrored `via: "oob"`, then the request resolved by it. */
export const answeredAtAgent = (hold: OpenHold, answeredId: string, option: string, at: number): SessionOutput[] => [
  {
    type: 'attention.answered',
    id: answeredId,
    subject: hold.requestId,
    cause: hold.requestId,
    answer: { option },
    via: 'oob',
  },
  resolvedBy(hold, answeredId, at),
];

/** The request can no longer be answered: resolved `dismissed`, caused by itself. */
export const dismissed = (hold: OpenHold, at: number): SessionOutput => ({
  type: 'attention.resolved',
  subject: hold.requestId,
  cause: hold.requestId,
  resolution: 'dismissed',
  latencyMs: latencyMs(hold, at),
});
