// HTTP to a vendor's own local server (`qwen serve`, `opencode serve`): JSON calls with a deadline
// and an event stream without one. Credentials come from a file read at each call, so a fixed file
// takes effect without a restart. An unanswered call is SOURCE_UNREACHABLE, a 401 is
// SOURCE_UNAUTHORIZED with the vendor's own sentence of what to do.
import { SteeringError } from '../protocol/errors.js';

export interface ServerHttp {
  /** The base URL, without a trailing slash. */
  readonly url: string;
  /** A JSON call: its status and parsed body (undefined when none or not JSON). */
  request(method: string, path: string, body?: unknown): Promise<{ status: number; body: unknown }>;
  /** Opens a stream (`text/event-stream`) at `path`, with extra headers; no deadline. */
  stream(path: string, extra: Record<string, string>, signal: AbortSignal): Promise<Response>;
}

export interface ServerHttpOptions {
  url: string;
  /** How messages name the server: `qwen serve`, `opencode server`. */
  name: string;
  /** Per-request deadline (default 10 s). */
  timeoutMs?: number;
  /** The authorization header's value for this call, or undefined when the server takes none. */
  authorization(): string | undefined;
  /** What a 401 means to the person running the adapter, and what to do about it. */
  unauthorized(url: string): string;
}

export function serverHttp(o: ServerHttpOptions): ServerHttp {
  const url = o.url.replace(/\/+$/, '');
  const timeoutMs = o.timeoutMs ?? 10_000;
  const headers = (accept: string): Record<string, string> => {
    const auth = o.authorization();
    return auth === undefined ? { accept } : { accept, authorization: auth };
  };
  const send = async (path: string, init: RequestInit): Promise<Response> => {
    let res: Response;
    try {
      res = await fetch(`${url}${path}`, init);
    } catch (err) {
      throw new SteeringError('SOURCE_UNREACHABLE', `${o.name} at ${url} does not answer: ${(err as Error).message}`, {
        cause: err,
      });
    }
    if (res.status === 401) throw new SteeringError('SOURCE_UNAUTHORIZED', o.unauthorized(url));
    return res;
  };
  return {
    url,
    async request(method, path, body) {
      const h = headers('application/json');
      if (body !== undefined) h['content-type'] = 'application/json';
      const res = await send(path, {
        method,
        headers: h,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const text = await res.text().catch(() => '');
      try {
        return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
      } catch {
        return { status: res.status, body: undefined };
      }
    },
    stream: (path, extra, signal) => send(path, { headers: { ...headers('text/event-stream'), ...extra }, signal }),
  };
}
