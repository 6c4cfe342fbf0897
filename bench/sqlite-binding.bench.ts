// The relay's file store on the built-in node:sqlite against the same relay on better-sqlite3 (the
// binding it used before, a native module), store on, interleaved in one run: ingest → fan-out
// rate and the command round trip's p50 and p99 under a background stream (bench/lib/relay-passes.ts),
// and the store's own CPU per admitted event (what the writer thread spends, measured in this
// process: the relay figures move with the load of a shared machine, this one much less).
// better-sqlite3 is no dependency: it is loaded from AEP_BENCH_BETTER_SQLITE3_DIR, and without it
// the rows say so and measure nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RelayStore } from '../src/relay/store.js';
import { openDatabase as nodeSqlite, type OpenDatabase } from '../src/relay/sqlite.js';
import { betterSqlite3Dir, betterSqlite3Unusable, openDatabase as betterSqlite3 } from './lib/better-sqlite3.js';
import { tsNode } from './lib/proc.js';
import { commands, COMMANDS, fanout, fanoutWhat, TOKEN } from './lib/relay-passes.js';
import { interleave, median } from './lib/stats.js';
import { figure, ROUNDS, type BenchFigure } from './types.js';

const BASE = 'the same relay, file store on better-sqlite3 12.6.2';
const ADMITTED = 20_000;
const BATCH = 100;
const VS = 'node:sqlite vs better-sqlite3';
const UNDER_STREAM = 'instruct → ack under a background stream into the file store';
const ROWS = [
  {
    name: 'relay-fanout-node-sqlite',
    what: `relay ingest → fan-out, file store on ${VS}; ${fanoutWhat}`,
    unit: 'events/s',
  },
  { name: 'relay-command-p50-node-sqlite', what: `${UNDER_STREAM}, ${VS}, p50 of ${COMMANDS}`, unit: 'ms' },
  { name: 'relay-command-p99-node-sqlite', what: `${UNDER_STREAM}, ${VS}, p99 of ${COMMANDS}`, unit: 'ms' },
  {
    name: 'store-admit-cpu-node-sqlite',
    what: `file store CPU per admitted event, ${ADMITTED} events in batches of ${BATCH} (one transaction each), ${VS}`,
    unit: 'µs CPU',
  },
] as const;

/** The writer's work alone: batches admitted into a fresh file store, CPU per event. */
function admitCpu(open: OpenDatabase, dir: string): number {
  const s = RelayStore.open(
    { path: join(dir, `admit-${Math.random().toString(36).slice(2)}.db`), checkpoint: false },
    open,
  );
  const raw = JSON.stringify({ aep: '0.1', type: 'progress.status', data: { phase: 'x'.repeat(200) } });
  let seq = 0;
  const t0 = process.cpuUsage();
  for (let b = 0; b < ADMITTED / BATCH; b += 1) {
    s.admitAll(
      Array.from({ length: BATCH }, () => ({
        session: `s${seq % 7}`,
        source: 'src',
        id: `e${seq}`,
        epoch: 0,
        seq: seq++,
        raw,
      })),
    );
  }
  const d = process.cpuUsage(t0);
  void s.close();
  return (d.user + d.system) / ADMITTED;
}

export default async function sqliteBindingBench(): Promise<BenchFigure[]> {
  const absent =
    betterSqlite3Dir() === undefined
      ? 'absent: set AEP_BENCH_BETTER_SQLITE3_DIR to a directory better-sqlite3 resolves in (docs/benchmarks.md)'
      : betterSqlite3Unusable();
  if (absent !== undefined) {
    return ROWS.map((r) => figure({ ...r, value: NaN, baseline: NaN, baselineWhat: `${BASE} (absent)`, note: absent }));
  }
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-sqlite-'));
  let n = 0;
  const relay = (engine?: 'better-sqlite3') => () =>
    tsNode('servers/relay.ts', { store: join(dir, `relay-${n++}.db`), token: TOKEN, ...(engine ? { engine } : {}) });
  try {
    // One discarded pass each warms the disk cache and the module cache.
    await fanout(relay())();
    await fanout(relay('better-sqlite3'))();
    const f = await interleave(ROUNDS, { node: fanout(relay()), better: fanout(relay('better-sqlite3')) });
    const c = await interleave(ROUNDS, {
      node: commands(relay(), false),
      better: commands(relay('better-sqlite3'), false),
    });
    const a = await interleave(ROUNDS, {
      node: async () => admitCpu(nodeSqlite, dir),
      better: async () => admitCpu(betterSqlite3, dir),
    });
    const [rate, p50, p99, admit] = ROWS;
    /** One row: the medians of both sides and the per-round ratios. */
    const vs = (row: (typeof ROWS)[number], node: number[], better: number[], baselineWhat = BASE) =>
      figure({
        ...row,
        value: median(node),
        baseline: median(better),
        baselineWhat,
        ratios: node.map((v, i) => v / better[i]!),
      });
    const q = (runs: { p50: number; p99: number }[], k: 'p50' | 'p99') => runs.map((r) => r[k]);
    return [
      vs(
        rate,
        f.node.map((r) => r.rate),
        f.better.map((r) => r.rate),
      ),
      vs(p50, q(c.node, 'p50'), q(c.better, 'p50')),
      vs(p99, q(c.node, 'p99'), q(c.better, 'p99')),
      vs(admit, a.node, a.better, 'the same store on better-sqlite3 12.6.2'),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
