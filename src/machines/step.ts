// What one pure step of the session machine returns, and the part every command step shares:
// a redelivered command gets its recorded ack again, a refused one is recorded and answered.
import { withDecision } from './decisions.js';
import type { GateDecision } from './gate.js';
import type { SessionContext, SettledHow, SettledRequest } from './session-context.js';
import type { SessionOutput } from './session-output.js';

export interface Step {
  context?: Partial<SessionContext>;
  outputs: SessionOutput[];
}

/** The step for a duplicate or a refusal (D4, AEP-0004 §3); undefined when the gate accepted. */
export function unlessAccepted(ctx: SessionContext, d: GateDecision, cause: string): Step | undefined {
  if (d.kind === 'duplicate') return { outputs: [{ type: 'control.reack', cause, key: d.key }] };
  if (d.kind === 'reject') {
    return {
      context: { decisions: withDecision(ctx.decisions, d.key, 'rejected') },
      outputs: [{ type: 'control.rejected', cause, key: d.key, rejection: d.rejection }],
    };
  }
  return undefined;
}

/** Ended requests remembered for late responds (D34); older ones are forgotten and answered `unknown-request`. */
export const SETTLED_KEPT = 64;

/** The session's settled list with these requests added, newest last, at most SETTLED_KEPT long. */
export function settledWith(ctx: SessionContext, how: SettledHow, requestIds: readonly string[]): SettledRequest[] {
  const added = requestIds.map((requestId) => ({ requestId, how }));
  return [...(ctx.settled ?? []), ...added].slice(-SETTLED_KEPT);
}

/** The context change that remembers these requests settled; none when there are none. */
export const settledAll = (
  ctx: SessionContext,
  how: SettledHow,
  holds: readonly { requestId: string }[],
): { settled?: SettledRequest[] } =>
  holds.length === 0
    ? {}
    : {
        settled: settledWith(
          ctx,
          how,
          holds.map((h) => h.requestId),
        ),
      };
