// What a settled step does once its records are durable (D4 acks, D9/D12 replies, D22): its
// events go to the sinks and its effects start: hook replies, holds and their timers, and calls on
// the vendor's lanes. The Subjects these feed belong to run.ts; this module
// only calls the two doors it is given.
import { from, map, timer, type Observable } from 'rxjs';
import type { AepEvent } from '../protocol/index.js';
import type { SessionInput } from '../machines/session-input.js';
import type { Effect, SessionItem, StepResult } from './step-types.js';
import type { Journal } from './journal.js';
import type { OpenHooks } from './open-hooks.js';
import { isLaneEffect, throughLanes } from './lanes.js';
import type { Lane } from './lane.js';
import { performSpawn } from './home.js';
import type { Spawner } from './spawner.js';

/** An input the session's actor takes next, as the stream's own arrivals are. */
const inputFor = (session: string, input: SessionInput): SessionItem => ({ kind: 'input', session, input });

/** What a settled step releases to the sinks: an event (live: not from the log), or an item fed back to the sessions. */
export type Out = { kind: 'event'; e: AepEvent; live: boolean } | { kind: 'feedback'; item: SessionItem };

export interface PerformContext {
  lanes: readonly Lane[];
  hooks: OpenHooks;
  journal: Journal;
  /** Starts an effect that runs on as a stream; what it yields goes back to the sessions. */
  start(effect$: Observable<SessionItem>): void;
  /** Hands an event or a fed-back item to the sinks. */
  release(out: Out): void;
  /** After close the sinks are gone. */
  closed(): boolean;
  /** D45: starts workers for the home session's spawns. */
  spawner?: Spawner;
}

export interface Performer {
  /** Commits a step and releases it once durable, or answers neutrally if its records were refused. */
  settle(r: StepResult & { item?: SessionItem }): void;
}

/**
 * D7–D8: a reply that hands over no instructions (the neutral one the machine announced, or a
 * decision; nothing to confirm, D9) needs nothing durable first: it goes out as its step ends.
 */
const answersAtOnce = (f: Effect): boolean => f.kind === 'neutral' || (f.kind === 'reply' && !f.confirm);

export function performer(c: PerformContext): Performer {
  const feedback = (item: SessionItem): void => c.release({ kind: 'feedback', item });

  /** Starts an effect; for a steering reply, its outcome goes back to the session (D9). */
  function perform(effect: Effect, logged: boolean): void {
    if (isLaneEffect(effect)) {
      c.start(throughLanes(c.lanes, effect, logged, Date.now));
      return;
    }
    if (effect.kind === 'spawn') {
      // D45: logged before it runs (D12); without a spawner (spawn off) the home never logs one.
      if (c.spawner !== undefined) c.start(performSpawn(c.spawner, effect));
      return;
    }
    if (effect.kind === 'neutral') {
      void c.hooks.take(effect.hookId)?.neutral();
      return;
    }
    if (effect.kind === 'hold') {
      const arrival = c.hooks.arrival(effect.hookId);
      arrival?.hold(effect.timeoutMs);
      c.start(
        timer(effect.timeoutMs).pipe(
          map(() =>
            inputFor(effect.session, { type: 'attention.timeout', at: Date.now(), requestId: effect.requestId }),
          ),
        ),
      );
      // D34: the vendor closing the held hook ends the request at once; after our own reply the
      // close finds no hold and changes nothing.
      if (arrival) {
        c.start(
          from(arrival.closed).pipe(
            map(() => inputFor(effect.session, { type: 'hold.closed', at: Date.now(), hookId: effect.hookId })),
          ),
        );
      }
      return;
    }
    const arrival = c.hooks.take(effect.hookId);
    // Only a steering reply's outcome matters (D9); the others are written and left.
    const session = effect.confirm ? effect.session : undefined;
    // D12: a reply with instructions goes out only once its journal record is durable.
    const written = !arrival
      ? Promise.resolve(false)
      : logged || !effect.confirm
        ? arrival.respond(effect.reply, session !== undefined)
        : arrival.neutral();
    if (session === undefined) return;
    void written.then((ok) =>
      feedback(
        inputFor(session, {
          type: ok && logged ? 'reply.written' : 'reply.failed',
          at: Date.now(),
          hookId: effect.hookId,
        }),
      ),
    );
  }

  /** A step whose records were refused emits nothing (D22): neutral replies, inputs kept for later. */
  function refusedStep(r: StepResult & { item?: SessionItem }): void {
    c.journal.refused(r.item);
    for (const f of r.effects) {
      // A lane call of a refused step never starts: its command was rolled back and is decided on retry.
      if (isLaneEffect(f) || f.kind === 'spawn') continue;
      void c.hooks.take(f.hookId)?.neutral();
    }
  }

  /** Nothing of a step leaves before its records are durable (D4 acks, D9/D12 replies, D22). */
  function settle(r: StepResult & { item?: SessionItem }): void {
    // A hook moment whose reply carries no instructions answers at once: nothing in that reply
    // must be durable first (only acks, D4, and steering replies, D12, must). Its records still
    // go to the log in step order with the next group commit, and its events wait for that.
    const early = r.item?.kind === 'hook' && c.journal.synced ? r.effects.filter(answersAtOnce) : [];
    for (const f of early) perform(f, true);
    const release = (logged: readonly AepEvent[]): void => {
      // After close the sinks are gone, as a stopped pipeline would leave them.
      if (c.closed()) return;
      for (const e of r.events) c.release({ kind: 'event', e, live: !logged.includes(e) });
      for (const f of r.effects) if (!early.includes(f)) perform(f, true);
    };
    // Answered already and nothing else to do: only its events wait, so its fsync may be shared.
    const lazy = early.length > 0 && early.length === r.effects.length;
    c.journal.commit(r, release, () => refusedStep(r), lazy);
  }

  return { settle };
}
