// D21: which browsers and which names the relay answers. A page on another site must not read
// the stream or open a socket with a token it found (no wildcard CORS, an Origin allow-list),
// and a DNS name an attacker points at 127.0.0.1 must not reach a loopback relay (Host check).
// Clients that are not browsers send no Origin and are unaffected.
import { isIP } from 'node:net';
import { SteeringError } from '../protocol/errors.js';

/** The name part of a `Host` header: `[::1]:8787` → `::1`, `Relay.example:80` → `relay.example`. */
function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']') > 0 ? h.indexOf(']') : undefined);
  const colon = h.lastIndexOf(':');
  return (colon >= 0 && h.indexOf(':') === colon ? h.slice(0, colon) : h).replace(/\.$/, '');
}

/**
 * Undefined when `Host` names this relay: an IP literal (a rebinding attack needs a name),
 * `localhost`, or one of `served` (the bind name and `--allow-host` names). Otherwise the reason.
 */
export function checkHost(header: string | undefined, served: readonly string[]): string | undefined {
  if (header === undefined || header === '') return undefined;
  const name = hostName(header);
  if (isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost')) return undefined;
  if (served.some((s) => hostName(s) === name)) return undefined;
  return `this relay does not serve the name "${name}"; start it with --allow-host ${name} if that name is meant to reach it`;
}

/** `https://App.example:443/` → `https://app.example:443`: origins compare as scheme://host[:port]. */
const normalOrigin = (o: string): string => o.trim().toLowerCase().replace(/\/+$/, '');

/** Undefined when no `Origin` was sent (not a browser) or it is allowed; otherwise the reason. */
export function checkBrowserOrigin(origin: string | undefined, allowed: readonly string[]): string | undefined {
  if (origin === undefined) return undefined;
  const o = normalOrigin(origin);
  if (allowed.some((a) => normalOrigin(a) === o)) return undefined;
  return `browser origin ${origin} is not allowed; start the relay with --allow-origin ${origin} to let pages from it connect`;
}

/** CORS headers echoing one allowed origin, never `*`; none for a request without `Origin`. */
export function corsHeaders(origin: string | undefined): Record<string, string> {
  if (origin === undefined) return {};
  return {
    'access-control-allow-origin': origin,
    vary: 'origin',
    'access-control-allow-headers': 'authorization, content-type, aep-version, last-event-id',
    'access-control-allow-methods': 'GET, POST, OPTIONS',
  };
}

/** Checks `--allow-origin` values: full origins only, no wildcard. */
export function parseAllowedOrigins(values: readonly string[]): string[] {
  return values.map((v) => {
    const o = v.trim();
    if (o === '*' || !/^https?:\/\/[^/\s*]+\/?$/i.test(o)) {
      throw new SteeringError(
        'CONFIG_INVALID',
        `--allow-origin takes a full origin such as http://localhost:5173 (no "*", no path), got "${v}"`,
      );
    }
    return normalOrigin(o);
  });
}
