// Feeds a live board from the relay: one consumer connection, a replay-all subscription
// (history the relay still holds, then live), and the roster, re-read when sessions come and
// go. A lost relay is retried with backoff; the page shows the link state meanwhile.
import type { AepEvent, CaptureLevel } from '../protocol/envelope.js';
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

export function followRelay(board: Board, opts: FollowOptions): Follower {
  let consumer: RelayConsumer | undefined;
  let closed = false;
  let attempt = 0;
  let rosterTimer: NodeJS.Timeout | undefined;
  let retryTimer: NodeJS.Timeout | undefined;
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
        schedule();
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
      attempt = 0;
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
      schedule();
    }
  };

  const schedule = (): void => {
    if (closed) return;
    attempt += 1;
    retryTimer = setTimeout(() => void connect(), Math.min(BACKOFF_MAX_MS, 250 * 2 ** Math.min(attempt, 5)));
  };

  rosterTimer = setInterval(() => void refreshRoster(), opts.rosterEveryMs ?? 2000);
  rosterTimer.unref();
  void connect();

  return {
    ready,
    consumer: () => consumer,
    async close() {
      closed = true;
      clearInterval(rosterTimer);
      clearTimeout(retryTimer);
      const c = consumer;
      consumer = undefined;
      await c?.close();
    },
  };
}
