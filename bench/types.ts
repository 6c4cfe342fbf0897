// One benchmark figure: a measured value beside a baseline run in the same process, as a ratio.
export interface BenchFigure {
  /** Short stable name, e.g. `hook-round-trip-p50`. */
  name: string;
  /** What was measured, one line. */
  what: string;
  unit: string;
  value: number;
  /** The same quantity for the baseline run in the same script. */
  baseline: number;
  baselineWhat: string;
  /** value / baseline. */
  ratio: number;
}

export type BenchModule = { default: () => Promise<BenchFigure[]> };

export const figure = (f: Omit<BenchFigure, 'ratio'>): BenchFigure => ({ ...f, ratio: f.baseline === 0 ? NaN : f.value / f.baseline });
