// Small statistics for bench figures: medians and quantiles over samples, and the interleaving
// that makes a figure a ratio to a baseline measured under the same machine load.

export const quantile = (xs: readonly number[], q: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

export const median = (xs: readonly number[]): number => quantile(xs, 0.5);

/**
 * Runs `rounds` rounds of every side in turn (A, B, A, B, …) and returns each side's results in
 * round order. Interleaving spreads a burst of load from elsewhere on a shared machine over all
 * sides alike, so the median ratio stays meaningful when absolute times are noisy.
 */
export async function interleave<S extends Record<string, () => Promise<unknown>>>(
  rounds: number,
  sides: S,
): Promise<{ [K in keyof S]: Awaited<ReturnType<S[K]>>[] }> {
  const keys = Object.keys(sides) as (keyof S & string)[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as unknown[]])) as Record<keyof S, unknown[]>;
  for (let r = 0; r < rounds; r += 1) {
    // Alternate which side goes first, so neither always runs on a warmer (or colder) machine.
    const order = r % 2 === 0 ? keys : [...keys].reverse();
    for (const k of order) out[k].push(await sides[k]!());
  }
  return out as { [K in keyof S]: Awaited<ReturnType<S[K]>>[] };
}
