// What the session runtime needs from a relay connection; src/relay/ws-connection.ts supplies it.
import type { Observable } from 'rxjs';
import type { AepCommand, AepEvent } from '../protocol/index.js';

export interface RelayLink {
  /** Commands routed to this adapter (AEP-0004 §4), in arrival order. */
  commands$: Observable<AepCommand>;
  /** Queues an event for the relay. Never awaits the network: a relay being down never blocks a hook. */
  send(e: AepEvent): void;
  /** Announces the sessions this adapter owns, so the relay routes their commands here (D17). */
  claimSessions?(sessions: readonly string[]): void;
  close(): Promise<void>;
}
