// The relay on NATS JetStream against the SQLite relay, in the same run: ingest → fan-out
// events/s and instruct → ack p50 for one SQLite relay, one NATS-backed node, and two
// NATS-backed nodes with the traffic crossing nodes (emitter or target on one node, subscribers
// or consumer on the other). One nats-server (JetStream, a temp store dir) is started and killed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NatsStore } from '../src/relay/nats/store.js';
import { startRelay, type RelayHandle } from '../src/relay/server.js';
import { startNatsServer } from '../test/support/nats-server.js';
import { EVENTS, fanOutRate, instructAckP50, ROUND_TRIPS, SUBSCRIBERS, UNBOUNDED } from './lib/relay-in-process.js';
import { figure, type BenchFigure } from './types.js';

const TOKEN = 'bench';

export default async function natsBench(): Promise<BenchFigure[]> {
  const server = await startNatsServer();
  const dir = mkdtempSync(join(tmpdir(), 'relay-nats-bench-'));
  const relays: RelayHandle[] = [];
  let run = 0;
  const sqlite = async () => {
    const r = await startRelay({
      port: 0,
      token: TOKEN,
      storePath: join(dir, `r${run++}.db`),
      bufferCap: EVENTS,
      backpressure: UNBOUNDED,
    });
    relays.push(r);
    return r;
  };
  // A fresh namespace per pair of nodes, so each pass starts from empty streams.
  const natsNodes = async (n: number) => {
    const namespace = `bench${run++}`;
    const out: RelayHandle[] = [];
    for (let i = 0; i < n; i++) {
      const store = await NatsStore.open({ servers: server.url, namespace, bufferCap: EVENTS });
      const r = await startRelay({ port: 0, token: TOKEN, store, backpressure: UNBOUNDED });
      relays.push(r);
      out.push(r);
    }
    return out;
  };
  try {
    let fanSqlite = 0;
    let fanOne = 0;
    let fanTwo = 0;
    // Best of three, interleaved, so load elsewhere on the machine hits every side alike.
    for (let i = 0; i < 3; i++) {
      const s = await sqlite();
      fanSqlite = Math.max(fanSqlite, await fanOutRate(s, s, `fan-s${i}`, TOKEN));
      const [one] = await natsNodes(1);
      fanOne = Math.max(fanOne, await fanOutRate(one!, one!, `fan-n${i}`, TOKEN));
      const [a, b] = await natsNodes(2);
      fanTwo = Math.max(fanTwo, await fanOutRate(a!, b!, `fan-x${i}`, TOKEN));
      await Promise.all(relays.splice(0).map((r) => r.close()));
    }
    const s = await sqlite();
    const ackSqlite = await instructAckP50(s, s, 'ack-s');
    const [one] = await natsNodes(1);
    const ackOne = await instructAckP50(one!, one!, 'ack-n');
    const [a, b] = await natsNodes(2);
    const ackTwo = await instructAckP50(a!, b!, 'ack-x');
    const what = `best of 3 runs of ${EVENTS} events, 1 emitter socket, ${SUBSCRIBERS} subscriber sockets`;
    const base = 'one SQLite relay (file store), same sockets and frames';
    const ackBase = 'one SQLite relay, same consumer and target';
    return [
      figure({
        name: 'relay-fanout-nats-1-node',
        what: `relay ingest → fan-out, one NATS-backed node; ${what}`,
        unit: 'events/s',
        value: fanOne,
        baseline: fanSqlite,
        baselineWhat: base,
      }),
      figure({
        name: 'relay-fanout-nats-2-nodes',
        what: `ingest on node A → fan-out to subscribers on node B; ${what}`,
        unit: 'events/s',
        value: fanTwo,
        baseline: fanSqlite,
        baselineWhat: base,
      }),
      figure({
        name: 'relay-instruct-ack-nats-1-node-p50',
        what: `consumer → one NATS-backed node → target acks → consumer, median of ${ROUND_TRIPS}`,
        unit: 'ms',
        value: ackOne,
        baseline: ackSqlite,
        baselineWhat: ackBase,
      }),
      figure({
        name: 'relay-instruct-ack-nats-2-nodes-p50',
        what: `consumer on node A, target claiming on node B (the command and its ack cross nodes), median of ${ROUND_TRIPS}`,
        unit: 'ms',
        value: ackTwo,
        baseline: ackSqlite,
        baselineWhat: ackBase,
      }),
    ];
  } finally {
    await Promise.all(relays.map((r) => r.close()));
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
