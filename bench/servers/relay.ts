// The relay under test in its own process: `{ store: FILE | ":memory:", token?, engine?, nats? }`;
// `engine: "better-sqlite3"` opens the file store with that binding (bench/lib/better-sqlite3.ts);
// `nats: { servers, namespace }` makes it one node on NATS JetStream instead (the scale-out store).
import { startRelay } from '../../src/relay/server.js';
import { ThreadedStore } from '../../src/relay/store-thread.js';
import { answer, argOf, serveUntilStopped } from '../lib/proc.js';

const arg = argOf<{
  store: string;
  token?: string;
  bufferCap?: number;
  engine?: 'better-sqlite3';
  nats?: { servers: string; namespace: string };
}>();
const engine = arg.engine ? new URL('../lib/better-sqlite3.ts', import.meta.url).href : undefined;
const cap = arg.bufferCap ? { bufferCap: arg.bufferCap } : {};
// The NATS client loads only for a NATS node, so a SQLite relay's process holds none of it.
const store = arg.nats
  ? await (await import('../../src/relay/nats/store.js')).NatsStore.open({
      servers: arg.nats.servers,
      namespace: arg.nats.namespace,
      ...cap,
    })
  : engine
    ? await ThreadedStore.open({ path: arg.store, engine, ...cap })
    : undefined;
const relay = await startRelay({
  port: 0,
  storePath: arg.store,
  ...(store ? { store } : {}),
  ...(arg.token ? { token: arg.token } : {}),
  ...(arg.bufferCap ? { bufferCap: arg.bufferCap } : {}),
  // Load generators outrun their readers on purpose; the drop policy is tested elsewhere
  // (test/relay/backpressure.test.ts), so the bench counts every event.
  backpressure: { soft: 1 << 30, hard: 1 << 30 },
});
answer({ socketUrl: relay.socketUrl, url: relay.url });
serveUntilStopped(() => relay.close());
