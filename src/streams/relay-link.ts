// What the session runtime needs from a relay connection; src/relay/ws-connection.ts supplies it.
import type { Observable } from 'rxjs';
import type { AepCommand } from '../protocol/index.js';

export interface RelayLink {
  /** Commands routed to this adapter (AEP-0004 §4), in arrival order. */
  commands$: Observable<AepCommand>;
  /**
   * true at each relay hello, false when the socket closes; a subscriber that comes while the
   * link is greeted hears true at once (the runtime may start after the first hello).
   */
  state$: Observable<boolean>;
  /** Every frame that is not a command (replayed events, `unsubscribed`, `error`, ...). */
  frames$: Observable<Record<string, unknown>>;
  /** Writes one frame now; false (and nothing kept) when the link is not greeted. The outbox (D23) owns resending. */
  write(text: string): boolean;
  /** Bytes written to the socket and not yet sent (backpressure). */
  buffered(): number;
  close(): Promise<void>;
}
