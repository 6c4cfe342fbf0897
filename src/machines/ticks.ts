// The timer steps: the optional TTL expires queued instructions (D10), and an ended session's
// resume window closes (D25).
import type { Step } from './step.js';
import { droppedInstructions, partitionExpired } from './queue.js';
import { finishedAll } from './withdraw.js';
import type { InstructInput } from './command-inputs.js';
import type { SessionContext } from './session-context.js';
import type { TtlInput, WindowInput } from './session-input.js';

/**
 * D25: the resume window has passed; each still-queued instruction drops `session-ended` (D10)
 * and later instructions are refused "session ended" (D6).
 */
export function closeWindow(ctx: SessionContext, input: WindowInput | InstructInput): Step {
  if (ctx.resumeUntil === undefined || input.at < ctx.resumeUntil) return { outputs: [] };
  return {
    context: { queue: [], resumeUntil: undefined, ...finishedAll(ctx, 'dropped', ctx.queue) },
    outputs: droppedInstructions(ctx, ctx.queue, 'session-ended'),
  };
}

/** D10 optional TTL: queued instructions older than the TTL are dropped `expired`. */
export function tick(ctx: SessionContext, input: TtlInput): Step {
  const { expired, kept } = partitionExpired(ctx.queue, input.at, input.ttlMs);
  if (expired.length === 0) return { outputs: [] };
  return {
    context: { queue: kept, ...finishedAll(ctx, 'dropped', expired) },
    outputs: droppedInstructions(ctx, expired, 'expired'),
  };
}
