// The relay under test in its own process: `{ store: FILE | ":memory:", token? }`.
import { startRelay } from '../../src/relay/server.js';
import { answer, argOf, serveUntilStopped } from '../lib/proc.js';

const arg = argOf<{ store: string; token?: string; bufferCap?: number }>();
const relay = await startRelay({
  port: 0, storePath: arg.store, ...(arg.token ? { token: arg.token } : {}),
  ...(arg.bufferCap ? { bufferCap: arg.bufferCap } : {}),
  // Load generators outrun their readers on purpose; the drop policy is tested elsewhere
  // (test/relay/backpressure.test.ts), so the bench counts every event.
  backpressure: { soft: 1 << 30, hard: 1 << 30 },
});
answer({ socketUrl: relay.socketUrl, url: relay.url });
serveUntilStopped(() => relay.close());
