// The user-plane input (`x.{vendor}.control.send_input`, D28, D29) as pure steps. Unlike an
// instruction, the text does not wait for a hook moment: once accepted it is handed to the
// vendor's own transport (Cline hub, OpenHands REST), whose answer and later consumption report
// come back as inputs. Every accepted input ends in exactly one outcome the stream can show:
// sent (and consumed, where the vendor reports it) or dropped.
import { inputConsumedType, inputSentType } from '../protocol/index.js';
import { withDecision } from './decisions.js';
import { decideSendInput } from './gate.js';
import { finishedWith } from './withdraw.js';
import { droppedInstructions } from './queue.js';
import { unlessAccepted, type Step } from './step.js';
import type { SessionOutput } from './session-output.js';
import type { InputConsumedInput, InputFailedInput, InputSentInput } from './vendor-inputs.js';
import type { PendingInput, SessionContext } from './session-context.js';
import type { SendInputInput } from './command-inputs.js';

const sentOutput = (ctx: SessionContext, i: PendingInput): SessionOutput => {
  const o: SessionOutput = { type: 'input.sent', eventType: inputSentType(ctx.vendor), cause: i.id };
  if (i.delivery !== undefined) o.delivery = i.delivery;
  return o;
};

/** D2–D6 and D28: one decision per command; accepted, the text goes to the channel at once. */
export function sendInput(ctx: SessionContext, input: SendInputInput, ended: boolean): Step {
  const view = { decisions: ctx.decisions, ended, turnOpen: ctx.turnOpen, inputs: ctx.inputs };
  const d = decideSendInput(view, input.command, input.gateOpen, input.ready, input.policy);
  const cause = input.command.id;
  const refused = unlessAccepted(ctx, d, cause);
  if (refused !== undefined) return refused;
  const item: PendingInput = {
    id: cause,
    key: d.key,
    text: d.text ?? '',
    acceptedAt: input.at,
    phase: 'sending',
    awaitsConsumption: input.policy.reportsConsumption,
  };
  if (d.delivery !== undefined) item.delivery = d.delivery;
  if (typeof input.command.agent === 'string') item.from = input.command.agent;
  const send: SessionOutput = { type: 'input.send', cause, text: item.text };
  if (item.delivery !== undefined) send.delivery = item.delivery;
  return {
    context: { decisions: withDecision(ctx.decisions, d.key, 'accepted'), inputs: [...ctx.inputs, item] },
    outputs: [{ type: 'control.accepted', cause, key: d.key }, send],
  };
}

/**
 * The channel took the input: `input.sent`. Where the vendor reports consumption the input
 * stays pending until then; elsewhere `input.sent` settles it.
 */
export function inputSent(ctx: SessionContext, input: InputSentInput): Step {
  const item = ctx.inputs.find((i) => i.id === input.commandId && i.phase === 'sending');
  if (!item) return { outputs: [] };
  const inputs = item.awaitsConsumption
    ? ctx.inputs.map((i) => (i === item ? { ...i, phase: 'sent' as const } : i))
    : ctx.inputs.filter((i) => i !== item);
  return { context: { inputs }, outputs: [sentOutput(ctx, item)] };
}

/** The channel refused the input or was unreachable: it never reached the agent. */
export function inputFailed(ctx: SessionContext, input: InputFailedInput): Step {
  const item = ctx.inputs.find((i) => i.id === input.commandId && i.phase === 'sending');
  if (!item) return { outputs: [] };
  return {
    context: { inputs: ctx.inputs.filter((i) => i !== item) },
    outputs: droppedInstructions(ctx, [item], 'send-failed'),
  };
}

/**
 * The vendor reports a prompt consumed. It names no command, so the oldest pending input with
 * that exact text is the one (the gate keeps identical texts from sharing a vendor prompt). A
 * consumption seen before the channel's answer proves the send too.
 */
export function inputConsumed(ctx: SessionContext, input: InputConsumedInput): Step {
  const item = ctx.inputs.find((i) => i.text === input.text);
  if (!item) return { outputs: [] };
  const outputs: SessionOutput[] = item.phase === 'sending' ? [sentOutput(ctx, item)] : [];
  outputs.push({
    type: 'input.consumed',
    eventType: inputConsumedType(ctx.vendor),
    cause: item.id,
    queuedMs: Math.max(0, Math.floor(input.at - item.acceptedAt)),
  });
  // Remembered as delivered: a withdraw after this is refused already-delivered (D32).
  return {
    context: { inputs: ctx.inputs.filter((i) => i !== item), finished: finishedWith(ctx, 'delivered', [item.id]) },
    outputs,
  };
}
