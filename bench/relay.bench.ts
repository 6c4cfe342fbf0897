// Relay figures with the SQLite file store on, each against a baseline interleaved in the same
// run: the AEP reference relay (in memory) when AEP_PEER_RELAY_DIR holds its files, a bare `ws`
// broadcaster otherwise (see servers/peer-relay.ts). Every server runs in its own process, the
// load generators in theirs.
//  - ingest → fan-out: one emitter socket, 2 subscriber sockets, events/s, and the server's CPU
//    per event over the load (its event-loop thread, and all its threads), read from /proc: the
//    rate is bounded by the load generator too, the CPU a server spends per event is its own;
//  - command round trip (consumer → relay → acking target → relay → consumer) while another
//    session streams events into the store all along, p50 and p99.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleave, median, quantile } from './lib/stats.js';
import { childCpuMs, runLoad, tsNode, type Child } from './lib/proc.js';
import { peerRelayDir, peerRelayHint, startPeerRelay } from './servers/peer-relay.js';
import { figure, ROUNDS, type BenchFigure } from './types.js';

const EVENTS = 20_000;
const SUBSCRIBERS = 2;
const WINDOW = 2_000;
const COMMANDS = 300;
const TOKEN = 'bench-token';
const TYPE = 'x.bench-target.control.instruct';

/** Starts a server, runs one load against it, stops it: every pass starts from a fresh process. */
async function once<R>(startServer: () => Promise<Child>, load: (socketUrl: string, server: Child) => Promise<R>): Promise<R> {
  const server = await startServer();
  try {
    return await load(server.ready.socketUrl as string, server);
  } finally {
    await server.stop();
  }
}

export default async function relayBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-relay-'));
  const peer = peerRelayDir();
  if (!peer) process.stderr.write(`bench: ${peerRelayHint}\n`);
  let n = 0;
  const ours = () => tsNode('servers/relay.ts', { store: join(dir, `relay-${n++}.db`), token: TOKEN });
  const ourMemory = () => tsNode('servers/relay.ts', { store: ':memory:', token: TOKEN });
  const base = peer ? () => startPeerRelay(peer, TOKEN) : () => tsNode('servers/ws-broadcast.ts', {});
  const baseName = peer ? 'the AEP reference relay (in memory), same load' : 'bare ws broadcast server, same sockets and frames';
  const note = peer ? undefined : `baseline is the bare ws broadcast: ${peerRelayHint}`;
  try {
    const fanout = (start: () => Promise<Child>) => () =>
      once(start, async (url, server) => {
        const before = childCpuMs(server.proc.pid!);
        const r = await runLoad<{ rate: number }>('load/ws-fanout.ts', { url, token: TOKEN, events: EVENTS, subscribers: SUBSCRIBERS, window: WINDOW, session: 'bench-fanout' });
        const after = childCpuMs(server.proc.pid!);
        const perEvent = (k: 'all' | 'main') => (before && after ? ((after[k] - before[k]) * 1000) / EVENTS : NaN);
        return { rate: r.rate, main: perEvent('main'), all: perEvent('all') };
      });
    const commands = (start: () => Promise<Child>, bare: boolean) => () =>
      once(start, (url) => runLoad<{ ms: number[] }>('load/ws-command.ts', { url, token: TOKEN, n: COMMANDS, warmup: 30, target: 'self', type: TYPE, session: 'bench-cmd', background: true, bare })
        .then((r) => ({ p50: quantile(r.ms, 0.5), p99: quantile(r.ms, 0.99) })));

    // One discarded pass each warms the disk cache and the module cache.
    await fanout(ours)();
    await fanout(base)();
    const f = await interleave(ROUNDS, { base: fanout(base), file: fanout(ours), memory: fanout(ourMemory) });
    const c = await interleave(ROUNDS, { base: commands(base, !peer), file: commands(ours, false) });
    const what = `${EVENTS} events, 1 emitter socket, ${SUBSCRIBERS} subscriber sockets, at most ${WINDOW} in flight`;
    const rate = (xs: { rate: number }[]) => xs.map((x) => x.rate);
    const cpu = (['main', 'all'] as const).filter(() => f.file.every((r) => Number.isFinite(r.main)));
    return [
      figure({
        name: 'relay-fanout-sqlite', what: `relay ingest → fan-out, SQLite file store (WAL); ${what}`, unit: 'events/s',
        value: median(rate(f.file)), baseline: median(rate(f.base)), baselineWhat: baseName, ratios: f.file.map((v, i) => v.rate / f.base[i]!.rate),
        ...(peer ? { goal: '>= 2' } : {}), ...(note ? { note } : {}),
      }),
      figure({
        name: 'relay-fanout-sqlite-vs-memory', what: `the same, SQLite file store vs this relay's in-memory store`, unit: 'events/s',
        value: median(rate(f.file)), baseline: median(rate(f.memory)), baselineWhat: 'this relay with --memory', ratios: f.file.map((v, i) => v.rate / f.memory[i]!.rate),
      }),
      ...cpu.map((k) => figure({
        name: `relay-fanout-cpu-${k}`,
        what: `relay CPU per fanned-out event over the same load, ${k === 'main' ? 'its event-loop thread' : 'all its threads (store writer, checkpointer and GC helpers included)'}, SQLite file store`,
        unit: 'µs CPU', value: median(f.file.map((r) => r[k])), baseline: median(f.base.map((r) => r[k])), baselineWhat: `${baseName}, ${k === 'main' ? 'its event-loop thread' : 'all its threads'}`,
        ratios: f.file.map((r, i) => r[k] / f.base[i]![k]!), ...(note ? { note } : {}),
      })),
      ...(['p50', 'p99'] as const).map((q) => figure({
        name: `relay-command-${q}`,
        what: `instruct → ack through the relay to an acking target while another session streams events into the SQLite store, ${q} of ${COMMANDS}`,
        unit: 'ms', value: median(c.file.map((r) => r[q])), baseline: median(c.base.map((r) => r[q])), baselineWhat: baseName,
        ratios: c.file.map((r, i) => r[q] / c.base[i]![q]), ...(q === 'p99' && peer ? { goal: '<= 1.2' } : {}), ...(note ? { note } : {}),
      })),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
