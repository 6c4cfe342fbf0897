// opencode observed over its own server (D50): the one event stream is both the arrivals the
// vendor table classifies (no hook reply exists: nothing is ever written back) and the steering
// lane's facts. The connection starts with the first subscriber to the arrivals, so no frame is
// read before the adapter listens.
import { Observable, filter, map } from 'rxjs';
import type { SteeringError } from '../../protocol/index.js';
import { sourceArrival } from '../source-arrival.js';
import type { HookArrival } from '../../streams/hook-endpoint.js';
import type { BridgeSource, SourceSpec } from '../table.js';
import { OBSERVED, SESSION_SEEN, TURN_ENDED, TURN_STARTED, arrivalBody, type OpencodeEvent } from './frames.js';
import { OpencodeLane } from './lane.js';
import { OpencodeServer } from './server.js';

/** The frames the table maps: the observed ones and the connection's own (a session seen, a turn's ends). */
const ARRIVES = new Set([...OBSERVED, SESSION_SEEN, TURN_STARTED, TURN_ENDED]);

function arrivalOf(e: OpencodeEvent, report: (err: SteeringError) => void): HookArrival {
  return sourceArrival(arrivalBody(e, e.type === SESSION_SEEN), Date.now(), report);
}

export const opencodeSource: SourceSpec = {
  start(opts) {
    // `key` is the path of the mode-600 password file (the `--serve-password-file` option).
    const server = new OpencodeServer({
      url: opts.url,
      ...(opts.key === undefined ? {} : { passwordFile: opts.key }),
      ...(process.env.AEP_OPENCODE_USERNAME ? { username: process.env.AEP_OPENCODE_USERNAME } : {}),
      pollMs: Math.min(opts.pollMs, 500),
      onError: opts.onError,
    });
    const lane = new OpencodeLane(server);
    const arrivals$ = new Observable<HookArrival>((sub) => {
      const s = server.events$
        .pipe(
          filter((e) => e.session !== undefined && ARRIVES.has(e.type)),
          map((e) => arrivalOf(e, opts.onError)),
        )
        .subscribe(sub);
      server.start();
      return s;
    });
    const source: BridgeSource = {
      arrivals$,
      lane,
      health: () => ({ source: server.state().kind }),
      close: async () => {
        await lane.close();
        await server.close();
      },
    };
    return source;
  },
};
