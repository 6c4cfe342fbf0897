// Every bench module, by id. `npm run bench` runs them all; `npm run bench -- hook relay` runs
// those whose id (or file) is named. To add a figure: write `bench/<name>.bench.ts` exporting a
// default `() => Promise<BenchFigure[]>` (servers and load generators in their own processes,
// see bench/lib/proc.ts; each figure a ratio to a baseline interleaved in the same run) and add
// one line here.
import type { BenchModule } from './types.js';

export interface BenchEntry {
  id: string;
  file: string;
  load: () => Promise<BenchModule>;
  /** The relay store its figures measure, named in the table. */
  store?: string;
}

const SQLITE = 'node:sqlite file (WAL)';

export const registry: BenchEntry[] = [
  { id: 'hook', file: 'hook-round-trip.bench.ts', load: () => import('./hook-round-trip.bench.js') },
  { id: 'accept', file: 'accept-deliver.bench.ts', load: () => import('./accept-deliver.bench.js') },
  { id: 'lane', file: 'native-lane.bench.ts', load: () => import('./native-lane.bench.js') },
  { id: 'relay', file: 'relay.bench.ts', load: () => import('./relay.bench.js'), store: SQLITE },
  { id: 'ingest', file: 'relay-ingest.bench.ts', load: () => import('./relay-ingest.bench.js'), store: SQLITE },
  {
    id: 'sqlite',
    file: 'sqlite-binding.bench.ts',
    load: () => import('./sqlite-binding.bench.js'),
    store: `${SQLITE} vs better-sqlite3`,
  },
  {
    id: 'nats',
    file: 'relay-nats.bench.ts',
    load: () => import('./relay-nats.bench.js'),
    store: `NATS JetStream vs ${SQLITE}`,
  },
  { id: 'instruct', file: 'instruct-ack.bench.ts', load: () => import('./instruct-ack.bench.js'), store: SQLITE },
  { id: 'cli', file: 'cli-start.bench.ts', load: () => import('./cli-start.bench.js') },
  { id: 'cli-use', file: 'cli.bench.ts', load: () => import('./cli.bench.js') },
  { id: 'replay', file: 'log-replay.bench.ts', load: () => import('./log-replay.bench.js') },
  { id: 'restart', file: 'restart.bench.ts', load: () => import('./restart.bench.js') },
  { id: 'idle', file: 'idle-sessions.bench.ts', load: () => import('./idle-sessions.bench.js') },
  { id: 'suite', file: 'test-suite.bench.ts', load: () => import('./test-suite.bench.js') },
  { id: 'spawn', file: 'spawn.bench.ts', load: () => import('./spawn.bench.js') },
];
