// The restart step (D12): what was in flight, held or sent without an answer when the adapter
// stopped is reported once, never re-delivered.
import { settledAll, type Step } from './step.js';
import { dismissed } from './hold-ends.js';
import { recoverForwards } from './forward.js';
import { droppedInstructions } from './queue.js';
import { finishedAll, recoverWithdrawals } from './withdraw.js';
import { recoverLanes } from './lane-steps.js';
import { cancelRefused } from './run-cancel.js';
import type { SessionOutput } from './session-output.js';
import type { SessionContext } from './session-context.js';
import type { RecoveredInput } from './session-input.js';

/** D12: after a restart, in-flight instructions are reported, never re-delivered; held hooks are gone. */
export function recover(ctx: SessionContext, input: RecoveredInput): Step {
  const unknown = ctx.inFlight.flatMap((b) => b.items);
  const outputs: SessionOutput[] = droppedInstructions(ctx, unknown, 'delivery-unknown');
  // A send_input handed to the channel without an answer may or may not have reached the
  // vendor: reported, never re-sent (D12). Sent ones still await their consumption report.
  const sending = ctx.inputs.filter((i) => i.phase === 'sending');
  outputs.push(...droppedInstructions(ctx, sending, 'delivery-unknown'));
  outputs.push(...ctx.holds.map((h) => dismissed(h, input.at)));
  // A cancel the channel never answered: its ack is owed, and the restart cannot know the answer.
  const c = ctx.cancel;
  const unanswered = c !== undefined && !c.acked;
  if (unanswered) {
    outputs.push(
      cancelRefused(c, 'the adapter restarted before the agent answered the cancel; send it again if the run goes on'),
    );
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
      ...finishedAll(ctx, 'delivered', unknown),
      ...settledAll(ctx, 'dismissed', ctx.holds),
    },
    outputs,
  };
}
