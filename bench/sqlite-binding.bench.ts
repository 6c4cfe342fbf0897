// The relay's file store on the built-in node:sqlite against the same relay on better-sqlite3 (the
// binding it used before, a native module), store on, interleaved in one run: ingest → fan-out
// rate and the command round trip's p50 and p99 under a background stream (bench/lib/relay-passes.ts).
// better-sqlite3 is no dependency: it is loaded from AEP_BENCH_BETTER_SQLITE3_DIR, and without it
// the rows say so and measure nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { betterSqlite3Dir } from './lib/better-sqlite3.js';
import { tsNode } from './lib/proc.js';
import { commands, COMMANDS, fanout, fanoutWhat, TOKEN } from './lib/relay-passes.js';
import { interleave, median } from './lib/stats.js';
import { figure, ROUNDS, type BenchFigure } from './types.js';

const BASE = 'the same relay, file store on better-sqlite3 12.6.2';
const ROWS = [
  { name: 'relay-fanout-node-sqlite', what: `relay ingest → fan-out, file store on node:sqlite vs better-sqlite3; ${fanoutWhat}`, unit: 'events/s' },
  { name: 'relay-command-p50-node-sqlite', what: `instruct → ack under a background stream into the file store, node:sqlite vs better-sqlite3, p50 of ${COMMANDS}`, unit: 'ms' },
  { name: 'relay-command-p99-node-sqlite', what: `instruct → ack under a background stream into the file store, node:sqlite vs better-sqlite3, p99 of ${COMMANDS}`, unit: 'ms' },
] as const;

export default async function sqliteBindingBench(): Promise<BenchFigure[]> {
  if (betterSqlite3Dir() === undefined) {
    const note = 'absent: set AEP_BENCH_BETTER_SQLITE3_DIR to a directory better-sqlite3 resolves in (README, "Conformance and benchmarks")';
    return ROWS.map((r) => figure({ ...r, value: NaN, baseline: NaN, baselineWhat: `${BASE} (absent)`, note }));
  }
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-sqlite-'));
  let n = 0;
  const relay = (engine?: 'better-sqlite3') => () => tsNode('servers/relay.ts', { store: join(dir, `relay-${n++}.db`), token: TOKEN, ...(engine ? { engine } : {}) });
  try {
    // One discarded pass each warms the disk cache and the module cache.
    await fanout(relay())();
    await fanout(relay('better-sqlite3'))();
    const f = await interleave(ROUNDS, { node: fanout(relay()), better: fanout(relay('better-sqlite3')) });
    const c = await interleave(ROUNDS, { node: commands(relay(), false), better: commands(relay('better-sqlite3'), false) });
    const [rate, p50, p99] = ROWS;
    return [
      figure({ ...rate, value: median(f.node.map((r) => r.rate)), baseline: median(f.better.map((r) => r.rate)), baselineWhat: BASE, ratios: f.node.map((r, i) => r.rate / f.better[i]!.rate) }),
      ...([[p50, 'p50'], [p99, 'p99']] as const).map(([row, q]) => figure({
        ...row, value: median(c.node.map((r) => r[q])), baseline: median(c.better.map((r) => r[q])), baselineWhat: BASE, ratios: c.node.map((r, i) => r[q] / c.better[i]![q]),
      })),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
