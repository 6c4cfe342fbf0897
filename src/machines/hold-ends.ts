// The events that end an open request (AEP-0006, D34): resolved answered by an answer event,
// answered in the agent's own UI (mirrored `via: "oob"`), or dismissed once it cannot be answered.
// Each names who decided it (D46).
import { AT_AGENT, BY_AGENT_SIDE, type DecidedBy } from './decided-by.js';
import type { OpenHold } from './session-context.js';
import type { SessionOutput } from './session-output.js';

const latencyMs = (hold: OpenHold, at: number): number => Math.max(0, at - hold.openedAt);

/** The request resolved `answered`, caused by the answer event `answeredId`, decided by `by` (and first allowed by `first`, D48). */
export const resolvedBy = (
  hold: OpenHold,
  answeredId: string,
  at: number,
  by: DecidedBy,
  first?: DecidedBy,
): SessionOutput => ({
  type: 'attention.resolved',
  subject: hold.requestId,
  cause: answeredId,
  resolution: 'answered',
  latencyMs: latencyMs(hold, at),
  decidedBy: by,
  ...(first === undefined ? {} : { firstBy: first }),
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
  resolvedBy(hold, answeredId, at, AT_AGENT),
];

/** The request can no longer be answered: resolved `dismissed`, caused by itself; by the agent side unless a person there closed it. */
export const dismissed = (hold: OpenHold, at: number, by: DecidedBy = BY_AGENT_SIDE): SessionOutput => ({
  type: 'attention.resolved',
  subject: hold.requestId,
  cause: hold.requestId,
  resolution: 'dismissed',
  latencyMs: latencyMs(hold, at),
  decidedBy: by,
});
