// A counting gate: at most `size` holders at once, the rest wait in arrival order. The consumer
// core uses it to keep its history replays inside the relay's subscriptions-per-connection limit.
export class Slots {
  private used = 0;
  private readonly queue: (() => void)[] = [];

  constructor(readonly size: number) {}

  /** Resolves with the release function once a slot is free. */
  async take(): Promise<() => void> {
    if (this.used >= this.size) await new Promise<void>((resolve) => this.queue.push(resolve));
    else this.used += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.queue.shift();
      // The slot passes straight to the next waiter; only with none waiting is it freed.
      if (next !== undefined) next();
      else this.used -= 1;
    };
  }
}
