// Editing an instruction (D32): withdraw plus a new instruct, one action.
import type { RelayConsumer } from './connection.js';
import { sendInstruction } from './instruct.js';
import type { InstructOutcome, Sender } from './verb.js';
import { sendWithdraw, type WithdrawOutcome } from './withdraw.js';

export interface EditOutcome {
  withdraw: WithdrawOutcome;
  /** The replacement, sent only once the withdraw took the old text back. */
  sent?: InstructOutcome;
}

/**
 * D32: editing is withdraw plus a new instruct, one action. A withdraw that loses the race (the
 * agent has the old text) sends nothing, so the agent never reads both.
 */
export async function editInstruction(
  consumer: RelayConsumer,
  f: Sender,
  req: { session: string; instruction: string; text: string; delivery?: string; timeoutMs: number; noWait?: boolean },
): Promise<EditOutcome> {
  const withdraw = await sendWithdraw(consumer, f, {
    session: req.session,
    instruction: req.instruction,
    timeoutMs: req.timeoutMs,
  });
  if (withdraw.outcome !== 'withdrawn') return { withdraw };
  const sent = await sendInstruction(consumer, f, {
    session: req.session,
    text: req.text,
    timeoutMs: req.timeoutMs,
    ...(req.delivery ? { delivery: req.delivery } : {}),
    ...(req.noWait ? { noWait: true } : {}),
  });
  return { withdraw, sent };
}
