// Relay command round trip with the SQLite file store on, against a baseline interleaved in the
// same run: the AEP reference relay (in memory) when AEP_PEER_RELAY_DIR holds its files, a bare
// `ws` broadcaster otherwise (see servers/peer-relay.ts). Every server runs in its own process,
// the load generator in its own: consumer → relay → acking target → relay → consumer while
// another session streams events into the store all along, p50 and p99. The ingest paths'
// figures are bench/relay-ingest.bench.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleave, median } from './lib/stats.js';
import { tsNode } from './lib/proc.js';
import { commands, COMMANDS, TOKEN } from './lib/relay-passes.js';
import { peerRelayDir, peerRelayHint, startPeerRelay } from './servers/peer-relay.js';
import { figure, ROUNDS, type BenchFigure } from './types.js';

export default async function relayBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-relay-'));
  const peer = peerRelayDir();
  if (!peer) process.stderr.write(`bench: ${peerRelayHint}\n`);
  let n = 0;
  const ours = () => tsNode('servers/relay.ts', { store: join(dir, `relay-${n++}.db`), token: TOKEN });
  const base = peer ? () => startPeerRelay(peer, TOKEN) : () => tsNode('servers/ws-broadcast.ts', {});
  const baseName = peer
    ? 'the AEP reference relay (in memory), same load'
    : 'bare ws broadcast server, same sockets and frames';
  const note = peer ? undefined : `baseline is the bare ws broadcast: ${peerRelayHint}`;
  try {
    // One discarded pass each warms the disk cache and the module cache.
    await commands(ours, false)();
    const c = await interleave(ROUNDS, { base: commands(base, !peer), file: commands(ours, false) });
    return [
      ...(['p50', 'p99'] as const).map((q) =>
        figure({
          name: `relay-command-${q}`,
          what: `instruct → ack through the relay to an acking target while another session streams events into the SQLite store, ${q} of ${COMMANDS}`,
          unit: 'ms',
          value: median(c.file.map((r) => r[q])),
          baseline: median(c.base.map((r) => r[q])),
          baselineWhat: baseName,
          ratios: c.file.map((r, i) => r[q] / c.base[i]![q]),
          ...(peer ? { goal: '<= 1.2' } : {}),
          ...(note ? { note } : {}),
        }),
      ),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
