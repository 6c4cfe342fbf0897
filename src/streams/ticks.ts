// The timer inputs of the sessions: a TTL tick where something is queued (D10), a window tick where
// an ended session's resume window has passed (D25). Off when neither is set.
import { EMPTY, from, interval, mergeMap, type Observable } from 'rxjs';
import type { ActorHost } from './actor-host.js';
import type { SessionItem } from './step-types.js';

export function sessionTicks(host: ActorHost, ttlMs: number, windowMs: number): Observable<SessionItem> {
  if (ttlMs <= 0 && windowMs <= 0) return EMPTY;
  const tickEvery = Math.min(...[ttlMs, windowMs].filter((ms) => ms > 0), 1000);
  return interval(Math.max(50, tickEvery)).pipe(
    mergeMap(() => {
      const at = Date.now();
      const items: SessionItem[] = [];
      for (const session of host.sessionKeys()) {
        const ctx = host.context(session);
        // Only sessions with something queued can expire anything (D10); only an ended one's window can pass
        // (D25).
        if (ttlMs > 0 && (ctx?.queue.length ?? 0) > 0)
          items.push({ kind: 'input', session, input: { type: 'ttl.tick', at, ttlMs } });
        if (ctx?.resumeUntil !== undefined && at >= ctx.resumeUntil)
          items.push({ kind: 'input', session, input: { type: 'window.tick', at } });
      }
      return from(items);
    }),
  );
}
