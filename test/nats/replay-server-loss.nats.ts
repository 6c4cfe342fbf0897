// A replay in flight when the JetStream server this node is connected to dies, with the replay's
// consumer on that server. The client library cancels a fetch's heartbeat check on the
// disconnect and, after the reconnect, asks the dead host for the consumer's state without end:
// the replay never ended, and the connection that asked (an adapter's outbox learning what the
// relay holds) had every later frame held behind it, its acks among them. Asserted: the replay
// ends (its rows or a refusal) within the stall bound, and the store replays the whole session
// once the cluster elected new leaders.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { NatsStore } from '../../src/relay/nats/store.js';
import { names, sessionToken } from '../../src/relay/nats/subjects.js';
import { startNatsCluster, type NatsCluster } from '../support/nats-server.js';

const EVENTS = 6000;
/** The fetch given up after 3 s of silence, plus the time to notice the kill on a loaded machine. */
const BOUND_MS = 8000;
const TRIES = 40;

let cluster: NatsCluster;
let store: NatsStore | undefined;
let nc: NatsConnection | undefined;
test.after(async () => {
  await store?.close().catch(() => {});
  await nc?.close().catch(() => {});
  await cluster?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The replay's own consumer, once the server says it has delivered from it. */
async function replayConsumer(jsm: JetStreamManager, stream: string, filter: string, until: number) {
  while (Date.now() < until) {
    try {
      for await (const ci of jsm.consumers.list(stream)) {
        if (ci.config.filter_subject === filter && ci.delivered.stream_seq > 0) return ci;
      }
    } catch {
      // a list cut short by the load: ask again
    }
    await sleep(5);
  }
  return undefined;
}

test("a replay whose server dies under it, on this node's connection, ends within its bound", async () => {
  cluster = await startNatsCluster(3);
  const victim = cluster.servers[0]!;
  // Connected to the victim first; other servers are learnt from the cluster for the reconnect.
  store = await NatsStore.open({ servers: victim.url, namespace: 'rl', leaseMs: 1500 });
  assert.match(String(store.health().server), new RegExp(`:${victim.port}$`));
  const session = 'replayed-session';
  const body = 'x'.repeat(1000);
  for (let i = 0; i < EVENTS; i += 500) {
    await store.admitAll(
      Array.from({ length: 500 }, (_, k) => {
        const seq = i + k;
        const e = { type: 'progress.status', session, seq, id: `e${seq}`, source: 's', data: { body } };
        return { session, source: 's', id: `e${seq}`, epoch: 0, seq, raw: JSON.stringify(e) };
      }),
    );
  }
  nc = await connect({ servers: cluster.servers[1]!.url });
  const jsm = await jetstreamManager(nc, { timeout: 2000 });
  const n = names('rl');
  const filter = n.session(sessionToken(session));

  let exercised = false;
  for (let i = 0; i < TRIES && !exercised; i++) {
    const started = Date.now();
    let ended = 0;
    const replay = store.replay(session).then(
      (r) => ({ ok: true as const, rows: r.items.length }),
      (err: Error) => ({ ok: false as const, error: err.message }),
    );
    void replay.then(() => (ended = Date.now()));
    const ci = await replayConsumer(jsm, n.eventsStream, filter, started + 5000);
    if (ci?.cluster?.leader !== victim.name || ended !== 0) {
      // Placed on another server (or already done): this try cannot show it.
      const r = await replay;
      assert.ok(r.ok, `a replay without a fault failed: ${JSON.stringify(r)}`);
      continue;
    }
    exercised = true;
    await victim.kill();
    const killed = Date.now();
    const r = await Promise.race([replay, sleep(30_000).then(() => undefined)]);
    const took = (ended || Date.now()) - killed;
    console.log(
      `replay with its consumer on the killed server (try ${i + 1}): ` +
        `${r === undefined ? 'still running after 30 s' : r.ok ? `${r.rows} rows` : `refused: ${r.error}`}, ` +
        `${(took / 1000).toFixed(1)} s after the kill`,
    );
    assert.ok(r !== undefined, 'the replay never ended');
    assert.ok(took <= BOUND_MS, `the replay ended ${took} ms after the kill, bound ${BOUND_MS} ms`);
  }
  assert.ok(exercised, `in ${TRIES} tries no replay's consumer was placed on the server this node is connected to`);

  // After the election the store reads the whole session again.
  let rows = 0;
  for (const until = Date.now() + 30_000; Date.now() < until && rows !== EVENTS; await sleep(500)) {
    rows = await store.replay(session).then(
      (r) => r.items.length,
      () => 0,
    );
  }
  assert.is(rows, EVENTS, 'the whole session replayed after the election');
});

test.run();
