// What a fabric node fans out of another node's sessions. Their events come in order through
// the history feed once stored; an answer to a command (an outcome event) also comes at once as
// an early copy. The early copy goes out only when it is the next position of its session, so
// a subscriber here sees a session in order, as it would on the session's own node (and a
// resume from its last position misses nothing); its stored copy is then dropped. Otherwise
// the early copy is dropped and the stored one goes out in its turn. A read of history here
// waits for the stored copies of the answers already sent early (`settled`), so what a sender
// here was answered is in what it reads next, as on the answer's own node.
import type { AepEvent } from '../protocol/envelope.js';
import { isOutcomeType } from './routing.js';
import type { Incoming } from './types.js';

/** Sessions and early answers held at most; past it the oldest are forgotten (the stored path remains). */
const CROSSED_CAP = 4096;

/**
 * How long a read waits for an early answer's stored copy: past a fabric's write deadline
 * (1.5 s on NATS) its node has given up storing it.
 */
export const SETTLE_MS = 2000;

type Position = { epoch: number; seq: number };

export class CrossedAnswers {
  /** Per session, the last position fanned out here of what other nodes received. */
  private readonly at = new Map<string, Position>();
  /** Early answers fanned out whose stored copy has not come yet. */
  private readonly early = new Set<string>();
  /** Reads waiting for the stored copies of the early answers sent before them. */
  private waiting: { keys: Set<string>; done: () => void }[] = [];

  constructor(private readonly cap = CROSSED_CAP) {}

  /**
   * Undefined when every early answer's stored copy has come; else a promise that settles once
   * those sent so far have come (later ones are not waited for), or after `ms`: an answer its
   * node could not store never comes stored.
   */
  settled(ms: number): Promise<void> | undefined {
    if (this.early.size === 0) return undefined;
    return new Promise((resolve) => {
      const w = {
        keys: new Set(this.early),
        done: () => {
          clearTimeout(timer);
          this.waiting = this.waiting.filter((x) => x !== w);
          resolve();
        },
      };
      const timer = setTimeout(w.done, ms);
      this.waiting.push(w);
    });
  }

  private forget(key: string): boolean {
    if (!this.early.delete(key)) return false;
    for (const w of [...this.waiting]) if (w.keys.delete(key) && w.keys.size === 0) w.done();
    return true;
  }

  /** Whether a line another node received goes out here: a plain copy always does. */
  goesOut(e: AepEvent, via: 'stored' | 'copy' | 'answer'): boolean {
    return via === 'answer' ? this.answer(e) : via === 'stored' ? this.stored(e) : true;
  }

  /** An early copy of an answer: true if it goes out now (it is its session's next position). */
  answer(e: AepEvent): boolean {
    const session = e.session;
    if (session === undefined || e.seq === undefined) return false;
    const last = this.at.get(session);
    const epoch = e.epoch ?? 0;
    if (last === undefined || last.epoch !== epoch || e.seq !== last.seq + 1) return false;
    this.moved(session, { epoch, seq: e.seq });
    this.early.add(`${e.source}\n${e.id}`);
    if (this.early.size > this.cap) this.forget(this.early.values().next().value as string);
    return true;
  }

  /** An event from the history feed: false if it is an answer whose early copy already went out. */
  stored(e: AepEvent): boolean {
    if (this.early.size > 0 && this.forget(`${e.source}\n${e.id}`)) return false;
    const session = e.session;
    if (session !== undefined && e.seq !== undefined) {
      const last = this.at.get(session);
      const epoch = e.epoch ?? 0;
      if (last === undefined || epoch > last.epoch || (epoch === last.epoch && e.seq > last.seq))
        this.moved(session, { epoch, seq: e.seq });
    }
    return true;
  }

  private moved(session: string, p: Position): void {
    // Re-inserted, so the Map's order is by last activity: the idlest session goes first.
    this.at.delete(session);
    this.at.set(session, p);
    if (this.at.size > this.cap) this.at.delete(this.at.keys().next().value as string);
  }

  get held(): { sessions: number; early: number } {
    return { sessions: this.at.size, early: this.early.size };
  }
}

/**
 * D41 across nodes, on the target's node: answers to a command another node handed here before
 * its writes were confirmed (nats/early.ts) are taken in (shared with the other nodes, written,
 * fanned out here) only once those writes ended, and what their session sends after them waits
 * behind them, so no node sees the answer ahead of the command it answers, nor the session out of
 * order. What waits for one command goes on, in arrival order, when `go` names it.
 */
export class HeldAnswers<P> {
  /** Commands whose writes are under way, each counted once per forward handed here. */
  private readonly pending = new Map<string, number>();
  private readonly held = new Map<string, { item: Incoming; origin: P | undefined }[]>();

  constructor(private readonly take: (batch: Incoming[], origin: P | undefined) => void) {}

  wait(commandId: string): void {
    this.pending.set(commandId, (this.pending.get(commandId) ?? 0) + 1);
  }

  /** What of `batch` is taken in now; the rest waits. */
  now(batch: Incoming[], origin: P | undefined): Incoming[] {
    if (this.pending.size === 0 && this.held.size === 0) return batch;
    const out: Incoming[] = [];
    for (const item of batch) {
      const session = item.event.session;
      const queue = session === undefined ? undefined : this.held.get(session);
      if (queue !== undefined) queue.push({ item, origin });
      else if (session !== undefined && this.waits(item.event)) this.held.set(session, [{ item, origin }]);
      else out.push(item);
    }
    return out;
  }

  /** The writes of one forward of `commandId` ended: what no longer waits is taken in, in order. */
  go(commandId: string): void {
    const n = this.pending.get(commandId);
    if (n === undefined) return;
    if (n > 1) {
      this.pending.set(commandId, n - 1);
      return;
    }
    this.pending.delete(commandId);
    for (const [session, queue] of [...this.held]) {
      let i = 0;
      while (i < queue.length && !this.waits(queue[i]!.item.event)) i += 1;
      if (i === queue.length) this.held.delete(session);
      for (const { item, origin } of queue.splice(0, i)) this.take([item], origin);
    }
  }

  private waits(e: AepEvent): boolean {
    return e.cause !== undefined && this.pending.has(e.cause) && isOutcomeType(e.type);
  }
}
