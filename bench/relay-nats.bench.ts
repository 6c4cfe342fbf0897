// Scale-out (P11): the relay on NATS JetStream against itself on one node and against the SQLite
// relay, every relay node in its own process, the load generators in theirs (bench/lib/
// ingest-passes.ts), interleaved rounds. One nats-server (JetStream, a temp store dir) is started
// and killed; every pass uses a fresh namespace, so each starts from empty streams.
//  - ingest: events/s from several emitter processes through one SQLite relay, one NATS-backed
//    node, and two NATS-backed nodes (the emitters split between them, the subscribers on the
//    first, so half the events cross nodes), with each node's CPU per event from /proc;
//  - what two nodes predict where each has a core of its own (this machine has 2 cores for the
//    load, the nodes and nats-server alike): one node's CPU per event over the busier node's;
//  - command round trip: consumer and target on one NATS node, and on two (the command and its
//    ack cross nodes), p50; the goal is the cross-node one within 1.5x of the single node's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer } from '../test/support/nats-server.js';
import { ingestPass, loadWhat, type IngestLoad, type NodesPass } from './lib/ingest-passes.js';
import { tsNode, type Child } from './lib/proc.js';
import { commandRoundTrips, COMMANDS } from './lib/relay-passes.js';
import { interleave, median, quantile } from './lib/stats.js';
import { figure, QUICK, ROUNDS, type BenchFigure } from './types.js';

const TOKEN = 'bench-token';
const LOAD: IngestLoad = { mode: 'ws', procs: 2, conns: 2, events: QUICK ? 1000 : 4000, ws: 2, sse: 0 };

export default async function natsBench(): Promise<BenchFigure[]> {
  const server = await startNatsServer();
  const dir = mkdtempSync(join(tmpdir(), 'relay-nats-bench-'));
  let n = 0;
  const sqlite = () => tsNode('servers/relay.ts', { store: join(dir, `r${n++}.db`), token: TOKEN });
  const nodes = async (count: number): Promise<Child[]> => {
    const nats = { servers: server.url, namespace: `bench${n++}` };
    const out: Child[] = [];
    for (let i = 0; i < count; i += 1) out.push(await tsNode('servers/relay.ts', { store: '', token: TOKEN, nats }));
    return out;
  };
  const commands = (count: number) => async () => {
    const [a, b = a] = await nodes(count);
    try {
      const ms = await commandRoundTrips(a!.ready.socketUrl as string, {
        background: false,
        targetUrl: b!.ready.socketUrl as string,
      });
      return quantile(ms, 0.5);
    } finally {
      await Promise.all([a, b].filter((c, i, all) => all.indexOf(c) === i).map((c) => c!.stop()));
    }
  };
  try {
    const pass = (start: () => Promise<Child | Child[]>) => ingestPass(start, LOAD, TOKEN);
    await pass(() => nodes(1))();
    const f = await interleave(ROUNDS, {
      sqlite: pass(sqlite),
      one: pass(() => nodes(1)),
      two: pass(() => nodes(2)),
    });
    const c = await interleave(ROUNDS, { one: commands(1), two: commands(2) });
    const what = loadWhat(LOAD);
    const rate = (xs: NodesPass[]) => median(xs.map((x) => x.rate));
    const busier = (p: NodesPass) => Math.max(...p.nodes.map((x) => x.all));
    const predicted = f.one.map((p, i) => p.all / busier(f.two[i]!));
    return [
      figure({
        name: 'relay-ingest-nats-1-node',
        what: `WebSocket ingest → fan-out through one NATS-backed node; ${what}`,
        unit: 'events/s',
        value: rate(f.one),
        baseline: rate(f.sqlite),
        baselineWhat: 'one SQLite relay (file store), same load',
        ratios: f.one.map((p, i) => p.rate / f.sqlite[i]!.rate),
      }),
      figure({
        name: 'relay-ingest-nats-2-nodes',
        what: `the same through two NATS-backed nodes (emitters split, subscribers on the first: half the events cross nodes)`,
        unit: 'events/s',
        value: rate(f.two),
        baseline: rate(f.one),
        baselineWhat: 'one NATS-backed node, same load',
        ratios: f.two.map((p, i) => p.rate / f.one[i]!.rate),
      }),
      figure({
        name: 'relay-nats-cpu-per-event-1-node',
        what: 'CPU per ingested event of one NATS-backed node, all its threads',
        unit: 'µs CPU',
        value: median(f.one.map((p) => p.all)),
        baseline: median(f.sqlite.map((p) => p.all)),
        baselineWhat: 'one SQLite relay, all its threads',
        ratios: f.one.map((p, i) => p.all / f.sqlite[i]!.all),
      }),
      ...[0, 1].map((k) =>
        figure({
          name: `relay-nats-cpu-per-event-2-nodes-${k === 0 ? 'a' : 'b'}`,
          what: `CPU per ingested event (of all events) of node ${k === 0 ? 'A (emitters and subscribers)' : 'B (emitters only)'} of two NATS-backed nodes, all its threads`,
          unit: 'µs CPU',
          value: median(f.two.map((p) => p.nodes[k]!.all)),
          baseline: median(f.one.map((p) => p.all)),
          baselineWhat: 'one NATS-backed node carrying all of it',
          ratios: f.two.map((p, i) => p.nodes[k]!.all / f.one[i]!.all),
        }),
      ),
      figure({
        name: 'relay-nats-2-nodes-predicted',
        what: 'ingest two NATS-backed nodes predict against one where each node has a core of its own: one node’s CPU per event over the busier node’s',
        unit: 'x',
        value: median(predicted),
        baseline: 1,
        baselineWhat: 'one node (a ratio of CPU per event, measured above)',
        ratios: predicted,
      }),
      figure({
        name: 'relay-command-nats-cross-node-p50',
        what: `instruct → ack with the consumer on node A and the target claiming on node B (command and ack cross nodes), p50 of ${COMMANDS}`,
        unit: 'ms',
        value: median(c.two),
        baseline: median(c.one),
        baselineWhat: 'consumer and target on one NATS-backed node',
        ratios: c.two.map((v, i) => v / c.one[i]!),
        goal: '<= 1.5',
      }),
    ];
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
