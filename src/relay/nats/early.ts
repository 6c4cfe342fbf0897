// D41 across nodes, on the target's node. A forwarded command comes twice: a core-NATS copy sent
// while the sender's node writes it, and the commands-stream copy sent once that write is
// confirmed. The first to come goes to the claimant, the second is dropped (both carry the
// forward's id). While only the early copy has come, the core holds the claimant's answers to it
// (and what its session sends after them): the stream copy, or the sender's node saying its
// writes ended without one, lets them go; so does HOLD_MS, past which the sender's node has
// given up on both writes (it may have died meanwhile). A stream copy that did not come by then
// is also this node's sign that its commands consumer may be stuck while it still hears its
// server's heartbeats (a consumer the cluster no longer delivers from): `missing` says so.
import { WRITE_DEADLINE_MS } from './faults.js';

/** The history write and the stream write, each within its deadline, and a margin. */
const HOLD_MS = 2 * WRITE_DEADLINE_MS + 1000;
/** Forwards remembered for dropping their second copy (a copy comes within moments of the other). */
const SEEN_CAP = 4096;

export class EarlyCopies {
  /** Forwards seen once, oldest first: the next copy of one is dropped. */
  private readonly seen = new Set<string>();
  /** Forwards whose answers are held: the command id and the timer that lets them go. */
  private readonly holding = new Map<string, { id: string; timer: NodeJS.Timeout }>();

  constructor(
    /** `pending` true: answers to `commandId` wait; false: they go. */
    private readonly hold: (commandId: string, pending: boolean) => void,
    /** A stream copy did not come within the hold, and no word that the writes ended (`since`: its early copy). */
    private readonly missing: (since: number) => void = () => {},
    private readonly holdMs = HOLD_MS,
  ) {}

  /** A copy of forward `fwd` came; true if it is the first (it goes to the claimant). */
  arrived(fwd: string, via: 'early' | 'stream'): boolean {
    if (this.seen.has(fwd)) {
      // The stream copy after the early one: both writes were confirmed.
      if (via === 'stream') this.ended(fwd);
      return false;
    }
    this.seen.add(fwd);
    if (this.seen.size > SEEN_CAP) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }

  /** The early copy went to its claimant: its answers wait for the writes. */
  handedOn(fwd: string, commandId: string): void {
    const since = Date.now();
    const timer = setTimeout(() => {
      this.ended(fwd);
      this.missing(since);
    }, this.holdMs);
    timer.unref();
    this.holding.set(fwd, { id: commandId, timer });
    this.hold(commandId, true);
  }

  /** The writes of forward `fwd` ended (confirmed, failed, or given up on): its answers go. */
  ended(fwd: string): void {
    const h = this.holding.get(fwd);
    if (h === undefined) return;
    clearTimeout(h.timer);
    this.holding.delete(fwd);
    this.hold(h.id, false);
  }

  /** Forgets the holds (a stop: nothing is taken in any more). */
  clear(): void {
    for (const h of this.holding.values()) clearTimeout(h.timer);
    this.holding.clear();
  }
}
