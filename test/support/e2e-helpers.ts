// What the vendor end-to-end tests share: polling a recorded stream (a miss fails with what was
// seen, never with a timing assertion), searching a model request body for hook context wherever
// the CLI placed it (vendor-clis-observed §1.8), and failing plainly when the pinned CLI is absent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent } from '../../src/protocol/index.js';
import type { RecordedRequest } from './mock-anthropic.js';

/** A `waitFor(what, probe)` that polls until `probe` gives a value, over the recorded `events`. */
export function pollFor(events: AepEvent[], defaultLimitMs = 20_000) {
  return async function waitFor<T>(what: string, probe: () => T | undefined, limitMs = defaultLimitMs): Promise<T> {
    const until = Date.now() + limitMs;
    for (;;) {
      const v = probe();
      if (v !== undefined) return v;
      if (Date.now() > until) {
        throw new Error(
          `never saw ${what}; stream had: ${events.map((e) => `${e.type}${e.cause ? `<-${e.cause}` : ''}`).join(', ')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  };
}

/** Every string inside a parsed body. */
export function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
}

export const bodyHas = (r: RecordedRequest | undefined, s: string): boolean =>
  r !== undefined && strings(r.body).some((x) => x.includes(s));

/**
 * True when the CLI is missing. Under CI that is always a failure; elsewhere too, unless waived
 * with AEP_SKIP_VENDOR_E2E=1.
 */
export function vendorMissing(binary: string | undefined, suite: string, missing: string): boolean {
  if (binary !== undefined) return false;
  if (process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1') {
    console.log(`${suite} e2e not run (AEP_SKIP_VENDOR_E2E=1): ${missing}`);
  } else {
    test(`${suite}: the pinned CLI is installed`, () => {
      assert.unreachable(missing);
    });
  }
  return true;
}
