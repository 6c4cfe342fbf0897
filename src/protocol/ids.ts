// Monotonic ULIDs (48-bit ms time + 80 random bits, Crockford base32) drawn from a pooled random
// source: one `randomFillSync` fills a pool that serves many ids, where `ulid`'s monotonic
// factory asks `getRandomValues` for one byte sixteen times per new millisecond (8–12% of
// adapter CPU in a hook-heavy profile). Within one millisecond (or when the clock steps back)
// the previous random part is incremented, so ids stay strictly increasing in this process.
import { randomFillSync } from 'node:crypto';

const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const TIME_LEN = 10;
const RANDOM_LEN = 16;
const MAX_TIME = 2 ** 48 - 1;

export type FillRandom = (buf: Uint8Array) => void;

/** An id source; `fill` and `poolBytes` are there for tests (counting draws, small pools). */
export function ulidSource(fill: FillRandom = randomFillSync, poolBytes = 4096): (at?: number) => string {
  const pool = new Uint8Array(Math.max(RANDOM_LEN, poolBytes - (poolBytes % RANDOM_LEN)));
  let used = pool.length;
  let lastTime = -1;
  let lastTimeText = '';
  /** The random part as 16 base32 digits, kept for the increment. */
  const digits = new Uint8Array(RANDOM_LEN);

  const freshRandom = (): void => {
    if (used + RANDOM_LEN > pool.length) {
      fill(pool);
      used = 0;
    }
    // 256 is a multiple of 32, so the low five bits of a uniform byte are uniform.
    for (let i = 0; i < RANDOM_LEN; i += 1) digits[i] = pool[used + i]! & 31;
    used += RANDOM_LEN;
  };

  const increment = (): void => {
    for (let i = RANDOM_LEN - 1; i >= 0; i -= 1) {
      if (digits[i]! < 31) {
        digits[i]! += 1;
        return;
      }
      digits[i] = 0;
    }
    // 80 bits exhausted within one millisecond: not reachable in practice, refused like `ulid` does.
    throw new Error('ULID random part overflowed within one millisecond');
  };

  const timeText = (t: number): string => {
    let out = '';
    let rest = t;
    for (let i = 0; i < TIME_LEN; i += 1) {
      out = B32[rest % 32]! + out;
      rest = Math.floor(rest / 32);
    }
    return out;
  };

  return (at?: number): string => {
    const now = at ?? Date.now();
    if (!Number.isInteger(now) || now < 0 || now > MAX_TIME)
      throw new RangeError(`ULID time must be an integer ms in [0, 2^48): ${now}`);
    if (now <= lastTime) increment();
    else {
      lastTime = now;
      lastTimeText = timeText(now);
      freshRandom();
    }
    let rand = '';
    for (let i = 0; i < RANDOM_LEN; i += 1) rand += B32[digits[i]!];
    return lastTimeText + rand;
  };
}
