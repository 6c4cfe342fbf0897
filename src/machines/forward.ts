// Commands the adapter carries out on the vendor's own API (OpenHands: respond_to_confirmation,
// pause, run, interrupt), as pure steps. The vendor's answer is the decision (the design record's
// REST-settled acks): a command passes dedupe, the gate, the session's life and the vendor's guard
// (evaluated by the adapter from what the stream last showed), then waits for the vendor; its
// one ack goes out when the answer comes back. A redelivery while it waits adds nothing (the one
// forthcoming ack answers every delivery); after it, the recorded ack goes out again (D4).
import { commandKey, REJECT } from './gate.js';
import { decisionOf, withDecision } from './decisions.js';
import type { Step } from './step.js';
import type { ForwardInput } from './command-inputs.js';
import type { ForwardSettledInput } from './vendor-inputs.js';
import type { SessionContext } from './session-context.js';

/** One decision per command: duplicate, refused now, or handed to the vendor. */
export function forward(ctx: SessionContext, input: ForwardInput, ended: boolean): Step {
  const c = input.command;
  const key = commandKey(c);
  if (decisionOf(ctx.decisions, key) !== undefined) return { outputs: [{ type: 'control.reack', cause: c.id, key }] };
  if (ctx.forwards.some((f) => f.key === key)) return { outputs: [] };
  const rejection = !input.gateOpen ? REJECT.controlGateOff : ended ? REJECT.ended : input.refusal;
  if (rejection !== undefined) {
    return {
      context: { decisions: withDecision(ctx.decisions, key, 'rejected') },
      outputs: [{ type: 'control.rejected', cause: c.id, key, rejection }],
    };
  }
  return {
    context: { forwards: [...ctx.forwards, { id: c.id, key }] },
    outputs: [{ type: 'control.forward', cause: c.id, command: c }],
  };
}

/** The vendor answered: 2xx accepts, a refusal or no answer rejects. */
export function settle(ctx: SessionContext, input: ForwardSettledInput): Step {
  const pending = ctx.forwards.find((f) => f.id === input.commandId);
  if (!pending) return { outputs: [] };
  const forwards = ctx.forwards.filter((f) => f !== pending);
  if (input.rejection === undefined) {
    return {
      context: { forwards, decisions: withDecision(ctx.decisions, pending.key, 'accepted') },
      outputs: [{ type: 'control.accepted', cause: pending.id, key: pending.key }],
    };
  }
  return {
    context: { forwards, decisions: withDecision(ctx.decisions, pending.key, 'rejected') },
    outputs: [{ type: 'control.rejected', cause: pending.id, key: pending.key, rejection: input.rejection }],
  };
}

/**
 * After a restart a command handed to the vendor has no answer to wait for: it is accepted as
 * "will try" (the write may have landed; the status flips on the stream remain the truth).
 */
export function recoverForwards(ctx: SessionContext): Step {
  if (ctx.forwards.length === 0) return { outputs: [] };
  let decisions = ctx.decisions;
  for (const f of ctx.forwards) decisions = withDecision(decisions, f.key, 'accepted');
  return {
    context: { forwards: [], decisions },
    outputs: ctx.forwards.map((f) => ({ type: 'control.accepted' as const, cause: f.id, key: f.key })),
  };
}
