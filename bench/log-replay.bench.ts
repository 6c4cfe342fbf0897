// Log replay at start: a 50,000-record adapter log opened as a starting adapter does (read,
// parse, rebuild every session, recover) against JSON.parse of each line of the same file, each
// in a fresh process, interleaved, medians.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleave, median } from './lib/stats.js';
import { LoadTimeout, runLoad } from './lib/proc.js';
import { figure, ROUNDS, type BenchFigure } from './types.js';

const RECORDS = Number(process.env.BENCH_REPLAY_RECORDS ?? 50_000);
/** A replay slower than this is reported as this long, with a note (the parse was quadratic once). */
const LIMIT_MS = 60_000;

export default async function logReplay(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-replay-'));
  try {
    const master = join(dir, 'master.jsonl');
    const made = await runLoad<{ records: number }>('load/replay.ts', { path: master, mode: 'make', records: RECORDS });
    let k = 0;
    let slow = false;
    // Replay opens the log for appending, so each pass gets its own copy.
    const replay = async () => {
      const path = join(dir, `copy-${k++}.jsonl`);
      copyFileSync(master, path);
      try {
        return (await runLoad<{ ms: number }>('load/replay.ts', { path, mode: 'replay' }, LIMIT_MS)).ms;
      } catch (err) {
        if (!(err instanceof LoadTimeout)) throw err;
        slow = true;
        return LIMIT_MS;
      }
    };
    const parse = async () => (await runLoad<{ ms: number }>('load/replay.ts', { path: master, mode: 'parse' })).ms;
    const runs = await interleave(ROUNDS, { parse, replay });
    return [
      figure({
        name: 'log-replay',
        what: `open + replay + recover of a ${made.records.toLocaleString('en')}-record adapter log in a fresh process`,
        unit: 'ms',
        value: median(runs.replay),
        baseline: median(runs.parse),
        baselineWhat: 'JSON.parse of every line of the same file, same run',
        ratios: runs.replay.map((v, i) => v / runs.parse[i]!),
        goal: '<= 2',
        ...(slow
          ? {
              note: `a replay did not finish within ${LIMIT_MS / 1000} s and counts as ${LIMIT_MS / 1000} s (a lower bound): parseLog measures each good prefix again per line (quadratic)`,
            }
          : {}),
      }),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
