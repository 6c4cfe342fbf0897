// The instruct verb (`x.{vendor}.control.instruct`): an instruction followed to delivered or
// dropped.
import { deliveredType, droppedType, instructType } from '../protocol/types.js';
import type { RelayConsumer } from './connection.js';
import { steer } from './steer.js';
import type { InstructOutcome, InstructRequest, Sender } from './verb.js';

/** Sends one instruction on an open consumer connection and settles it on the stream. */
export function sendInstruction(consumer: RelayConsumer, f: Sender, req: InstructRequest): Promise<InstructOutcome> {
  return steer(consumer, f, req, {
    type: instructType,
    hint: 'its adapter runs with steering off (steering is opt-in)',
    steering: true,
    data: {
      text: req.text,
      ...(req.delivery ? { delivery: req.delivery } : {}),
      ...(req.idle ? { idle: req.idle } : {}),
    },
    settles: /\.instruction\.(delivered|dropped)$/,
    success: /\.instruction\.delivered$/,
    endTypes: (v) => [deliveredType(v), droppedType(v)],
  });
}
