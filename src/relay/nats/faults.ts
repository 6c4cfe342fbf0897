// D38 on JetStream: whether this node can write now, said once when it stops and once when it
// resumes. Two ways to lose it: the connection (the client reconnects by itself) and writes that
// JetStream does not confirm while connected (a stream leader lost with its server, until the
// cluster elects another). Each stream is followed on its own: the commands stream without a
// leader while the events stream has one is one outage until the commands stream answers, not
// one per command. While writes fail, a probe asks each failing stream for its leader every
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

/**
 * The streams a node writes: history (`AEP_EVENTS`) and forwarded commands (`AEP_CMD`). Each
 * has its own leader, so one may take writes while the other has none.
 */
export type StreamKind = 'events' | 'commands';

const STREAM_WORDS: Record<StreamKind, string> = {
  events: 'a write',
  commands: 'a forwarded command',
};

export class Faults {
  private disconnected: { server: string; since: number } | undefined;
  /** Per stream whose write was not confirmed, why; until that stream confirms one (or its probe answers). */
  private readonly failing = new Map<StreamKind, { reason: string; since: number }>();
  private down: number | undefined;
  private probing: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: (line: string) => void,
    /** Resolves when the stream answers with a leader; rejects otherwise. */
    private readonly probe: (stream: StreamKind) => Promise<void>,
  ) {}

  /** Why writes (to `stream`, or to any stream when absent) cannot succeed now, or undefined. */
  reason(stream?: StreamKind): string | undefined {
    const offline = this.offline();
    if (offline !== undefined) return offline;
    for (const [kind, f] of this.failing)
      if (stream === undefined || stream === kind)
        return `JetStream did not confirm ${STREAM_WORDS[kind]}: ${f.reason}`;
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
    // A write that failed meanwhile stays failing until its stream answers again.
    if (this.failing.size > 0) this.startProbe();
    this.changed();
  }

  /** A write to `stream` was not confirmed (timeout, no responders, no leader). */
  writeFailed(err: Error, stream: StreamKind = 'events'): void {
    if (this.disconnected === undefined && !this.failing.has(stream))
      this.failing.set(stream, { reason: describe(err), since: Date.now() });
    this.startProbe();
    this.changed();
  }

  /** `stream` confirmed a write: it has a leader (another stream's outage is not over for that). */
  writeConfirmed(stream: StreamKind = 'events'): void {
    if (!this.failing.delete(stream)) return;
    this.changed();
  }

  stop(): void {
    clearTimeout(this.probing);
    this.probing = undefined;
  }

  /** Asks each failing stream for its leader, every PROBE_MS, until none is failing. */
  private startProbe(): void {
    if (this.probing !== undefined) return;
    this.probing = setTimeout(() => {
      this.probing = undefined;
      if (this.disconnected !== undefined || this.failing.size === 0) return;
      const kinds = [...this.failing.keys()];
      void Promise.allSettled(
        kinds.map((k) =>
          this.probe(k).then(
            () => this.writeConfirmed(k),
            () => undefined,
          ),
        ),
      ).then(() => {
        if (this.failing.size > 0) this.startProbe();
      });
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
