// D38 on JetStream: whether this node can write now, said once when it stops and once when it
// resumes. Two ways to lose it: the connection (the client reconnects by itself) and writes that
// JetStream does not confirm while connected (a stream leader lost with its server, until the
// cluster elects another). While writes fail, a probe asks the events stream's leader every
// PROBE_MS (with a short timeout: a request no leader took is not answered by the next one), so
// `/healthz` says the recovery without waiting for traffic.

/** How long a write may wait for JetStream's confirmation, from the moment it was taken in. */
export const WRITE_DEADLINE_MS = 1500;
/** The shortest wait given to a publish (one that queued long gets at least this). */
export const MIN_PUBLISH_MS = 250;
const PROBE_MS = 250;

export const STORE_ADVICE =
  'Check that nats-server is running with -js and reachable (a cluster needs a majority of its servers for a leader); ' +
  'the relay reconnects and resumes by itself';

export class Faults {
  private disconnected: { server: string; since: number } | undefined;
  private failing: { reason: string; since: number } | undefined;
  private down: number | undefined;
  private probing: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: (line: string) => void,
    /** Resolves when the events stream answers with a leader; rejects otherwise. */
    private readonly probe: () => Promise<void>,
  ) {}

  /** Why writes cannot succeed now, or undefined. */
  reason(): string | undefined {
    const offline = this.offline();
    if (offline !== undefined) return offline;
    if (this.failing) return `JetStream did not confirm a write: ${this.failing.reason}`;
    return undefined;
  }

  /** Why nothing can be sent now (the connection is down), or undefined. */
  offline(): string | undefined {
    return this.disconnected && `NATS ${this.disconnected.server} is unreachable, reconnecting`;
  }

  lostConnection(server: string): void {
    this.disconnected ??= { server, since: Date.now() };
    this.changed();
  }

  reconnected(): void {
    this.disconnected = undefined;
    // A write that failed meanwhile stays failing until JetStream answers again.
    if (this.failing) this.startProbe();
    this.changed();
  }

  /** A write was not confirmed (timeout, no responders, no leader). */
  writeFailed(err: Error): void {
    if (this.disconnected === undefined) this.failing ??= { reason: describe(err), since: Date.now() };
    this.startProbe();
    this.changed();
  }

  writeConfirmed(): void {
    if (this.failing === undefined) return;
    this.failing = undefined;
    this.changed();
  }

  stop(): void {
    clearTimeout(this.probing);
    this.probing = undefined;
  }

  private startProbe(): void {
    if (this.probing !== undefined) return;
    this.probing = setTimeout(() => {
      this.probing = undefined;
      if (this.disconnected !== undefined || this.failing === undefined) return;
      this.probe().then(
        () => this.writeConfirmed(),
        () => this.startProbe(),
      );
    }, PROBE_MS);
    this.probing.unref();
  }

  private changed(): void {
    const reason = this.reason();
    if (reason !== undefined && this.down === undefined) {
      this.down = Date.now();
      this.log(
        `relay: nats: store unavailable (${reason}); ` +
          'events and commands are refused store-unavailable until it recovers',
      );
    } else if (reason === undefined && this.down !== undefined) {
      this.log(`relay: nats: store available again after ${((Date.now() - this.down) / 1000).toFixed(1)} s`);
      this.down = undefined;
    }
  }
}

/** A publish failure in words an operator can act on. */
export function describe(err: Error): string {
  const m = err.message;
  if (/no responders/i.test(m)) return 'no responders: the stream has no leader';
  if (/timeout/i.test(m)) return `no answer within ${WRITE_DEADLINE_MS / 1000} s`;
  return m;
}
