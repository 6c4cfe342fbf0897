// D38 and the adapter's resend (D23): a connection's event refused for now (`store-unavailable`)
// must be stored before any later event of its session is. An adapter learns what the relay
// holds from the highest position stored and resends only after it, so a later event stored
// first would hide the refused one from every resend: a hole in history for good. Per
// connection and session, the first refused position holds back the later ones until it is
// taken again, and then the next position does (or the connection goes; its next one learns
// afresh), until HOLD_MS passed without a refusal: a refused event that was stored before (a
// repeated ack, sent once and never resent) holds back no longer than that. The hold moves on one
// position at a time because the held event may come alone: an adapter sends a repeated ack live,
// out of its log's order, and the events refused behind it come only with its in-order resend; a
// later event stored meanwhile would hide them from that resend.
import type { Position } from './store.js';

/** An adapter resends what was refused for now at most 2 s apart while it lasts. */
const HOLD_MS = 10_000;

const after = (a: Position, b: Position): boolean => a.epoch > b.epoch || (a.epoch === b.epoch && a.seq > b.seq);

interface Held extends Position {
  /** When a position of the session was last refused. */
  at: number;
  /** Moved on past a taken position: it may be the epoch's last, so a later epoch passes. */
  moved?: true;
}

export class Unstored<P extends object> {
  private readonly first = new Map<P, Map<string, Held>>();

  /** `pos` of `session` from `peer` was refused for now. */
  refused(peer: P, session: string, pos: Position, now = Date.now()): void {
    const m = this.first.get(peer) ?? new Map<string, Held>();
    this.first.set(peer, m);
    const held = m.get(session);
    // Refused again at or before the held one: its sender is still resending, it holds on.
    if (held === undefined || !after(pos, held)) m.set(session, { epoch: pos.epoch, seq: pos.seq, at: now });
  }

  /** Why `pos` must wait (an earlier event of the session is not stored yet), or undefined. */
  waits(peer: P, session: string, pos: Position, now = Date.now()): string | undefined {
    const held = this.first.get(peer)?.get(session);
    if (held === undefined || !after(pos, held)) return undefined;
    if (now - held.at > HOLD_MS || (held.moved && pos.epoch > held.epoch)) {
      this.drop(peer, session);
      return undefined;
    }
    return `an earlier event of session ${session} (${held.epoch}:${held.seq}) is not stored yet; resend from it`;
  }

  /**
   * `pos` was taken for writing: once it was the one held, the next position is (the events
   * after it are written after it; a failed write refuses them, and the first is held again).
   */
  taken(peer: P, session: string, pos: Position, now = Date.now()): void {
    const held = this.first.get(peer)?.get(session);
    if (held === undefined || after(held, pos)) return;
    if (now - held.at > HOLD_MS) this.drop(peer, session);
    else this.first.get(peer)!.set(session, { epoch: pos.epoch, seq: pos.seq + 1, at: held.at, moved: true });
  }

  private drop(peer: P, session: string): void {
    const m = this.first.get(peer);
    m?.delete(session);
    if (m?.size === 0) this.first.delete(peer);
  }

  /** Any held at all (the common case is none: nothing to look up). */
  any(): boolean {
    return this.first.size > 0;
  }

  leave(peer: P): void {
    this.first.delete(peer);
  }
}
