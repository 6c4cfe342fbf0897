// Message ids for the prompts the lane sends. opencode 1.18.33 takes a client id (`^msg_`) on
// `POST /api/session/:id/prompt` and makes its own ascending: 12 hex digits of
// (milliseconds × 4096 + a counter) mod 2^48, then 14 base62 characters. The lane's ids have
// that shape so they sort with the server's by time; their tail comes from the command id, so a
// resend of one command after a restart asks with the same tail.
import { hash } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
let last = 0;
let counter = 0;

/** An ascending opencode message id for a command, at time `at` (ms). */
export function messageIdFor(commandId: string, at: number): string {
  if (at !== last) {
    last = at;
    counter = 0;
  }
  counter += 1;
  const head = ((BigInt(at) * 4096n + BigInt(counter)) % 2n ** 48n).toString(16).padStart(12, '0');
  const bytes = hash('sha256', commandId, 'buffer');
  let tail = '';
  for (let i = 0; i < 14; i++) tail += BASE62[bytes[i]! % 62];
  return `msg_${head}${tail}`;
}
