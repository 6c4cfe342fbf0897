// The per-session instruction queue: FIFO, capped, delivered as a prefix of whole instructions.
import { droppedType } from '../protocol/index.js';
import type { InFlightBatch, QueuedInstruction, SessionContext } from './session-context.js';
import type { DropReason, SessionOutput } from './session-output.js';

export const QUEUE_CAP = 20; // D3: pending instructions per session, in-flight ones included
export const TEXT_CAP = 4000; // D2: JavaScript string length of one instruction
export const JOIN_CAP = 10_000; // D8: characters in one reply
const JOIN_SEPARATOR = '\n\n'; // D8: a blank line, no added framing

/** Instructions that hold a slot (D3): queued, or handed to a reply not yet confirmed. */
export function pendingCount(queue: readonly QueuedInstruction[], inFlight: readonly InFlightBatch[]): number {
  let n = queue.length;
  for (let i = 0; i < inFlight.length; i += 1) n += inFlight[i]!.items.length;
  return n;
}

export interface Prefix {
  taken: QueuedInstruction[];
  rest: QueuedInstruction[];
  text: string;
}

/**
 * The longest FIFO prefix of whole instructions whose joined text fits the cap (D8).
 * An instruction is never split; what does not fit stays queued in order.
 */
export function takePrefix(queue: readonly QueuedInstruction[], cap: number = JOIN_CAP): Prefix {
  let length = 0;
  let n = 0;
  for (const item of queue) {
    const next = length + (n === 0 ? 0 : JOIN_SEPARATOR.length) + item.text.length;
    if (next > cap) break;
    length = next;
    n += 1;
  }
  const taken = queue.slice(0, n);
  return { taken, rest: queue.slice(n), text: taken.map((i) => i.text).join(JOIN_SEPARATOR) };
}

/** Splits off instructions older than the TTL (D10 `expired`); the rest keep their order. */
export function partitionExpired(
  queue: readonly QueuedInstruction[],
  at: number,
  ttlMs: number,
): { expired: QueuedInstruction[]; kept: QueuedInstruction[] } {
  const expired: QueuedInstruction[] = [];
  const kept: QueuedInstruction[] = [];
  for (const item of queue) (at - item.acceptedAt >= ttlMs ? expired : kept).push(item);
  return { expired, kept };
}

/** Where a hook moment falls in the session's turns (D31): what each delivery may ride. */
export interface MomentPlace {
  /** The moment opens a turn: the first moment of the next turn, where `queue` is delivered. */
  opensTurn: boolean;
  /** A turn was running when the moment came: a moment inside it carries `steer`. */
  inTurn: boolean;
  /** D44: the sender paused the queue: only a steer may leave it. */
  held?: boolean;
}

/** D31: `moment` rides any eligible moment, `queue` only a turn's first, `steer` only one inside a running turn. */
export function fitsMoment(item: QueuedInstruction, place: MomentPlace): boolean {
  if (place.held === true && item.delivery !== 'steer') return false;
  if (item.delivery === 'queue') return place.opensTurn;
  if (item.delivery === 'steer') return place.inTurn && !place.opensTurn;
  return true;
}

/** The FIFO prefix (D8) of the instructions this moment may carry; the others keep their places. */
export function takeFitting(queue: readonly QueuedInstruction[], place: MomentPlace, cap: number = JOIN_CAP): Prefix {
  const fitting = queue.filter((i) => fitsMoment(i, place));
  if (fitting.length === queue.length) return takePrefix(queue, cap);
  const p = takePrefix(fitting, cap);
  const taken = new Set(p.taken);
  return { taken: p.taken, rest: queue.filter((i) => !taken.has(i)), text: p.text };
}

/** Each instruction's (or send_input's) `instruction.dropped` with this reason, in order (D10, D28). */
export const droppedInstructions = (
  ctx: SessionContext,
  items: readonly { id: string }[],
  reason: DropReason,
): SessionOutput[] =>
  items.map((i) => ({ type: 'instruction.dropped', eventType: droppedType(ctx.vendor), cause: i.id, reason }));
