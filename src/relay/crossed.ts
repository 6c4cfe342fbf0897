// Answers to commands (outcome events) that reach a node of a fabric twice: once as the copy the
// node that received them sends at once, once from the history feed after that node stored them.
// Whichever comes first is fanned out; the other is dropped here, so a sender waiting on this
// node hears the answer as early as one on the receiving node, and once.

/** Keys held at most: enough for every answer in flight, bounded whatever arrives only once. */
export const CROSSED_CAP = 4096;

export class CrossedAnswers {
  private readonly seen = new Set<string>();

  constructor(private readonly cap = CROSSED_CAP) {}

  /** True the first time an answer arrives; false for its second copy, which is then forgotten. */
  first(source: string, id: string): boolean {
    const key = `${source}\n${id}`;
    if (this.seen.delete(key)) return false;
    this.seen.add(key);
    // A Set iterates in insertion order: the oldest key goes first.
    if (this.seen.size > this.cap) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}
