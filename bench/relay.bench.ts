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
import { interleave, median } from './lib/stats.js';
import { tsNode } from './lib/proc.js';
import { commands, COMMANDS, fanout, fanoutWhat, TOKEN } from './lib/relay-passes.js';
import { peerRelayDir, peerRelayHint, startPeerRelay } from './servers/peer-relay.js';
import { figure, ROUNDS, type BenchFigure } from './types.js';

export default async function relayBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-relay-'));
  const peer = peerRelayDir();
  if (!peer) process.stderr.write(`bench: ${peerRelayHint}\n`);
  let n = 0;
  const ours = () => tsNode('servers/relay.ts', { store: join(dir, `relay-${n++}.db`), token: TOKEN });
  const ourMemory = () => tsNode('servers/relay.ts', { store: ':memory:', token: TOKEN });
  const base = peer ? () => startPeerRelay(peer, TOKEN) : () => tsNode('servers/ws-broadcast.ts', {});
  const baseName = peer
    ? 'the AEP reference relay (in memory), same load'
    : 'bare ws broadcast server, same sockets and frames';
  const note = peer ? undefined : `baseline is the bare ws broadcast: ${peerRelayHint}`;
  try {
    // One discarded pass each warms the disk cache and the module cache.
    await fanout(ours)();
    await fanout(base)();
    const f = await interleave(ROUNDS, { base: fanout(base), file: fanout(ours), memory: fanout(ourMemory) });
    const c = await interleave(ROUNDS, { base: commands(base, !peer), file: commands(ours, false) });
    const what = fanoutWhat;
    const rate = (xs: { rate: number }[]) => xs.map((x) => x.rate);
    const cpu = (['main', 'all'] as const).filter(() => f.file.every((r) => Number.isFinite(r.main)));
    return [
      figure({
        name: 'relay-fanout-sqlite',
        what: `relay ingest → fan-out, SQLite file store (WAL); ${what}`,
        unit: 'events/s',
        value: median(rate(f.file)),
        baseline: median(rate(f.base)),
        baselineWhat: baseName,
        ratios: f.file.map((v, i) => v.rate / f.base[i]!.rate),
        ...(peer ? { goal: '>= 2' } : {}),
        ...(note ? { note } : {}),
      }),
      figure({
        name: 'relay-fanout-sqlite-vs-memory',
        what: `the same, SQLite file store vs this relay's in-memory store`,
        unit: 'events/s',
        value: median(rate(f.file)),
        baseline: median(rate(f.memory)),
        baselineWhat: 'this relay with --memory',
        ratios: f.file.map((v, i) => v.rate / f.memory[i]!.rate),
      }),
      ...cpu.map((k) =>
        figure({
          name: `relay-fanout-cpu-${k}`,
          what: `relay CPU per fanned-out event over the same load, ${k === 'main' ? 'its event-loop thread' : 'all its threads (store writer, checkpointer and GC helpers included)'}, SQLite file store`,
          unit: 'µs CPU',
          value: median(f.file.map((r) => r[k])),
          baseline: median(f.base.map((r) => r[k])),
          baselineWhat: `${baseName}, ${k === 'main' ? 'its event-loop thread' : 'all its threads'}`,
          ratios: f.file.map((r, i) => r[k] / f.base[i]![k]!),
          ...(note ? { note } : {}),
        }),
      ),
      ...(['p50', 'p99'] as const).map((q) =>
        figure({
          name: `relay-command-${q}`,
          what: `instruct → ack through the relay to an acking target while another session streams events into the SQLite store, ${q} of ${COMMANDS}`,
          unit: 'ms',
          value: median(c.file.map((r) => r[q])),
          baseline: median(c.base.map((r) => r[q])),
          baselineWhat: baseName,
          ratios: c.file.map((r, i) => r[q] / c.base[i]![q]),
          ...(q === 'p99' && peer ? { goal: '<= 1.2' } : {}),
          ...(note ? { note } : {}),
        }),
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
