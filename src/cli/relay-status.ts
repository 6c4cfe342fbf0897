// What the adapter says about its relay link on stderr: connected, lost (with the reason, once
// per outage), back (the link re-claims every session at each hello, so "reconnected" means
// commands route here again). The link retries every second and reports each failed attempt;
// this says an outage once, and a new reason once, never once per retry. Nothing is said about
// the link before the hook endpoint listens, so a start that fails (a taken hook port) is never
// mistaken for an unreachable relay.
import type { Observable } from 'rxjs';
import type { SteeringError } from '../protocol/errors.js';

/** Codes a link reports while it cannot reach or enter the relay: an outage's reasons. */
const OUTAGE = new Set(['RELAY_UNREACHABLE', 'RELAY_UNAUTHORIZED']);
/** How long a lost link waits for its first failed attempt, to say the loss with its reason. */
const REASON_WAIT_MS = 1500;
const GOING_ON = 'hooks go on meanwhile, events wait in the log';
const TOKEN_FIX =
  "give the relay's token with --token or AEP_TOKEN (a loopback relay started without one uses AEP_STATE_DIR/token)";

/** The relay answered and refused the token (HTTP 401/403), whichever code the link gave it. */
const refused = (e: SteeringError): boolean => e.code === 'RELAY_UNAUTHORIZED' || /\bHTTP 40[13]\b/.test(e.message);

export interface RelayReporter {
  /** The link's errors: outage reasons are said once each, anything else goes to `report`. */
  onLinkError(e: SteeringError): void;
  /** The hook endpoint listens: from now on the link's state is said. */
  start(): void;
  /** Stopping (or the start failed): nothing more is said. */
  stop(): void;
}

export function relayReporter(
  url: string,
  state$: Observable<boolean>,
  say: (line: string) => void,
  report: (e: SteeringError) => void,
): RelayReporter {
  let live = false;
  let stopped = false;
  let up = false;
  let ever = false;
  /** Reasons said in this outage (digits folded, so a count or a port does not make a new one). */
  const said = new Set<string>();
  /** The outage has been said (the reasons after it are said once each). */
  let inOutage = false;
  let reason: SteeringError | undefined;
  let lostTimer: NodeJS.Timeout | undefined;
  const keyOf = (e: SteeringError) => `${e.code} ${e.message.replace(/\d+/g, '#')}`;
  // A refused token is not an unreachable relay: said as what it is, with where the token comes from.
  const because = (e: SteeringError) => `; reason: ${e.message} [${e.code}]${refused(e) ? `; ${TOKEN_FIX}` : ''}`;

  const sayOutage = (e: SteeringError | undefined) => {
    clearTimeout(lostTimer);
    lostTimer = undefined;
    inOutage = true;
    if (e !== undefined) said.add(keyOf(e));
    const tail = e === undefined ? ' (the connection closed)' : because(e);
    if (e !== undefined && refused(e))
      say(`aep-steer adapter: relay refused this adapter: ${url}; retrying every second (${GOING_ON})${tail}`);
    else
      say(
        ever
          ? `aep-steer adapter: relay lost: ${url}; reconnecting every second (${GOING_ON})${tail}`
          : `aep-steer adapter: relay unreachable: ${url}; retrying every second (${GOING_ON})${tail}`,
      );
  };

  const onState = (connected: boolean) => {
    if (stopped || connected === up) return;
    up = connected;
    if (!live) return; // said at start()
    if (connected) {
      const after = inOutage || lostTimer !== undefined;
      clearTimeout(lostTimer);
      lostTimer = undefined;
      inOutage = false;
      said.clear();
      reason = undefined;
      say(
        ever
          ? `aep-steer adapter: relay reconnected: ${url}; its sessions are claimed again`
          : `aep-steer adapter: relay connected: ${url}${after ? ' (reachable again)' : ''}`,
      );
      ever = true;
      return;
    }
    // Lost: say it with the first failed attempt's reason, or without one if none comes soon.
    const pending = reason;
    reason = undefined;
    if (pending !== undefined) return sayOutage(pending);
    lostTimer = setTimeout(() => sayOutage(undefined), REASON_WAIT_MS);
    lostTimer.unref();
  };
  // Subscribed at once: the link's state is a plain subject, and a hello before start() counts.
  const sub = state$.subscribe(onState);

  return {
    onLinkError(e) {
      if (stopped) return;
      if (!OUTAGE.has(e.code)) return report(e);
      if (!live || up) {
        reason ??= e; // said with the outage it belongs to
        return;
      }
      if (said.has(keyOf(e))) return;
      if (!inOutage) return sayOutage(e);
      said.add(keyOf(e));
      say(
        `aep-steer adapter: relay ${refused(e) ? 'now refuses this adapter' : 'still unreachable'}: ${url}${because(e)}`,
      );
    },
    start() {
      if (stopped || live) return;
      live = true;
      if (up) {
        reason = undefined;
        ever = true;
        say(`aep-steer adapter: relay connected: ${url}`);
      } else if (reason !== undefined) {
        const first = reason;
        reason = undefined;
        sayOutage(first);
      }
    },
    stop() {
      stopped = true;
      clearTimeout(lostTimer);
      sub.unsubscribe();
    },
  };
}
