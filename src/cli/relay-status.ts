// What the adapter says about its relay link on stderr: connected, lost, reconnected (the link
// re-claims every session at each hello, so "reconnected" means commands route here again).
import type { Observable, Subscription } from 'rxjs';

export function sayRelayState(state$: Observable<boolean>, url: string, say: (line: string) => void): Subscription {
  let ever = false;
  let up = false;
  return state$.subscribe((connected) => {
    if (connected === up) return;
    up = connected;
    if (connected) {
      say(ever ? `aep-steer adapter: relay reconnected: ${url}; its sessions are claimed again` : `aep-steer adapter: relay connected: ${url}`);
      ever = true;
    } else {
      say(`aep-steer adapter: relay lost: ${url}; reconnecting every second (hooks go on meanwhile, events wait in the log)`);
    }
  });
}
