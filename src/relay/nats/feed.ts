// A consumer this node reads for as long as it runs (the session index and fan-out, the claims,
// its forwarded commands), reopened by the node itself when it goes quiet. An ordered consumer
// is one server's (R1, in memory): when that server dies the client's own recovery asks it for
// info until it answers, which a dead server never does (a minute and more of silence). Here two
// missed heartbeats (FEED_EXPIRES_MS / 2 each), a lost consumer or a reconnect reopen it after
// the last stream sequence seen, so nothing is skipped and nothing already seen comes twice.
import type { Consumer, JsMsg } from '@nats-io/jetstream';

/** A pull's lifetime; the server's idle heartbeat is half of it (the client library's rule). */
export const FEED_EXPIRES_MS = 2000;
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 2000;

export interface FeedSpec {
  /** What it is, for the log lines: "the session index", "the claims", "forwarded commands". */
  what: string;
  /** The consumer to read: from the start (`after` 0) or after the stream sequence `after`. */
  open(after: number): Promise<Consumer>;
  onMessage(m: JsMsg): void;
}

export class Feed {
  private last = 0;
  private generation = 0;
  private stopped = false;
  private stopCurrent: () => void = () => {};
  private retryMs = RETRY_FIRST_MS;
  private lostAt: number | undefined;

  constructor(
    private readonly spec: FeedSpec,
    private readonly log: (line: string) => void,
  ) {}

  /** Opens the first consumer (a failure here is the caller's: the relay does not start). */
  async start(): Promise<void> {
    await this.open();
  }

  /** Reopens after the last sequence seen (the connection came back, or it went quiet). */
  restart(why: string): void {
    if (this.stopped) return;
    if (this.lostAt === undefined) {
      this.lostAt = Date.now();
      this.log(`relay: nats: ${this.spec.what} went quiet (${why}); reopening its consumer`);
    }
    this.stopCurrent();
    this.open().catch((err: Error) => {
      const wait = this.retryMs;
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
      setTimeout(() => this.restart(err.message), wait).unref();
    });
  }

  stop(): void {
    this.stopped = true;
    this.generation += 1;
    this.stopCurrent();
  }

  private async open(): Promise<void> {
    const gen = ++this.generation;
    const consumer = await this.spec.open(this.last);
    const msgs = await consumer.consume({ expires: FEED_EXPIRES_MS });
    if (gen !== this.generation) {
      msgs.stop();
      return;
    }
    this.stopCurrent = () => msgs.stop();
    if (this.lostAt !== undefined) {
      this.log(`relay: nats: ${this.spec.what} resumed after ${((Date.now() - this.lostAt) / 1000).toFixed(1)} s`);
      this.lostAt = undefined;
    }
    this.retryMs = RETRY_FIRST_MS;
    void (async () => {
      for await (const s of msgs.status()) {
        if (gen !== this.generation) return;
        const quiet = (s.type === 'heartbeats_missed' && s.count >= 2) || s.type === 'consumer_not_found' || s.type === 'consumer_deleted';
        if (quiet) return this.restart(s.type.replace(/_/g, ' '));
      }
    })().catch(() => {});
    void (async () => {
      for await (const m of msgs) {
        if (gen !== this.generation) return;
        this.last = m.seq;
        this.spec.onMessage(m);
      }
    })().catch((err: Error) => {
      if (gen === this.generation) this.restart(err.message);
    });
  }
}
