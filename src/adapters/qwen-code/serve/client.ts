// HTTP to a `qwen serve` daemon: JSON requests and the per-session SSE stream, with the bearer
// token read from a mode-600 file at each call (a fixed or rotated file takes effect without a
// restart). Failures are SteeringErrors the lane reports: SOURCE_UNREACHABLE (no answer),
// SOURCE_UNAUTHORIZED (HTTP 401, naming the token file), CONFIG_INVALID (the file itself).
import { readTokenFile } from '../../../protocol/secret.js';
import { SteeringError } from '../../../protocol/errors.js';
import type { ServeReply } from './maps.js';

export interface ServeClientOptions {
  /** The daemon's base URL, e.g. `http://127.0.0.1:4170`. */
  url: string;
  /** A mode-600 file holding the daemon's bearer token; absent for a token-less loopback daemon. */
  tokenFile?: string;
  /** Per-request deadline (default 10 s); the SSE stream has none. */
  timeoutMs?: number;
}

export interface ServeClient {
  readonly url: string;
  request(method: string, path: string, body?: unknown): Promise<ServeReply>;
  /** Opens `GET /session/:id/events`, resuming after `lastEventId` when given. */
  events(session: string, lastEventId: number | undefined, signal: AbortSignal): Promise<Response>;
}

/** What a 401 means to the person running the adapter, and what to do about it. */
function unauthorizedMessage(url: string, tokenFile: string | undefined): string {
  return tokenFile === undefined
    ? `qwen serve at ${url} requires a bearer token (HTTP 401): pass --serve-token-file naming a mode-600 file ` +
        'that holds its --token or QWEN_SERVER_TOKEN'
    : `qwen serve at ${url} refused the token in ${tokenFile} (HTTP 401): put the daemon's --token or ` +
        'QWEN_SERVER_TOKEN in that file; the adapter retries with the file as it is then';
}

export function serveClient(o: ServeClientOptions): ServeClient {
  const url = o.url.replace(/\/+$/, '');
  const timeoutMs = o.timeoutMs ?? 10_000;
  const headers = (): Record<string, string> => {
    const h: Record<string, string> = { accept: 'application/json' };
    if (o.tokenFile !== undefined) h.authorization = `Bearer ${readTokenFile(o.tokenFile)}`;
    return h;
  };
  const unreachable = (err: unknown) =>
    new SteeringError('SOURCE_UNREACHABLE', `qwen serve at ${url} does not answer: ${(err as Error).message}`, {
      cause: err,
    });
  const checked = (res: Response): Response => {
    if (res.status === 401) throw new SteeringError('SOURCE_UNAUTHORIZED', unauthorizedMessage(url, o.tokenFile));
    return res;
  };
  return {
    url,
    async request(method, path, body) {
      const h = headers();
      if (body !== undefined) h['content-type'] = 'application/json';
      let res: Response;
      try {
        res = await fetch(`${url}${path}`, {
          method,
          headers: h,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          signal: AbortSignal.timeout(timeoutMs),
        });
      } catch (err) {
        throw unreachable(err);
      }
      checked(res);
      const text = await res.text().catch(() => '');
      let parsed: unknown;
      try {
        parsed = text === '' ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      return { status: res.status, body: parsed };
    },
    async events(session, lastEventId, signal) {
      const h: Record<string, string> = { ...headers(), accept: 'text/event-stream' };
      if (lastEventId !== undefined) h['last-event-id'] = String(lastEventId);
      let res: Response;
      try {
        res = await fetch(`${url}/session/${encodeURIComponent(session)}/events`, { headers: h, signal });
      } catch (err) {
        throw unreachable(err);
      }
      return checked(res);
    },
  };
}
