// A consumer this node reads for as long as it runs (the session index and fan-out, the claims,
// its forwarded commands), reopened by the node itself when it goes quiet. An ordered consumer
// is one server's (R1, in memory): when that server dies the client's own recovery asks it for
// info until it answers, which a dead server never does (a minute and more of silence). Here two
// missed heartbeats (FEED_EXPIRES_MS / 2 each), a lost consumer or a reconnect reopen it after
// the last stream sequence seen, so nothing is skipped and nothing already seen comes twice. A
// server killed with its unflushed tail restarts with a lower last sequence, and numbers new
// messages again from there: then the feed resumes from the time of the last message seen.
import { nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type Consumer, type ConsumerConfig, type JsMsg } from '@nats-io/jetstream';
import type { Engine } from './engine.js';

/** A pull's lifetime; the server's idle heartbeat is half of it (the client library's rule). */
const FEED_EXPIRES_MS = 2000;
const RETRY_FIRST_MS = 200;
const RETRY_MAX_MS = 1000;
/**
 * A reopen is a few requests, each with its own timeout, but the client library adds its own
 * waits (a consumer's info asked again while its leader is elected): past this the attempt is
 * given up and another made, so no reopen can wait forever.
 */
export const OPEN_DEADLINE_MS = 5000;
/**
 * An open feed hears the server every idle heartbeat (half a pull's life) and at each pull's end.
 * Silent for this long, it is reopened here, whatever the client library is doing: after a
 * reconnect the library resumes a durable consumer itself, and until its own info request is
 * answered it does not watch the heartbeats either.
 */
export const STUCK_MS = 2 * FEED_EXPIRES_MS;

/** Where a reopened consumer starts: after a stream sequence, or at a time (RFC 3339). */
export type FeedStart = { seq: number } | { time: string };

/** Consumer options for a start: the first one's policy, or a sequence, or a time. */
type Start = Pick<ConsumerConfig, 'deliver_policy' | 'opt_start_seq' | 'opt_start_time'>;

export function startAt(from: FeedStart | undefined, first: DeliverPolicy): Start {
  if (from === undefined) return { deliver_policy: first };
  if ('seq' in from) return { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from.seq };
  return { deliver_policy: DeliverPolicy.StartTime, opt_start_time: from.time };
}

/**
 * An ephemeral consumer made by this node (not the client's ordered consumer, whose creation
 * retries out of sight): a failure to make it is this feed's to see and retry, and it is
 * opened only once the server answered. In memory, one replica: the feed reopens it anyway.
 */
export async function ephemeral(
  engine: Engine,
  stream: string,
  filter: string,
  from: FeedStart | undefined,
  first: DeliverPolicy,
): Promise<Consumer> {
  const { js, jsm } = engine.quick;
  const ci = await jsm.consumers.add(stream, {
    filter_subject: filter,
    ack_policy: AckPolicy.None,
    ...startAt(from, first),
    inactive_threshold: nanos(30_000),
    mem_storage: true,
    num_replicas: 1,
  });
  return js.consumers.get(stream, ci.name);
}

export interface FeedSpec {
  /** What it is, for the log lines: "the session index", "the claims", "forwarded commands". */
  what: string;
  /** The consumer to read: from its own start (`from` undefined, the first time) or from `from`. */
  open(from: FeedStart | undefined): Promise<Consumer>;
  /** The stream's last sequence now (a restarted server may have lost its tail). */
  lastSeq(): Promise<number>;
  onMessage(m: JsMsg): void;
  /**
   * A durable consumer is the server's and outlives a reconnect: the client library resumes it.
   * Reopening it then would leave the old pull waiting on the server, and what it took would
   * come again only after the ack wait.
   */
  durable?: boolean;
}

export class Feed {
  private last = 0;
  /** The last message's stream timestamp (ns); a feed resumed by time skips up to it. */
  private lastNs = 0;
  private skipUpToNs = 0;
  private generation = 0;
  private stopped = false;
  private stopCurrent: () => void = () => {};
  private retryMs = RETRY_FIRST_MS;
  private lostAt: number | undefined;

  private current: Consumer | undefined;
  /** When the server last showed this feed was listening: a message, a heartbeat, a pull's end. */
  private heardAt = Date.now();
  private watchdog: NodeJS.Timeout | undefined;
  /** When the consumer read now was opened. */
  private openedAt = 0;

  constructor(
    private readonly spec: FeedSpec,
    private readonly log: (line: string) => void,
    /** Told when the feed stops hearing (true) and when it hears again (false). */
    private readonly deaf: (deaf: boolean) => void = () => {},
  ) {}

  /** Opens the first consumer (a failure here is the caller's: the relay does not start). */
  async start(): Promise<void> {
    await this.open();
  }

  /** The connection came back: an ordered consumer may be gone with its server. */
  reconnected(): void {
    if (!this.spec.durable) this.restart('reconnected');
  }

  /** Reopens after the last sequence seen (the connection came back, or it went quiet). */
  restart(why: string): void {
    if (this.stopped) return;
    if (this.lostAt === undefined) {
      this.lostAt = Date.now();
      this.deaf(true);
      this.log(`relay: nats: ${this.spec.what} went quiet (${why}); reopening its consumer`);
    }
    this.stopCurrent();
    // An ephemeral consumer left behind would only hold pulls nobody reads.
    if (!this.spec.durable) void this.current?.delete().catch(() => {});
    this.current = undefined;
    this.open().catch((err: Error) => {
      const wait = this.retryMs;
      this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
      setTimeout(() => this.restart(err.message), wait).unref();
    });
  }

  /**
   * Until when this feed is known to have heard everything: a message that did not come before
   * then was not written (after it, silence may be the feed's, not the writers').
   */
  heardUntil(): number {
    return this.heardAt;
  }

  /** Since when this feed has read one consumer without a break; undefined while it reopens. */
  openSince(): number | undefined {
    return this.lostAt === undefined && this.current !== undefined ? this.openedAt : undefined;
  }

  stop(): void {
    this.stopped = true;
    this.generation += 1;
    clearInterval(this.watchdog);
    this.stopCurrent();
  }

  /** One attempt to open, given up after OPEN_DEADLINE_MS (a late consumer is then stopped unread). */
  private open(): Promise<void> {
    const attempt = this.attempt();
    const gen = this.generation;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        if (gen === this.generation) this.generation += 1;
        reject(new Error(`timeout: no answer within ${OPEN_DEADLINE_MS / 1000} s while opening its consumer`));
      }, OPEN_DEADLINE_MS);
      timer.unref();
    });
    return Promise.race([attempt, deadline]).finally(() => clearTimeout(timer));
  }

  /** Reopens a feed that went silent although the server answers every idle heartbeat. */
  private watch(gen: number): void {
    clearInterval(this.watchdog);
    this.watchdog = setInterval(() => {
      if (gen !== this.generation || this.stopped) return clearInterval(this.watchdog);
      const silent = Date.now() - this.heardAt;
      if (silent > STUCK_MS) {
        clearInterval(this.watchdog);
        this.restart(`silent for ${(silent / 1000).toFixed(1)} s`);
      }
    }, STUCK_MS / 4);
    this.watchdog.unref();
  }

  private async attempt(): Promise<void> {
    const gen = ++this.generation;
    let from: FeedStart | undefined;
    this.skipUpToNs = 0;
    if (this.last > 0) {
      if ((await this.spec.lastSeq()) >= this.last) from = { seq: this.last + 1 };
      else {
        from = { time: new Date(Math.floor(this.lastNs / 1e6)).toISOString() };
        this.skipUpToNs = this.lastNs;
        this.log(
          `relay: nats: the stream under ${this.spec.what} restarted without its last messages; ` +
            'resuming from the time of the last one seen',
        );
      }
    }
    if (gen !== this.generation) return;
    const consumer = await this.spec.open(from);
    if (gen !== this.generation) {
      // Given up meanwhile: a consumer made for nobody would only hold pulls.
      if (!this.spec.durable) void consumer.delete().catch(() => {});
      return;
    }
    const msgs = await consumer.consume({ expires: FEED_EXPIRES_MS });
    if (gen !== this.generation) {
      msgs.stop();
      return;
    }
    this.stopCurrent = () => msgs.stop();
    this.current = consumer;
    this.heardAt = Date.now();
    this.openedAt = this.heardAt;
    this.watch(gen);
    if (this.lostAt !== undefined) {
      this.deaf(false);
      this.log(`relay: nats: ${this.spec.what} resumed after ${((Date.now() - this.lostAt) / 1000).toFixed(1)} s`);
      this.lostAt = undefined;
    }
    this.retryMs = RETRY_FIRST_MS;
    void (async () => {
      for await (const s of msgs.status()) {
        if (gen !== this.generation) return;
        if (s.type === 'heartbeat' || s.type === 'debug' || s.type === 'discard') this.heardAt = Date.now();
        const quiet =
          (s.type === 'heartbeats_missed' && s.count >= 2) ||
          s.type === 'consumer_not_found' ||
          s.type === 'consumer_deleted';
        if (quiet) return this.restart(s.type.replace(/_/g, ' '));
      }
    })().catch(() => {});
    void (async () => {
      for await (const m of msgs) {
        if (gen !== this.generation) return;
        this.heardAt = Date.now();
        const ns = Number(m.info.timestampNanos);
        if (this.skipUpToNs > 0 && ns <= this.skipUpToNs) continue;
        this.last = m.seq;
        this.lastNs = ns;
        this.spec.onMessage(m);
      }
    })().then(
      // Ended without this feed stopping it (the client library gave it up): read on all the same.
      () => gen === this.generation && this.restart('its consumer stopped'),
      (err: Error) => gen === this.generation && this.restart(err.message),
    );
  }
}
