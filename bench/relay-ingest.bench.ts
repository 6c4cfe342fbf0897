// Relay ingest on each path, with the SQLite file store on, against baselines interleaved in the
// same run: WebSocket frames → WebSocket subscribers, `POST /events` (one event per POST, the
// collector path other emitters use) → WebSocket subscribers, and WebSocket frames → SSE
// (`GET /stream`) subscribers. The load is several emitter processes and one subscriber process
// (bench/lib/ingest-passes.ts), so no one load process is the ceiling. Baselines: the AEP
// reference relay when AEP_PEER_RELAY_DIR holds it (goal 2x), and always the bare broadcaster
// (bench/servers/ws-broadcast.ts: the same sockets, POSTs and streams with nothing but the
// forwarding; goal 0.8x, the floor the load itself allows), and this relay with `--memory`.
// With AEP_BENCH_BEFORE_DIR, that checkout's relay server on its own file store runs interleaved
// too (`relay-ingest-*-vs-before`: rate, and CPU per event over all its threads).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ingestPass, loadWhat, type IngestLoad, type IngestPass } from './lib/ingest-passes.js';
import { tsNode } from './lib/proc.js';
import { beforeCommit, beforeDir, startBefore } from './lib/before.js';
import { interleave, median } from './lib/stats.js';
import { peerRelayDir, peerRelayHint, startPeerRelay } from './servers/peer-relay.js';
import { figure, QUICK, ROUNDS, type BenchFigure } from './types.js';

const TOKEN = 'bench-token';
const scale = QUICK ? 0.25 : 1;
const PATHS: { id: string; what: string; load: IngestLoad }[] = [
  {
    id: 'ws',
    what: 'WebSocket ingest → WebSocket fan-out',
    load: { mode: 'ws', procs: 2, conns: 2, events: 6000 * scale, ws: 2, sse: 0 },
  },
  {
    id: 'http',
    what: 'HTTP ingest (POST /events) → WebSocket fan-out',
    load: { mode: 'http', procs: 2, conns: 4, events: 1500 * scale, ws: 2, sse: 0 },
  },
  {
    id: 'http-ndjson',
    what: 'HTTP ingest (POST /events, NDJSON bodies of 50 events) → WebSocket fan-out',
    load: { mode: 'http', procs: 2, conns: 4, events: 5000 * scale, batch: 50, ws: 2, sse: 0 },
  },
  {
    id: 'sse',
    what: 'WebSocket ingest → SSE (GET /stream) fan-out',
    load: { mode: 'ws', procs: 2, conns: 2, events: 4000 * scale, ws: 0, sse: 2 },
  },
];

export default async function relayIngest(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-ingest-'));
  const peer = peerRelayDir();
  if (!peer) process.stderr.write(`bench: ${peerRelayHint}\n`);
  let n = 0;
  const file = () => tsNode('servers/relay.ts', { store: join(dir, `relay-${n++}.db`), token: TOKEN });
  const memory = () => tsNode('servers/relay.ts', { store: ':memory:', token: TOKEN });
  const bare = () => tsNode('servers/ws-broadcast.ts', {});
  const before = () =>
    startBefore('relay.ts', { store: join(dir, `before-${n++}.db`), token: TOKEN }, ['socketUrl', 'url']);
  const paired = beforeDir() !== undefined;
  const figures: BenchFigure[] = [];
  try {
    for (const path of PATHS) {
      const pass = (start: typeof file) => ingestPass(start, path.load, TOKEN);
      // One discarded pass warms the disk and module caches.
      await pass(file)();
      const runs = await interleave(ROUNDS, {
        bare: pass(bare),
        file: pass(file),
        memory: pass(memory),
        ...(peer ? { peer: pass(() => startPeerRelay(peer, TOKEN)) } : {}),
        ...(paired ? { before: pass(before) } : {}),
      } as Record<'bare' | 'file' | 'memory' | 'peer' | 'before', () => Promise<IngestPass>>);
      const what = `${path.what}, SQLite file store (node:sqlite, WAL); ${loadWhat(path.load)}`;
      const rate = (xs: IngestPass[]) => median(xs.map((x) => x.rate));
      const vs = (base: IngestPass[], k: 'rate' | 'main' | 'all' = 'rate') =>
        runs.file.map((r, i) => r[k] / base[i]![k]);
      if (peer)
        figures.push(
          figure({
            name: `relay-ingest-${path.id}-vs-reference`,
            what,
            unit: 'events/s',
            value: rate(runs.file),
            baseline: rate(runs.peer),
            baselineWhat: 'the AEP reference relay (in memory), same load',
            ratios: vs(runs.peer),
            goal: '>= 2',
          }),
        );
      figures.push(
        figure({
          name: `relay-ingest-${path.id}`,
          what,
          unit: 'events/s',
          value: rate(runs.file),
          baseline: rate(runs.bare),
          baselineWhat: 'bare broadcaster (no parse, check or store), same load',
          ratios: vs(runs.bare),
          goal: '>= 0.8',
        }),
        figure({
          name: `relay-ingest-${path.id}-vs-memory`,
          what: `the same, SQLite file store vs this relay's in-memory store`,
          unit: 'events/s',
          value: rate(runs.file),
          baseline: rate(runs.memory),
          baselineWhat: 'this relay with --memory, same load',
          ratios: vs(runs.memory),
        }),
      );
      if (paired)
        figures.push(
          figure({
            name: `relay-ingest-${path.id}-vs-before`,
            what: `${what}, against the relay of the checkout before`,
            unit: 'events/s',
            value: rate(runs.file),
            baseline: rate(runs.before),
            baselineWhat: `the same load through the relay of the checkout AEP_BENCH_BEFORE_DIR names (${beforeCommit()})`,
            ratios: vs(runs.before),
          }),
          ...(runs.file.every((r) => Number.isFinite(r.all)) && runs.before.every((r) => Number.isFinite(r.all))
            ? [
                figure({
                  name: `relay-ingest-${path.id}-cpu-vs-before`,
                  what: `relay CPU per event, all threads, over the same load (${path.what}), against the checkout before`,
                  unit: 'µs CPU',
                  value: median(runs.file.map((r) => r.all)),
                  baseline: median(runs.before.map((r) => r.all)),
                  baselineWhat: `the relay of the checkout AEP_BENCH_BEFORE_DIR names (${beforeCommit()}), all its threads`,
                  ratios: vs(runs.before, 'all'),
                }),
              ]
            : []),
        );
      if (runs.file.every((r) => Number.isFinite(r.main)))
        for (const k of ['main', 'all'] as const)
          figures.push(
            figure({
              name: `relay-ingest-${path.id}-cpu-${k}`,
              what: `relay CPU per event over the same load (${path.what}), ${k === 'main' ? 'its event-loop thread' : 'all its threads (store writer and GC included)'}`,
              unit: 'µs CPU',
              value: median(runs.file.map((r) => r[k])),
              baseline: median(runs.bare.map((r) => r[k])),
              baselineWhat: `bare broadcaster, ${k === 'main' ? 'its event-loop thread' : 'all its threads'}`,
              ratios: vs(runs.bare, k),
            }),
          );
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
