// The send_input verb (`x.{vendor}.control.send_input`, D28–D29): user-plane input to a session
// whose adapter drives the vendor's own input API.
import { droppedType, inputSentType, sendInputType } from '../protocol/types.js';
import type { RelayConsumer } from './connection.js';
import { steer } from './steer.js';
import type { InstructOutcome, InstructRequest, Sender } from './verb.js';

export type InputDelivery = 'queue' | 'steer';

/**
 * Sends user-plane input (`x.{vendor}.control.send_input`, D28–D29) to a session whose adapter
 * drives the vendor's own input API (Cline, OpenHands), settled by `x.{vendor}.input.sent`
 * (reported as `delivered`) or `x.{vendor}.instruction.dropped` (the session machine's drop:
 * `send-failed`, `session-ended`, `delivery-unknown`).
 */
export function sendInput(
  consumer: RelayConsumer,
  f: Sender,
  req: InstructRequest & { delivery?: InputDelivery },
): Promise<InstructOutcome> {
  return steer(consumer, f, req, {
    type: sendInputType,
    hint: "send_input is for sessions whose adapter drives the vendor's input API (Cline, OpenHands) with its control switched on",
    data: { text: req.text, ...(req.delivery ? { delivery: req.delivery } : {}) },
    settles: /\.(input\.sent|instruction\.dropped)$/,
    success: /\.input\.sent$/,
    endTypes: (v) => [inputSentType(v), droppedType(v)],
  });
}
