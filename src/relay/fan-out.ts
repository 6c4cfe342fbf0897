// Which events go out where. Every event this node takes goes to its own subscribers (hub.ts
// delivers them, filtered and down-levelled) and into the roster's session summaries. On a
// fabric store some also cross to the other nodes at once, beside the store's history feed:
// agent-scoped events, which are never stored, and answers to commands ahead of their stored
// copies; what other nodes took comes back here, the early answers kept in order (crossed.ts).
import type { AepEvent } from '../protocol/envelope.js';
import { CrossedAnswers, SETTLE_MS } from './crossed.js';
import type { Hub } from './hub.js';
import { isOutcomeType, type EventClass } from './routing.js';
import type { SessionSummaries } from './session-summary.js';
import type { Fabric, Incoming } from './types.js';

export class FanOut {
  /** A fabric store: what of other nodes' sessions went out here, answers early and in order (crossed.ts). */
  private readonly crossed = new CrossedAnswers();
  /** D41: commands handed on before their write was confirmed; an answer to one waits for it. */
  private readonly unwritten = new Set<string>();
  /** D41: per session, what waits behind a held answer, in arrival order. */
  private readonly held = new Map<string, Incoming[]>();

  constructor(
    private readonly hub: Hub,
    private readonly summaries: SessionSummaries,
    private readonly fabric: Fabric | undefined,
  ) {}

  /** One event this node took, to the other nodes now when they are not to wait for its stored copy. */
  cross(line: string, e: AepEvent, cls: EventClass): void {
    const fabric = this.fabric;
    if (cls === 'agent') {
      fabric?.share(line, e);
      return;
    }
    // An answer to a command also crosses to the other nodes at once, beside its write: a
    // sender waiting on another node hears it as soon as one here, whose fan-out never waits
    // for the store either, unless it would overtake its session's events there (crossed.ts).
    if (fabric !== undefined && isOutcomeType(e.type)) fabric.share(line, e, true);
  }

  /** What this node took, to its own subscribers, without waiting for the store. */
  local(batch: readonly Incoming[]): void {
    for (const item of batch) {
      const session = item.event.session;
      const queue = session === undefined ? undefined : this.held.get(session);
      if (queue !== undefined) queue.push(item);
      else if (session !== undefined && this.waitsForWrite(item.event)) this.held.set(session, [item]);
      else this.send(item);
    }
  }

  /**
   * D41: a command handed to its target before its write is confirmed. Its answers, and what
   * follows them in their session (so no subscriber sees the session out of order), wait here
   * until `written` says the write ended, either way.
   */
  forwardedUnwritten(commandId: string): void {
    this.unwritten.add(commandId);
  }

  /** The write of a command handed on early ended: what waited on it goes out, in order. */
  written(commandId: string): void {
    if (!this.unwritten.delete(commandId)) return;
    for (const [session, queue] of this.held) {
      let i = 0;
      while (i < queue.length && !this.waitsForWrite(queue[i]!.event)) this.send(queue[i++]!);
      if (i === queue.length) this.held.delete(session);
      else queue.splice(0, i);
    }
  }

  private waitsForWrite(e: AepEvent): boolean {
    return e.cause !== undefined && this.unwritten.has(e.cause) && isOutcomeType(e.type);
  }

  private send({ event: e, line, bytes }: Incoming): void {
    this.summaries.observe(e);
    this.hub.fanOut(e, line, bytes);
  }

  /** What another node received: an answer arrives twice, early and stored; one of the two goes out, in order. */
  remote(line: string, via: 'stored' | 'copy' | 'answer'): void {
    const e = JSON.parse(line) as AepEvent;
    if (!this.crossed.goesOut(e, via)) return;
    this.summaries.observe(e);
    this.hub.fanOut(e, line);
  }

  /** What a read of history waits for: the stored copies of the answers sent here early (crossed.ts). */
  settled(): Promise<void> | undefined {
    return this.crossed.settled(SETTLE_MS);
  }
}
