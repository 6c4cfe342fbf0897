// One benchmark figure: a measured value beside a baseline measured in the same run, as a ratio.
export interface BenchFigure {
  /** Short stable name, e.g. `hook-round-trip-p50`. */
  name: string;
  /** What was measured, one line. */
  what: string;
  unit: string;
  value: number;
  /** The same quantity for the baseline, measured in the same script, interleaved with `value`'s runs. */
  baseline: number;
  baselineWhat: string;
  /** Median of the per-round ratios when there are rounds, else value / baseline. */
  ratio: number;
  /** The goal for this ratio, e.g. `<= 1.3`, when it has one. */
  goal?: string;
  /** Whether `ratio` meets `goal`. */
  met?: boolean;
  /** Rounds behind the medians. */
  rounds?: number;
  /** A caveat printed under the table (e.g. which baseline stood in). */
  note?: string;
  /**
   * Set by bench/run.ts: the Node version that ran it, the 1-minute load average before and after
   * its module, the store it measured (its module's, unless the figure names its own).
   */
  node?: string;
  load?: [number, number];
  store?: string;
  /** From a quick (smoke) run: smaller loads. */
  quick?: boolean;
}

export type BenchModule = { default: () => Promise<BenchFigure[]> };

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

const meets = (ratio: number, goal: string): boolean => {
  const m = /^(<=|>=)\s*([\d.]+)$/.exec(goal.trim());
  if (!m) return false;
  return m[1] === '<=' ? ratio <= Number(m[2]) : ratio >= Number(m[2]);
};

export const figure = (f: Omit<BenchFigure, 'ratio' | 'met'> & { ratios?: number[] }): BenchFigure => {
  const { ratios, ...rest } = f;
  const ratio = ratios && ratios.length > 0 ? median(ratios) : f.baseline === 0 ? NaN : f.value / f.baseline;
  return {
    ...rest,
    ratio,
    ...(f.goal ? { met: meets(ratio, f.goal) } : {}),
    ...(ratios ? { rounds: ratios.length } : {}),
  };
};

/** `--quick` (or `BENCH_QUICK=1`): a smoke run, one round and smaller loads, a few minutes for the whole bench. */
export const QUICK = process.env.BENCH_QUICK === '1';

/** Rounds per figure (interleaved, medians): `BENCH_ROUNDS`, default 3 (1 in a quick run). */
export const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? (QUICK ? 1 : 3)));
