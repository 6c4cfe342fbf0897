// D45: a hook whose observations need what the vendor writes just after it (Copilot CLI writes a
// turn's final answer to its transcript a moment after the agentStop hook fires). The hook itself
// is stepped at once, without those observations, so its reply and the turn it closes keep their
// place among the session's inputs; once they are read (within the table's bound) they follow as
// an observation-only moment of their own, answered already. The session's hooks after it wait
// behind that read, so the observations come before anything the agent did next (its session's
// end); other sessions' hooks go on.
import { Observable, type OperatorFunction } from 'rxjs';
import { newId } from '../protocol/index.js';
import type { SessionItem } from './step-types.js';
import type { ObservationSpec } from './surface.js';

type HookStep = SessionItem & { kind: 'hook' };

/** A read that failed gives the hook's own observations. */
async function read(later: () => Promise<ObservationSpec[]>, own: ObservationSpec[]): Promise<ObservationSpec[]> {
  try {
    return await later();
  } catch {
    return own;
  }
}

/** The moment that carries what was read: no reply is owed for it, nothing is delivered at it. */
const followUp = (h: HookStep, observations: ObservationSpec[]): HookStep => {
  const at = Date.now();
  return {
    kind: 'hook',
    session: h.session,
    hookId: newId(at),
    at,
    answered: 'neutral',
    hook: {
      session: h.hook.session,
      event: h.hook.event,
      class: { kind: 'moment', eligible: false, reason: 'what the vendor wrote after the hook' },
      observations,
    },
  };
};

/** One subscription for the whole stream: a hook with nothing to wait for goes straight on (hot path). */
export function laterObservations(): OperatorFunction<HookStep, HookStep> {
  return (source) =>
    new Observable<HookStep>((out) => {
      const pending = new Map<string, Promise<void>>();
      let closed = false;
      const emit = (h: HookStep): void => {
        if (!closed) out.next(h);
      };
      const sub = source.subscribe({
        next(h) {
          const before = pending.get(h.session);
          const { later, ...hook } = h.hook;
          if (later === undefined && before === undefined) return out.next(h);
          const now: HookStep = later === undefined ? h : { ...h, hook: { ...hook, observations: [] } };
          // Nothing of its session waits to be read: the hook is stepped at once.
          if (before === undefined) out.next(now);
          const stepped = before === undefined ? Promise.resolve() : before.then(() => emit(now));
          const done =
            later === undefined
              ? stepped
              : stepped.then(async () => emit(followUp(h, await read(later, h.hook.observations))));
          pending.set(h.session, done);
          void done.then(() => {
            if (pending.get(h.session) === done) pending.delete(h.session);
          });
        },
        error: (e: unknown) => out.error(e),
        complete: () => void Promise.all(pending.values()).then(() => out.complete()),
      });
      return () => {
        closed = true;
        sub.unsubscribe();
      };
    });
}
