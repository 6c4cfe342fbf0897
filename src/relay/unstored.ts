// D38 and the adapter's resend (D23): a connection's event refused for now (`store-unavailable`)
// must be stored before any later event of its session is. An adapter learns what the relay
// holds from the highest position stored and resends only after it, so a later event stored
// first would hide the refused one from every resend: a hole in history for good. Per
// connection and session, the first refused position holds back the later ones until it is
// taken again (or the connection goes; its next one learns afresh), and then the next refused
// one does, until HOLD_MS passed without a refusal at or before the held one: a refused event
// that was stored before (a repeated ack, sent once and never resent) holds back no longer than
// that. The hold moves on through the refused positions because the held event may come alone:
// an adapter sends a repeated ack live, out of its log's order, and the events refused behind
// it come only with its in-order resend; a later event stored meanwhile would hide them.
import { before, placeSorted } from './positions.js';
import type { Position } from './session-store.js';

/** An adapter resends what was refused for now at most 2 s apart while it lasts. */
const HOLD_MS = 10_000;

const after = (a: Position, b: Position): boolean => before(b, a);

/** The refused positions of one session from one connection, earliest first (the held one). */
interface Held {
  refused: Position[];
  /** When a position at or before the held one was last refused. */
  at: number;
}

/** Beyond this many refused positions a session's hold keeps the earliest (the resend starts there). */
const MAX_REFUSED = 65_536;

export class Unstored<P extends object> {
  private readonly first = new Map<P, Map<string, Held>>();

  /** `pos` of `session` from `peer` was refused for now. */
  refused(peer: P, session: string, pos: Position, now = Date.now()): void {
    const m = this.first.get(peer) ?? new Map<string, Held>();
    this.first.set(peer, m);
    let held = m.get(session);
    if (held === undefined) {
      held = { refused: [], at: now };
      m.set(session, held);
    }
    const list = held.refused;
    // Refused again at or before the held one: its sender is still resending, it holds on.
    if (list.length === 0 || !after(pos, list[0]!)) held.at = now;
    placeSorted(list, pos, MAX_REFUSED);
  }

  /** Why `pos` must wait (an earlier event of the session is not stored yet), or undefined. */
  waits(peer: P, session: string, pos: Position, now = Date.now()): string | undefined {
    const held = this.first.get(peer)?.get(session);
    const top = held?.refused[0];
    if (top === undefined || !after(pos, top)) return undefined;
    if (now - held!.at > HOLD_MS) {
      this.drop(peer, session);
      return undefined;
    }
    return `an earlier event of session ${session} (${top.epoch}:${top.seq}) is not stored yet; resend from it`;
  }

  /**
   * `pos` was taken for writing: the refused positions up to it are done, and the next refused
   * one holds (the events after it are written after it; a failed write refuses them again).
   */
  taken(peer: P, session: string, pos: Position, now = Date.now()): void {
    const held = this.first.get(peer)?.get(session);
    if (held === undefined || after(held.refused[0]!, pos)) return;
    let n = 0;
    while (n < held.refused.length && !after(held.refused[n]!, pos)) n += 1;
    held.refused.splice(0, n);
    if (held.refused.length === 0 || now - held.at > HOLD_MS) this.drop(peer, session);
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
