// steer(): operators only. Within a session, strict arrival order (concatMap); sessions run
// independently (mergeMap). Steps are synchronous, so a held reply never stalls its session.
import { concatMap, groupBy, mergeMap, of, type Observable } from 'rxjs';
import type { ActorHost, SessionItem, StepResult } from './actor-host.js';

export const steer = (items$: Observable<SessionItem>, host: ActorHost): Observable<StepResult & { item: SessionItem }> =>
  items$.pipe(
    groupBy((item) => item.session),
    mergeMap((session$) => session$.pipe(concatMap((item) => of({ ...host.step(item), item })))),
  );
