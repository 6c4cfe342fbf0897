// D47: the store's signed checkpoints go on the stream, to every subscriber whose filter takes
// them, as the store commits them; and an idle relay's last rows are signed within a checkpoint
// interval of arriving: a tick that often asks the store to sign the heads nothing signed yet
// (after 1,000 rows or on the first batch past the interval the store signs by itself).
import type { AepEvent } from '../protocol/envelope.js';
import type { Hub } from './hub.js';
import type { SessionStore } from './session-store.js';
import { CHECKPOINT_MS } from './store-chain.js';

/** Runs `tick` every `ms` until the returned stop is called; a test gives its own clock. */
export type Ticker = (tick: () => void, ms: number) => () => void;

const everyMs: Ticker = (tick, ms) => {
  const t = setInterval(tick, ms);
  t.unref();
  return () => clearInterval(t);
};

/** Wires the store's checkpoints to the hub and starts the idle tick; returns its stop. */
export function streamCheckpoints(
  store: SessionStore,
  hub: Hub,
  report: (err: Error) => void,
  ticker: Ticker = everyMs,
): () => void {
  store.onCheckpoint?.((raw) => hub.fanOut(JSON.parse(raw) as AepEvent, raw));
  const idle = store.checkpointIdle?.bind(store);
  if (idle === undefined) return () => {};
  return ticker(() => {
    try {
      // A store that cannot write now signs on a later tick, or with its next batch.
      void Promise.resolve(idle()).catch(report);
    } catch (err) {
      report(err as Error);
    }
  }, CHECKPOINT_MS);
}
