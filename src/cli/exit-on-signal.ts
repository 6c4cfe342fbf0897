// What a serving command does on Ctrl+C or SIGTERM: it closes what it serves, then exits 0, or 1
// when closing failed or outlasted its grace.

/** Closes on the first SIGINT or SIGTERM and exits; with `graceMs`, exits 1 anyway once that passed. */
export function exitOnSignal(close: () => Promise<void>, graceMs?: number): void {
  const stop = () => {
    if (graceMs !== undefined) setTimeout(() => process.exit(1), graceMs).unref();
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
