// Sources: the edges where the outside world becomes session items.
import { map, type Observable } from 'rxjs';
import type { AepCommand } from '../protocol/index.js';
import type { HookArrival } from './hook-endpoint.js';
import type { ClassifiedHook, VendorSurface } from './surface.js';
import type { SessionItem } from './step-types.js';
import { SteeringError } from '../protocol/index.js';

/** A hook the vendor table could not read: it gets the neutral reply and reaches no session. */
export interface UnreadableHook {
  kind: 'unreadable';
  arrival: HookArrival;
  error: SteeringError;
}

export type HookItem = (SessionItem & { kind: 'hook' }) | UnreadableHook;

/** D24: no vendor sends a longer `session_id`; a longer one reaches no session. */
const MAX_SESSION_ID = 256;

function classifyArrival(surface: VendorSurface, arrival: HookArrival): HookItem {
  let hook: ClassifiedHook;
  try {
    hook = surface.classify(arrival.body);
  } catch (cause) {
    const error =
      cause instanceof SteeringError
        ? cause
        : new SteeringError('HOOK_BODY_INVALID', `hook body not understood: ${String(cause)}`, { cause });
    return { kind: 'unreadable', arrival, error };
  }
  if (hook.session.length > MAX_SESSION_ID || hook.session.length === 0) {
    const error = new SteeringError(
      'HOOK_BODY_INVALID',
      `hook session_id is ${hook.session.length === 0 ? 'empty' : `${hook.session.length} characters; the limit is ${MAX_SESSION_ID}`}`,
    );
    return { kind: 'unreadable', arrival, error };
  }
  return { kind: 'hook', session: hook.session, hookId: arrival.id, at: arrival.at, hook };
}

/** Hook arrivals → classified items (vendor tables decide; no vendor name past this point). */
export const fromHookArrivals =
  (surface: VendorSurface) =>
  (arrivals$: Observable<HookArrival>): Observable<HookItem> =>
    arrivals$.pipe(map((a) => classifyArrival(surface, a)));

/** Commands (from the relay or injected) → items, stamped with their arrival time. */
export const fromCommands =
  (now: () => number) =>
  (commands$: Observable<AepCommand>): Observable<SessionItem> =>
    commands$.pipe(map((command) => ({ kind: 'command' as const, session: command.session, at: now(), command })));
