// Which instruction an `x.{vendor}.instruction.delivered|dropped` event ends. Most ends are caused
// by the instruction itself (`cause`), but one a later command brought about (a withdraw, D32) is
// caused by that command and names the instruction as `subject`. Every reader of the stream asks
// here, so the relay's summary, the roster, a sender's wait and the queue agree on what is settled.
import type { AepEvent } from './envelope.js';

const END = /^x\.[a-z0-9_-]+\.instruction\.(delivered|dropped)$/;

/** The instruction `e` settles, or undefined when `e` settles none. */
export function endedInstruction(e: Pick<AepEvent, 'type' | 'subject' | 'cause'>): string | undefined {
  if (!END.test(e.type)) return undefined;
  if (typeof e.subject === 'string') return e.subject;
  return typeof e.cause === 'string' ? e.cause : undefined;
}
