// Feeds a live board from the relay: one consumer connection, a replay-all subscription
// (history the relay still holds, then live), and the roster, re-read when sessions come and
// go. A lost relay is retried with backoff; the page shows the link state meanwhile. The
// reconnect loop and the once-only key set are shared with `aep-steer watch`.
import { dedupeKey, type AepEvent, type CaptureLevel } from '../protocol/envelope.js';
import { tokenFor } from '../relay/local-token.js';
import { RelayConsumer } from './connection.js';
import type { Board } from './board.js';

export interface FollowOptions {
  url: string;
  token?: string;
  /** Sender identity on the consumer hello. */
  agent?: string;
  /** Capture ceiling of the subscription (AEP-0003 §3.5); absent: as the token allows. */
  capture?: CaptureLevel;
  /** Roster re-read interval; claims also change without any event (a connection drops). */
  rosterEveryMs?: number;
  onChange: () => void;
  /** Each event the board folded (never a redelivery), after the board has it. */
  onEvent?: (e: AepEvent) => void;
  /** Once, when the first subscription's replay of history is through (a roster reply follows it). */
  onLive?: () => void;
}

export interface Follower {
  /** Resolves once the first subscription is live (or rejects if the first connect fails). */
  ready: Promise<void>;
  /** The open connection, to send commands on; undefined while the relay is unreachable. */
  consumer(): RelayConsumer | undefined;
  close(): Promise<void>;
}

const BACKOFF_MAX_MS = 5000;

/** Delay before the n-th reconnect attempt: 250 ms doubling, at most `maxMs`. */
export const backoffDelay = (attempt: number, maxMs: number): number =>
  Math.min(maxMs, 250 * 2 ** Math.min(attempt, 8));

export interface Retry {
  /** One try; a throw is tried again after the next delay unless `isFinal` says no retry can mend it. */
  attempt: () => Promise<void>;
  delayMs: (attempt: number) => number;
  /** True once the caller is done: no further try is made. */
  stopped: () => boolean;
  /** The number of the first try (its delay is `delayMs(first)`). */
  first?: number;
  isFinal?: (err: unknown) => boolean;
  onFinal?: (err: unknown) => void;
}

/**
 * Tries again after each delay until a try succeeds, the caller stops, or an error is final; `cancel` cuts a wait
 * short.
 */
export function retrying(r: Retry): { cancel(): void } {
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const wait = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
    });
  void (async () => {
    for (let n = r.first ?? 0; ; n++) {
      await wait(r.delayMs(n));
      if (cancelled || r.stopped()) return;
      try {
        await r.attempt();
        return;
      } catch (err) {
        if (r.isFinal?.(err)) {
          r.onFinal?.(err);
          return;
        }
      }
    }
  })();
  return {
    cancel() {
      cancelled = true;
      clearTimeout(timer);
    },
  };
}

/** `(source, id)` keys already seen (AEP-0001 §5.3), the oldest forgotten past the cap. */
export class SeenOnce {
  private readonly keys = new Set<string>();
  constructor(private readonly cap = 50_000) {}
  /** True the first time an event's key is offered. */
  add(e: AepEvent): boolean {
    const k = dedupeKey(e);
    if (this.keys.has(k)) return false;
    this.keys.add(k);
    if (this.keys.size > this.cap) this.keys.delete(this.keys.values().next().value!);
    return true;
  }
}

export function followRelay(board: Board, opts: FollowOptions): Follower {
  let consumer: RelayConsumer | undefined;
  let closed = false;
  let rosterTimer: NodeJS.Timeout | undefined;
  let retry: { cancel(): void } | undefined;
  let firstResolve!: () => void;
  let firstReject!: (e: Error) => void;
  const ready = new Promise<void>((resolve, reject) => {
    firstResolve = resolve;
    firstReject = reject;
  });
  let first = true;

  const refreshRoster = async (): Promise<void> => {
    if (!consumer) return;
    try {
      if (board.setRoster(await consumer.roster())) opts.onChange();
    } catch {
      // The roster is re-read on the next tick; a closed link is handled by onClose.
    }
  };

  const reconnect = (): void => {
    if (closed) return;
    retry = retrying({
      attempt: connect,
      delayMs: (n) => backoffDelay(n, BACKOFF_MAX_MS),
      stopped: () => closed,
      first: 1,
    });
  };

  const connect = async (): Promise<void> => {
    try {
      // Zero-config like the other consumers: a loopback relay gets the local token when none is given.
      const token = tokenFor(opts.url, opts.token);
      const c = await RelayConsumer.connect({
        url: opts.url,
        agent: opts.agent ?? 'aep-steer-inspect',
        ...(token ? { token } : {}),
      });
      if (closed) {
        await c.close();
        return;
      }
      consumer = c;
      const known = new Set<string>();
      c.onClose(() => {
        consumer = undefined;
        board.connected = false;
        board.error = 'connection lost';
        opts.onChange();
        reconnect();
      });
      await c.subscribe(
        { filter: {}, from: 'all', ...(opts.capture ? { capture: opts.capture } : {}) },
        {
          onEvent: (e) => {
            if (!board.apply(e)) return;
            opts.onEvent?.(e);
            opts.onChange();
            // A new session, or one ending, changes who claims what.
            if (e.session !== undefined && (!known.has(e.session) || e.type === 'session.ended')) {
              known.add(e.session);
              void refreshRoster();
            }
          },
        },
      );
      // Commands sent on this connection (the console's, the MCP tools') watch their acks and
      // outcomes through one shared relay subscription, however many are in flight.
      await c.shareLive(opts.capture).catch(() => {});
      board.connected = true;
      board.error = undefined;
      await refreshRoster();
      opts.onChange();
      if (first) {
        first = false;
        opts.onLive?.();
        firstResolve();
      }
    } catch (err) {
      board.connected = false;
      board.error = (err as Error).message;
      opts.onChange();
      if (first) {
        first = false;
        firstReject(err as Error);
      }
      throw err;
    }
  };

  rosterTimer = setInterval(() => void refreshRoster(), opts.rosterEveryMs ?? 2000);
  rosterTimer.unref();
  connect().catch(reconnect);

  return {
    ready,
    consumer: () => consumer,
    async close() {
      closed = true;
      clearInterval(rosterTimer);
      retry?.cancel();
      const c = consumer;
      consumer = undefined;
      await c?.close();
    },
  };
}
