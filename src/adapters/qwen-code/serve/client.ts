// HTTP to a `qwen serve` daemon: JSON requests and the per-session SSE stream, with the bearer
// token read from a mode-600 file at each call (a fixed or rotated file takes effect without a
// restart). Failures are SteeringErrors the lane reports: SOURCE_UNREACHABLE (no answer),
// SOURCE_UNAUTHORIZED (HTTP 401, naming the token file), CONFIG_INVALID (the file itself).
import { SteeringError } from '../../../protocol/errors.js';
import { readTokenFile } from '../../../protocol/secret.js';
import { serverHttp } from '../../server-http.js';
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
  const http = serverHttp({
    url: o.url,
    name: 'qwen serve',
    ...(o.timeoutMs === undefined ? {} : { timeoutMs: o.timeoutMs }),
    authorization: () => (o.tokenFile === undefined ? undefined : `Bearer ${readTokenFile(o.tokenFile)}`),
    unauthorized: (url) => unauthorizedMessage(url, o.tokenFile),
  });
  return {
    url: http.url,
    request: (method, path, body) => http.request(method, path, body) as Promise<ServeReply>,
    events: (session, lastEventId, signal) =>
      http.stream(
        `/session/${encodeURIComponent(session)}/events`,
        lastEventId === undefined ? {} : { 'last-event-id': String(lastEventId) },
        signal,
      ),
  };
}

/**
 * The daemon's live sessions, and the workspace they are listed under (`known`: asked once already;
 * otherwise read from `/capabilities`). Anything but the daemon's answers is SOURCE_UNREACHABLE.
 */
export async function liveSessions(
  client: ServeClient,
  known: string | undefined,
): Promise<{ workspace: string; live: Set<string> }> {
  let workspace = known;
  if (workspace === undefined) {
    const caps = await client.request('GET', '/capabilities');
    const cwd = (caps.body as { workspaceCwd?: unknown } | undefined)?.workspaceCwd;
    if (caps.status !== 200 || typeof cwd !== 'string')
      throw new SteeringError('SOURCE_UNREACHABLE', `${client.url} is not a qwen serve daemon (/capabilities)`);
    workspace = cwd;
  }
  const r = await client.request('GET', `/workspaces/${encodeURIComponent(workspace)}/sessions/live-state`);
  if (r.status !== 200)
    throw new SteeringError('SOURCE_UNREACHABLE', `qwen serve answered its session list with HTTP ${r.status}`);
  const list = (r.body as { sessions?: { sessionId?: unknown }[] } | undefined)?.sessions ?? [];
  return { workspace, live: new Set(list.flatMap((s) => (typeof s.sessionId === 'string' ? [s.sessionId] : []))) };
}
