// steer(): operators only. Sessions run independently (mergeMap over groupBy); within a session
// a step is synchronous and finishes before the next item arrives, so `map` keeps strict arrival
// order without an inner Observable per item. A held reply never stalls its session.
import { groupBy, map, mergeMap, type Observable } from 'rxjs';
import type { ActorHost } from './actor-host.js';
import type { SessionItem, StepResult } from './step-types.js';

export const steer = (
  items$: Observable<SessionItem>,
  host: ActorHost,
): Observable<StepResult & { item: SessionItem }> =>
  items$.pipe(
    groupBy((item) => item.session),
    mergeMap((session$) => session$.pipe(map((item) => ({ ...host.step(item), item })))),
  );
