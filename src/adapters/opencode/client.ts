// HTTP to an `opencode serve` server (1.18.33): JSON requests and the global event stream
// (`GET /api/event`). With OPENCODE_SERVER_PASSWORD set the server asks for HTTP Basic auth
// (user `opencode`, or OPENCODE_SERVER_USERNAME); the password is read from a mode-600 file at
// each call, so a fixed file takes effect without a restart. Failures are SteeringErrors:
// SOURCE_UNREACHABLE (no answer), SOURCE_UNAUTHORIZED (HTTP 401), CONFIG_INVALID (the file).
import { readTokenFile } from '../../protocol/secret.js';
import { serverHttp } from '../server-http.js';

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
  /** Opens `GET /event`, the V1 stream (v1-stream.ts reads the V1 loop's steps there). */
  v1Events(signal: AbortSignal): Promise<Response>;
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
  const http = serverHttp({
    url: o.url,
    name: 'opencode server',
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    authorization: () =>
      o.passwordFile === undefined
        ? undefined
        : `Basic ${Buffer.from(`${o.username ?? 'opencode'}:${readTokenFile(o.passwordFile)}`).toString('base64')}`,
    unauthorized: (url) => unauthorizedMessage(url, o.passwordFile),
  });
  return {
    url: http.url,
    request: (method, path, body) => http.request(method, path, body),
    events: (signal) => http.stream('/api/event', {}, signal),
    v1Events: (signal) => http.stream('/event', {}, signal),
  };
}
