// The withdraw verb (`x.{vendor}.control.withdraw`, D32): takes back an instruction that still
// waits, settled by its `instruction.dropped {reason: withdrawn}`.
import { GRANT_ATTR, WITHDRAW_GRANT, withdrawType } from '../protocol/types.js';
import type { RelayConsumer } from './connection.js';
import { steer } from './steer.js';
import { deliveryTimeout, surfaceData, verbRequest, type Sender, type Unsettled } from './verb.js';

export type WithdrawOutcome =
  /** D32: the instruction was taken back; `dropped` is its `instruction.dropped {reason: withdrawn}`. */
  | {
      outcome: 'withdrawn';
      command: string;
      session: string;
      vendor: string;
      instruction: string;
      ack: string;
      dropped: string;
    }
  | (Unsettled & { instruction: string });

/**
 * D32: takes back an instruction that still waits (`x.{vendor}.control.withdraw`), settled by
 * its `instruction.dropped {reason: withdrawn}`. With `id`, a second call is a retry of the same
 * withdraw and gets the same answer (D4). `granted` claims the token's withdraw grant, for an
 * instruction someone else sent; the relay refuses the claim from a token without one.
 */
export async function sendWithdraw(
  consumer: RelayConsumer,
  f: Sender,
  req: {
    session: string;
    instruction: string;
    vendor?: string;
    id?: string;
    granted?: boolean;
    timeoutMs: number;
    ackWindowMs?: number;
  },
): Promise<WithdrawOutcome> {
  const o = await steer(consumer, f, verbRequest(req), {
    type: withdrawType,
    hint: 'withdraw comes with instruct, and its adapter runs with steering off',
    steering: true,
    data: { instruction: req.instruction, ...surfaceData(f) },
    ...(req.granted ? { extensions: { [GRANT_ATTR]: WITHDRAW_GRANT } } : {}),
    settles: /\.instruction\.dropped$/,
    success: /\.instruction\.dropped$/,
    capture: 'metadata',
  });
  const instruction = req.instruction;
  switch (o.outcome) {
    case 'delivered':
      return {
        outcome: 'withdrawn',
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        instruction,
        ack: o.ack,
        dropped: o.delivered,
      };
    case 'dropped':
    case 'accepted':
      // The success pattern matches every drop and noWait is never set: neither reaches here.
      return deliveryTimeout(o, { instruction });
    default:
      return { ...o, instruction };
  }
}
