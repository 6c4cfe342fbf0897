// Holding a mock model API's replies: a test asks to hold the next request that matches, learns
// when it arrived, and lets the reply go out when it has queued what it wants to sequence before.

/** A held request: `arrived` resolves when it comes in; the reply waits for `release()`. */
export interface Hold<R> {
  arrived: Promise<R>;
  release(): void;
}

export interface RequestHolds<R> {
  /** Holds the next request that matches (any request when no predicate). */
  hold(match?: (r: R) => boolean): Hold<R>;
  /** Resolves at once, or when the test releases the first hold that matches `r`. */
  pass(r: R): Promise<void>;
  /** Releases every hold ever made, so closing never waits on one. */
  releaseAll(): void;
}

export function requestHolds<R>(): RequestHolds<R> {
  const holds: { match: (r: R) => boolean; arrive: (r: R) => void; gate: Promise<void> }[] = [];
  const releases: (() => void)[] = [];
  return {
    hold(match = () => true) {
      let arrive!: (r: R) => void;
      let release!: () => void;
      const arrived = new Promise<R>((r) => (arrive = r));
      const gate = new Promise<void>((r) => (release = r));
      holds.push({ match, arrive, gate });
      releases.push(release);
      return { arrived, release };
    },
    async pass(r) {
      const i = holds.findIndex((h) => h.match(r));
      if (i < 0) return;
      const [h] = holds.splice(i, 1);
      h!.arrive(r);
      await h!.gate;
    },
    releaseAll() {
      for (const release of releases) release();
    },
  };
}
