// Relay command round trip with the SQLite file store on, against a baseline interleaved in the
// same run: the AEP reference relay (in memory) when AEP_PEER_RELAY_DIR holds its files, a bare
// `ws` broadcaster otherwise (see servers/peer-relay.ts). Every server runs in its own process,
// the load generator in its own: consumer → relay → acking target → relay → consumer while
// another session streams events into the store all along, p50 and p99. With the reference
// relay at hand, two more pairs split the gap: this relay on `--memory` under the same stream
// (what is left without the file's commit) and both relays without the stream (the command
// path alone). The ingest paths' figures are bench/relay-ingest.bench.ts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleave, median } from './lib/stats.js';
import { tsNode } from './lib/proc.js';
import { commands, COMMANDS, TOKEN } from './lib/relay-passes.js';
import { beforeCommit, beforeDir, startBefore } from './lib/before.js';
import { peerRelayDir, peerRelayHint, startPeerRelay } from './servers/peer-relay.js';
import { figure, ROUNDS, type BenchFigure } from './types.js';

type Pass = { p50: number; p99: number };

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
    const memory = () => tsNode('servers/relay.ts', { store: ':memory:', token: TOKEN });
    // The same relay server of the checkout AEP_BENCH_BEFORE_DIR names, for a before-and-after pair in one run.
    const before = () =>
      startBefore('relay.ts', { store: join(dir, `before-${n++}.db`), token: TOKEN }, ['socketUrl', 'url']);
    const c = await interleave(ROUNDS, {
      ...(beforeDir() !== undefined ? { before: commands(before, false) } : {}),
      base: commands(base, !peer),
      file: commands(ours, false),
      ...(peer
        ? {
            memory: commands(memory, false),
            quietBase: commands(base, false, { quiet: true }),
            quietFile: commands(ours, false, { quiet: true }),
          }
        : {}),
    } as Record<'base' | 'file' | 'memory' | 'quietBase' | 'quietFile' | 'before', () => Promise<Pass>>);
    const load = 'while another session streams events into the SQLite store';
    const pair = (
      name: string,
      what: string,
      runs: Pass[],
      base: Pass[],
      baseWhat: string,
      opts: { goal?: string; store?: string } = {},
    ) =>
      (['p50', 'p99'] as const).map((q) =>
        figure({
          name: name.replace('{q}', q),
          what: what.replace('{q}', `${q} of ${COMMANDS}`),
          unit: 'ms',
          value: median(runs.map((r) => r[q])),
          baseline: median(base.map((r) => r[q])),
          baselineWhat: baseWhat,
          ratios: runs.map((r, i) => r[q] / base[i]![q]),
          ...(opts.goal ? { goal: opts.goal } : {}),
          ...(opts.store ? { store: opts.store } : {}),
          ...(note ? { note } : {}),
        }),
      );
    return [
      ...pair(
        'relay-command-{q}',
        `instruct → ack through the relay to an acking target ${load}, {q}`,
        c.file,
        c.base,
        baseName,
        peer ? { goal: '<= 1.2' } : {},
      ),
      ...(beforeDir() !== undefined
        ? pair(
            'relay-command-vs-before-{q}',
            `instruct → ack through this relay against the same through the relay of the checkout before (${beforeCommit()}) ${load}, {q}`,
            c.file,
            c.before,
            `the same commands through the relay of the checkout AEP_BENCH_BEFORE_DIR names (${beforeCommit()})`,
          )
        : []),
      ...(peer
        ? [
            ...pair(
              'relay-command-memory-{q}',
              "instruct → ack through this relay on --memory (SQLite in memory on the relay's thread: no file, no commit to wait for) to an acking target while another session streams events, {q}",
              c.memory,
              c.base,
              baseName,
              { store: 'node:sqlite :memory: (--memory)' },
            ),
            ...pair(
              'relay-command-quiet-{q}',
              'instruct → ack through the relay (SQLite file store) to an acking target, no background stream, {q}',
              c.quietFile,
              c.quietBase,
              'the AEP reference relay (in memory), no background stream',
            ),
          ]
        : []),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
