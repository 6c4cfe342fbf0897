// HTTP to an `opencode serve` server (1.18.33): JSON requests and the global event stream
// (`GET /api/event`). With OPENCODE_SERVER_PASSWORD set the server asks for HTTP Basic auth
// (user `opencode`, or OPENCODE_SERVER_USERNAME); the password is read from a mode-600 file at
// each call, so a fixed file takes effect without a restart. Failures are SteeringErrors:
// SOURCE_UNREACHABLE (no answer), SOURCE_UNAUTHORIZED (HTTP 401), CONFIG_INVALID (the file).
import { readTokenFile } from '../../protocol/secret.js';
import { SteeringError } from '../../protocol/errors.js';

export interface OpencodeClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:4096`. */
  url: string;
  /** A mode-600 file holding the server's OPENCODE_SERVER_PASSWORD; absent for an unsecured server. */
  passwordFile?: string;
  /** The Basic auth user (the server's OPENCODE_SERVER_USERNAME); `opencode` when absent. */
  username?: string;
  /** Per-request deadline (default 10 s); the event stream has none. */
  timeoutMs?: number;
}

/** An HTTP answer: its status and parsed JSON body (undefined when none or not JSON). */
interface OpencodeReply {
  status: number;
  body: unknown;
}

export interface OpencodeClient {
  readonly url: string;
  request(method: string, path: string, body?: unknown): Promise<OpencodeReply>;
  /** Opens `GET /api/event`, the server's one stream of every session's events. */
  events(signal: AbortSignal): Promise<Response>;
}

/** What a 401 means to the person running the adapter, and what to do about it. */
function unauthorizedMessage(url: string, file: string | undefined): string {
  return file === undefined
    ? `opencode server at ${url} requires a password (HTTP 401): pass --serve-password-file naming a mode-600 ` +
        'file that holds its OPENCODE_SERVER_PASSWORD'
    : `opencode server at ${url} refused the password in ${file} (HTTP 401): put the server's ` +
        'OPENCODE_SERVER_PASSWORD in that file (and its OPENCODE_SERVER_USERNAME in AEP_OPENCODE_USERNAME if set); ' +
        'the adapter retries with the file as it is then';
}

export function opencodeClient(o: OpencodeClientOptions): OpencodeClient {
  const url = o.url.replace(/\/+$/, '');
  const timeoutMs = o.timeoutMs ?? 10_000;
  const headers = (): Record<string, string> => {
    const h: Record<string, string> = { accept: 'application/json' };
    if (o.passwordFile !== undefined) {
      const basic = Buffer.from(`${o.username ?? 'opencode'}:${readTokenFile(o.passwordFile)}`).toString('base64');
      h.authorization = `Basic ${basic}`;
    }
    return h;
  };
  const unreachable = (err: unknown) =>
    new SteeringError('SOURCE_UNREACHABLE', `opencode server at ${url} does not answer: ${(err as Error).message}`, {
      cause: err,
    });
  const checked = (res: Response): Response => {
    if (res.status === 401) throw new SteeringError('SOURCE_UNAUTHORIZED', unauthorizedMessage(url, o.passwordFile));
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
    async events(signal) {
      const h: Record<string, string> = { ...headers(), accept: 'text/event-stream' };
      let res: Response;
      try {
        res = await fetch(`${url}/api/event`, { headers: h, signal });
      } catch (err) {
        throw unreachable(err);
      }
      return checked(res);
    },
  };
}
