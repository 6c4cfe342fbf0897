// Learning what the relay stored (D23): per session with unconfirmed events, the outbox asks the
// relay for this agent's events after the last position known. The relay replays its own store,
// so what comes back is durable there. Nothing else is sent meanwhile, so every event of this
// agent that arrives belongs to the answer.
import { SteeringError, type AepEvent } from '../protocol/index.js';
import type { LogPosition } from './log.js';
import { after, posOf, type Position } from './outbox-state.js';

/** Sessions per learn query (the relay caps resume positions per subscription). */
const LEARN_CHUNK = 200;

export class LearnQuery {
  /** The query's subscription ids not answered yet. */
  readonly ids = new Set<string>();
  /** Per session, the highest position the relay said it holds. */
  readonly seen = new Map<string, Position>();
  /** The relay refused a query: nothing is taken as covered. */
  failed = false;

  constructor(
    /** The log position that is covered once the relay holds every session's `touched` position. */
    readonly target: LogPosition,
    /** Per session with events after the confirmed point: its last position when the query went out. */
    readonly touched: Map<string, Position>,
    /** Asked on a hello: the resend from the confirmed point and the claims follow it. */
    readonly hello: boolean,
    /** Frames written on the link before the query: the relay answers in order. */
    readonly mark: number,
  ) {}

  /** Writes the query: per chunk of sessions a replay of `vendor`'s events after the positions known, then its end. */
  send(
    entries: readonly { session: string; epoch: number; seq: number }[],
    vendor: string,
    nextId: () => string,
    write: (text: string) => void,
  ): void {
    for (let i = 0; i < entries.length; i += LEARN_CHUNK) {
      const id = nextId();
      this.ids.add(id);
      write(
        JSON.stringify({
          type: 'subscribe',
          id,
          filter: { agent: vendor },
          capture: 'metadata',
          from: entries.slice(i, i + LEARN_CHUNK),
        }),
      );
      write(JSON.stringify({ type: 'unsubscribe', id }));
    }
  }

  /**
   * One frame from the relay while the query runs; true once every part of it was answered.
   * Another identity's events for the session (a rival claim held it) are not this adapter's.
   */
  heard(
    f: Record<string, unknown>,
    vendor: string,
    sourceOf: (session: string) => string | undefined,
    onError: (e: SteeringError) => void,
  ): boolean {
    const type = f.type;
    if (typeof type === 'string' && type.includes('.')) {
      const e = f as unknown as AepEvent;
      const p = posOf(e);
      if (!p || e.agent !== vendor || e.source !== sourceOf(e.session!)) return false;
      const seen = this.seen.get(e.session!);
      if (!seen || after(p, seen)) this.seen.set(e.session!, p);
      return false;
    }
    if ((type === 'unsubscribed' || type === 'error') && typeof f.id === 'string' && this.ids.has(f.id)) {
      if (type === 'error') {
        this.failed = true;
        onError(
          new SteeringError(
            'RELAY_PROTOCOL',
            `the relay refused the outbox's position query (${String(f.code)}); resending everything unconfirmed`,
          ),
        );
      }
      this.ids.delete(f.id);
      return this.ids.size === 0;
    }
    return false;
  }
}
