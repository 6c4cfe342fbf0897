// The sessions with events after the confirmed point, each with its first and last position
// there: what a learn asks the relay about, and what the state file keeps positions for. Kept
// as events become durable, and found again after a restart by reading the log's tail.
import { parseLog, type EventLog, type LogPosition } from './log.js';
import { posOf, type Position } from './outbox-state.js';

export interface Touched {
  first: Position;
  last: Position;
}

/** Session `s` has an event at `p` after the confirmed point. */
export function touch(touched: Map<string, Touched>, s: string, p: Position): void {
  const t = touched.get(s);
  if (t) t.last = p;
  else touched.set(s, { first: p, last: p });
}

/**
 * After a restart: which sessions have events after `from` (the log's tail), read in whole lines
 * of at most `chunkBytes` up to `segmentEnd` of each generation through `lastGen`. A read that
 * fails ends that generation's scan (the pump reports it when it reads there).
 */
export function scanTail(
  log: EventLog,
  from: LogPosition,
  lastGen: number,
  segmentEnd: (gen: number) => number,
  chunkBytes: number,
  touched: Map<string, Touched>,
): void {
  let c: LogPosition = from;
  for (;;) {
    const end = segmentEnd(c.gen);
    let chunk: Buffer;
    try {
      chunk = c.offset < end ? log.read(c.gen, c.offset, Math.min(chunkBytes, end - c.offset)) : Buffer.alloc(0);
    } catch {
      chunk = Buffer.alloc(0);
    }
    let whole = chunk.lastIndexOf(0x0a) + 1;
    if (whole === 0 && chunk.length > 0 && c.offset < end) {
      chunk = log.read(c.gen, c.offset, end - c.offset);
      whole = chunk.indexOf(0x0a) + 1;
    }
    if (whole === 0) {
      if (c.gen < lastGen) {
        c = { gen: c.gen + 1, offset: 0 };
        continue;
      }
      return;
    }
    parseLog(chunk.subarray(0, whole), (r) => {
      if (r.k !== 'ev') return;
      const p = posOf(r.e);
      if (!p) return;
      touch(touched, r.e.session!, p);
    });
    c = { gen: c.gen, offset: c.offset + whole };
  }
}
