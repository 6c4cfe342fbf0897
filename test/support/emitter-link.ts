// A relay link for emitters without a log (test targets and harnesses). The shipped adapter writes
// through `RelayConnection.write()` and resends from its own log (streams/outbox.ts, D23); these
// emitters have none, so while the relay is down a bounded in-memory outbox holds their events
// (debug/info dropped first, every drop counted, AEP-0003 §8.4), and a reconnect re-claims their
// sessions by redelivering each one's last positioned event byte-identically (aep-wire §4.4).
import { severityRank, type AepEvent } from '../../src/protocol/envelope.js';
import { SteeringError } from '../../src/protocol/errors.js';
import { isCommandType } from '../../src/protocol/types.js';
import { RelayConnection, type RelayConnectionOptions } from '../../src/relay/ws-connection.js';

const DEFAULT_OUTBOX = 1000;
const NOTICE = severityRank('notice');

export interface EmitterLinkOptions extends RelayConnectionOptions {
  /** Events held while the relay is unreachable. */
  outboxCap?: number;
  /** Sessions remembered for re-claiming after a reconnect. */
  claimCap?: number;
}

interface Held {
  text: string;
  session?: string;
  positioned: boolean;
  urgent: boolean;
}

export class EmitterLink extends RelayConnection {
  /** Events dropped from a full outbox, by severity class. */
  readonly drops = { low: 0, high: 0 };
  private readonly held: Held[] = [];
  /** Last text sent per claimed session, oldest first (insertion order). */
  private readonly claimed = new Map<string, string>();
  private stopped = false;

  constructor(private readonly emitterOpts: EmitterLinkOptions) {
    super(emitterOpts);
    // At each hello: re-claim every session this link spoke for (a new connection owns nothing),
    // then what waited, in order. The connection says greeted before anyone awaiting `ready()` runs.
    this.state$.subscribe((up) => {
      if (!up) return;
      for (const text of [...this.claimed.values()]) this.write(text);
      while (this.held.length > 0 && this.connected) this.writeItem(this.held.shift()!);
    });
  }

  /** Queues an event for the relay; never awaits the network. */
  send(e: AepEvent): void {
    this.enqueue(JSON.stringify(e), e);
  }

  /** Redelivers a recorded event unchanged (a re-ack, AEP-0004 §3): byte-identical for every consumer. */
  sendText(text: string): void {
    this.enqueue(text, JSON.parse(text) as AepEvent);
  }

  override close(): Promise<void> {
    this.stopped = true;
    return super.close();
  }

  private enqueue(text: string, e: AepEvent): void {
    if (this.stopped) return;
    const item: Held = {
      text,
      positioned: e.session !== undefined && e.seq !== undefined && !isCommandType(e.type),
      urgent: severityRank(e.severity) >= NOTICE,
      ...(e.session !== undefined ? { session: e.session } : {}),
    };
    if (this.connected && this.held.length === 0) this.writeItem(item);
    else this.hold(item);
  }

  private hold(item: Held): void {
    const cap = this.emitterOpts.outboxCap ?? DEFAULT_OUTBOX;
    if (this.held.length >= cap) {
      // Drop debug/info first; only a queue full of notice-and-above loses one of those.
      const i = this.held.findIndex((o) => !o.urgent);
      const [dropped] = this.held.splice(Math.max(i, 0), 1);
      if (dropped!.urgent) {
        this.drops.high += 1;
        this.emitterOpts.onError?.(
          new SteeringError(
            'RELAY_UNREACHABLE',
            `relay outbox full (${cap}): dropped a notice-or-above event (${this.drops.high} so far)`,
          ),
        );
      } else this.drops.low += 1;
    }
    this.held.push(item);
  }

  private writeItem(item: Held): void {
    if (!this.write(item.text)) {
      this.held.unshift(item);
      return;
    }
    if (item.positioned && item.session !== undefined) {
      this.claimed.delete(item.session);
      this.claimed.set(item.session, item.text);
      if (this.claimed.size > (this.emitterOpts.claimCap ?? 10_000))
        this.claimed.delete(this.claimed.keys().next().value!);
    }
  }
}

export function connectEmitter(opts: EmitterLinkOptions): EmitterLink {
  return new EmitterLink(opts).start();
}
