// The relay process: HTTP ingest and discovery, SSE consume, the WebSocket duplex (via `ws`)
// and /healthz on one port (AEP-0003 §3; aep-wire §6). Default bind 127.0.0.1:8787.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import type { AepEvent } from '../protocol/envelope.js';
import { HttpError, SteeringError, SubscribeError } from '../protocol/errors.js';
import { relayCheck } from '../protocol/validate.js';
import { accessPolicy, bearerToken, loadTokensFile, samePrincipal, type Principal, type TokenEntry } from './acl.js';
import { DEFAULT_CLAIM_LEASE_MS } from './claims.js';
import { oneLine, RelayCore, SUPPORTED_VERSIONS, type Incoming, type Refusal, type RelayLimits } from './core.js';
import { checkBrowserOrigin, checkHost, corsHeaders } from './origin.js';
import { DEFAULT_BACKPRESSURE, Hub, type BackpressureLimits, type Channel, type Sink } from './hub.js';
import { SocketConnection } from './socket.js';
import { DEFAULT_BUFFER, DEFAULT_MAX_SESSIONS, type FaultAwareStore, type Position } from './session-store.js';
import { ThreadedStore } from './store-thread.js';
import { FILE_STORE_ADVICE, isStoreUnavailable } from './store-fault.js';
import { parseLastEventId, parseSubscription, positionId } from './subscription.js';
import { watchTokensFile, type TokensWatch } from './tokens-file.js';

export const DEFAULT_PORT = 8787;
export const DEFAULT_HOST = '127.0.0.1';

export interface RelayOptions {
  host?: string;
  /** 0 picks an ephemeral port. */
  port?: number;
  /** A SQLite file path, or `:memory:`. */
  storePath?: string;
  /** Another store behind the same core (for example JetStream, `--nats`); the relay closes it. */
  store?: FaultAwareStore;
  bufferCap?: number;
  sessionCap?: number;
  /** Single shared token with full control rights (`AEP_TOKEN`). */
  token?: string;
  /** Tokens-file entries (D18). */
  tokens?: TokenEntry[];
  /**
   * D39: the tokens file, read again when it changes: removed or changed tokens are refused from
   * then on and their open connections closed. Read at start unless `tokens` holds its entries.
   */
  tokensFile?: string;
  /** How often the tokens file is stat'ed besides fs.watch (default 1000 ms; 0: no poll). */
  tokensPollMs?: number;
  /** False: the tokens file is read again only on `reloadSignal` or `reloadTokens()`. */
  watchTokens?: boolean;
  /** A signal that reads the tokens file again (the CLI: SIGHUP). */
  reloadSignal?: NodeJS.Signals;
  limits?: Partial<RelayLimits>;
  backpressure?: BackpressureLimits;
  /** Keep-alive interval for WS `ping` frames and SSE `: ping` comments (reference: 25 s). */
  pingIntervalMs?: number;
  /** Operator log lines (never tokens or query strings). */
  log?: (line: string) => void;
  /** D19: how long a closed claimant's sessions stay closed to other identities. */
  claimLeaseMs?: number;
  /** D21: browser origins allowed to use the relay (`--allow-origin`); default none. */
  allowOrigins?: string[];
  /** D21: extra `Host` names served besides IP literals, `localhost` and the bind name (`--allow-host`). */
  allowHosts?: string[];
}

export interface RelayStats {
  connections: number;
  subscriptions: number;
  ingested: number;
  duplicates: number;
  forwarded: number;
  refused: number;
  dropped: number;
  disconnected: number;
  sessions: number;
  events: number;
}

export interface RelayHandle {
  host: string;
  port: number;
  /** `http://host:port` */
  url: string;
  /** `ws://host:port/socket` */
  socketUrl: string;
  stats(): RelayStats;
  /** D39: reads the tokens file again now (no-op without one). */
  reloadTokens(why?: string): void;
  close(): Promise<void>;
}

/** The CORS headers of a response, set per request once its origin was checked (D21). */
const CORS = Symbol('cors');
type Res = ServerResponse & { [CORS]?: Record<string, string> };

function json(res: Res, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...res[CORS],
  });
  res.end(text);
}

/** HTTP status of a relay refusal of a POSTed command or event (D17, D19). */
const REFUSAL_STATUS: Record<Refusal['code'], number> = {
  unauthorized: 403,
  unsupported: 422,
  ambiguous: 409,
  'no-route': 409,
  'store-unavailable': 503,
};

/** Reads a request body up to `max` bytes; beyond it the rest is drained and a 413 follows. */
function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let over = false;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) over = true;
      if (!over) chunks.push(c);
    });
    req.on('end', () =>
      over
        ? reject(new HttpError(413, { error: 'payload-too-large', max_bytes: max }))
        : resolve(Buffer.concat(chunks)),
    );
    req.on('error', reject);
  });
}

/** Parses and checks a whole POST body before anything is ingested (reject-whole, aep-wire §8.6). */
function parseIngest(body: string, ndjson: boolean, maxBatch: number): Incoming[] {
  const lines = ndjson
    ? body
        .split('\n')
        .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
        .filter((l) => l.trim() !== '')
    : [body];
  if (lines.length > maxBatch)
    throw new HttpError(413, { error: 'too-many-events', max: maxBatch, count: lines.length });
  if (lines.length === 0) throw new HttpError(400, { error: 'invalid-event', detail: 'the body holds no event' });
  return lines.map((text, line) => {
    let v: unknown;
    try {
      v = JSON.parse(text);
    } catch (err) {
      throw new HttpError(400, { error: 'invalid-json', detail: (err as Error).message, line });
    }
    const issue = relayCheck(v);
    if (issue !== undefined)
      throw new HttpError(400, { error: 'invalid-event', detail: `${issue.rule}: ${issue.message}`, line });
    return { event: v as AepEvent, line: oneLine(text) };
  });
}

/** How often a store that keeps refusing writes is reported; the refusals between are counted. */
export const STORE_FAILURE_REPORT_MS = 10_000;

/**
 * A store that keeps refusing writes (a full disk, NATS down) is reported once per
 * STORE_FAILURE_REPORT_MS with the count since the last line, not once per batch, and says what
 * to do about that store (`advice`).
 */
export function storeFailures(
  log: (line: string) => void,
  everyMs = STORE_FAILURE_REPORT_MS,
  now: () => number = Date.now,
  advice = FILE_STORE_ADVICE,
): (err: Error) => void {
  let last = -Infinity;
  let held = 0;
  return (err) => {
    const t = now();
    if (t - last < everyMs) {
      held += 1;
      return;
    }
    const more = held > 0 ? ` (and ${held} more since the last report)` : '';
    const told = isStoreUnavailable(err) ? ', their senders were told store-unavailable' : '';
    log(
      `relay: store write failed: ${err.message}${more}; those events were fanned out but not kept${told}. ` +
        `${advice}: adapters resend from their logs what it did not keep (D23)`,
    );
    last = t;
    held = 0;
  };
}

export async function startRelay(opts: RelayOptions = {}): Promise<RelayHandle> {
  const log = opts.log ?? (() => {});
  const tokensFile = opts.tokensFile;
  // A bad tokens file at start is a start error, before any store is opened.
  const entries = opts.tokens ?? (tokensFile !== undefined ? loadTokensFile(tokensFile) : undefined);
  const store: FaultAwareStore =
    opts.store ??
    (await ThreadedStore.open({
      path: opts.storePath ?? ':memory:',
      bufferCap: opts.bufferCap ?? DEFAULT_BUFFER,
      sessionCap: opts.sessionCap ?? DEFAULT_MAX_SESSIONS,
    }));
  const policyOf = (list: TokenEntry[] | undefined) =>
    accessPolicy({ token: opts.token, entries: list, fromFile: tokensFile !== undefined });
  let policy = policyOf(entries);
  const reportFailures = storeFailures(log, STORE_FAILURE_REPORT_MS, Date.now, store.advice);
  const limits: RelayLimits = {
    maxBody: 16 << 20,
    maxBatch: 10_000,
    maxFrom: opts.sessionCap ?? DEFAULT_MAX_SESSIONS,
    maxSubscriptions: 64,
    ...opts.limits,
  };
  const core = new RelayCore(
    store,
    new Hub(opts.backpressure ?? DEFAULT_BACKPRESSURE),
    policy,
    limits,
    reportFailures,
    opts.claimLeaseMs ?? DEFAULT_CLAIM_LEASE_MS,
  );
  const allowOrigins = opts.allowOrigins ?? [];
  const host = opts.host || DEFAULT_HOST;
  const servedHosts = [host, ...(opts.allowHosts ?? [])];
  const sockets = new Set<SocketConnection>();
  const streams = new Set<ServerResponse>();
  // D39: the token each live socket and SSE stream authenticated with, asked again on a reload.
  const held = new Map<SocketConnection | ServerResponse, { token: string | undefined; principal: Principal }>();

  const tokenOf = (req: IncomingMessage, url: URL): string | undefined =>
    bearerToken(req.headers.authorization, url.searchParams);

  /** D39: new entries in force; every connection whose token lost or changed its rights is closed. */
  function applyTokens(next: TokenEntry[]): void {
    policy = policyOf(next);
    core.policy = policy;
    for (const [conn, h] of held) {
      const now = policy.authenticate(h.token);
      if (now !== undefined && samePrincipal(now, h.principal)) continue;
      const detail =
        now === undefined
          ? `the token of ${h.principal.identity} was revoked (removed from the tokens file)`
          : `the rights of ${h.principal.identity} changed in the tokens file; reconnect to be served under them`;
      held.delete(conn);
      if (conn instanceof SocketConnection) {
        sockets.delete(conn);
        conn.revoke(detail);
      } else {
        streams.delete(conn);
        conn.end(`: revoked ${detail}\n\n`);
      }
    }
  }

  async function ingest(req: IncomingMessage, res: Res, token: string | undefined): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json' && type !== 'application/x-ndjson') {
      throw new HttpError(415, {
        error: 'unsupported-media-type',
        detail: 'use application/json or application/x-ndjson',
      });
    }
    // The version gate comes before the body is read (AEP-0003 §3.2).
    const version = req.headers['aep-version'];
    if (typeof version !== 'string' || !(SUPPORTED_VERSIONS as readonly string[]).includes(version.trim())) {
      throw new HttpError(426, { error: 'version-unsupported', versions: [...SUPPORTED_VERSIONS] });
    }
    const body = (await readBody(req, limits.maxBody)).toString('utf8');
    const batch = parseIngest(body, type === 'application/x-ndjson', limits.maxBatch);
    // Asked after the body arrived: a token revoked while it was uploading is refused (D39).
    const who = policy.authenticate(token);
    if (who === undefined) return json(res, 401, { error: 'unauthorized' });
    // Events and commands are authorized and routed exactly as over WebSocket; the refusal is
    // the response, with the rule, and nothing of the body is kept (D17, D19).
    const r = await core.ingest(batch, who);
    if (!r.ok) {
      // `retry: false` as on the socket: sending the same body again cannot change this answer.
      return json(res, REFUSAL_STATUS[r.refusal.code], {
        type: 'error',
        error: r.refusal.code,
        code: r.refusal.code,
        cause: r.cause,
        detail: r.refusal.detail,
        line: r.line,
        ...(r.refusal.retry === false ? { retry: false } : {}),
      });
    }
    json(res, 202, { accepted: r.accepted, stored: r.stored, ...(r.routed.length > 0 ? { routed: r.routed } : {}) });
  }

  async function stream(
    req: IncomingMessage,
    res: Res,
    url: URL,
    viewer: Principal,
    token: string | undefined,
  ): Promise<void> {
    const q = url.searchParams;
    let spec: ReturnType<typeof parseSubscription>;
    let filter: unknown;
    try {
      let from: unknown;
      try {
        filter = q.has('filter') ? JSON.parse(q.get('filter')!) : undefined;
        from = q.get('from') === 'all' ? 'all' : q.has('from') ? JSON.parse(q.get('from')!) : undefined;
      } catch (err) {
        throw new SubscribeError('invalid-filter', `filter and from are URL-encoded JSON: ${(err as Error).message}`);
      }
      spec = parseSubscription({ filter, capture: q.get('capture') ?? undefined, from }, limits.maxFrom);
    } catch (err) {
      if (err instanceof SubscribeError) return json(res, 400, { error: err.code, detail: err.message });
      throw err;
    }
    if (spec.from === undefined) {
      const last = parseLastEventId(req.headers['last-event-id'] as string | undefined);
      if (last) spec.from = [last];
    }
    const live = q.get('live') !== '0';
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-cache',
      connection: 'keep-alive',
      ...res[CORS],
    });
    res.write(': connected\n\n');
    const channel: Channel = {
      pressure: () => res.writableLength,
      overflow: () => {
        // SSE has no closing frame: end the stream and let the consumer resume (AEP-0003 §8.4).
        res.end(': closing backpressure\n\n');
        streams.delete(res);
      },
    };
    const sink: Sink = {
      sub: 'sse',
      channel,
      spec,
      delivered: new Map<string, Position>(),
      write: (text, e) => {
        const id = positionId(e);
        res.write(`event: ${e.type}\ndata: ${text}\n${id === undefined ? '' : `id: ${id}\n`}\n`);
      },
      exhausted: (session, p) => res.write(`: replay-exhausted ${session} ${p.epoch}:${p.seq}\n\n`),
    };
    const session = (filter as { session?: unknown } | undefined)?.session;
    const alsoSession = !live && typeof session === 'string' ? session : undefined;
    res.on('close', () => {
      core.hub.remove(sink);
      streams.delete(res);
      held.delete(res);
    });
    held.set(res, { token, principal: viewer });
    await core.subscribe(sink, spec, { live, alsoSession, viewer });
    if (!live) {
      res.end(': replay-complete\n\n');
      return;
    }
    if (!res.writableEnded && !res.destroyed) streams.add(res);
  }

  async function route(req: IncomingMessage, res: Res): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://relay');
    // D21: DNS rebinding (a name that resolves to this machine) and foreign browser pages stop here.
    const host = checkHost(req.headers.host, servedHosts);
    if (host !== undefined) return json(res, 421, { error: 'host-not-allowed', detail: host });
    const origin = checkBrowserOrigin(req.headers.origin, allowOrigins);
    if (origin !== undefined) return json(res, 403, { error: 'origin-not-allowed', detail: origin });
    res[CORS] = corsHeaders(req.headers.origin);
    if (req.method === 'OPTIONS') {
      res.writeHead(204, res[CORS]);
      res.end();
      return;
    }
    const token = tokenOf(req, url);
    const principal = policy.authenticate(token);
    if (req.method === 'GET' && url.pathname === '/healthz') {
      // Counts only for an authorized caller (aep-wire §3.8).
      // 503 while the store's engine is down; its state and the counts only for an authorized caller.
      // D38: a store that cannot write is down too, and the reason is said (it names no secret).
      const engine = store.health();
      const reason = store.unavailable?.() ?? (typeof engine.reason === 'string' ? engine.reason : undefined);
      const ok = engine.ok && reason === undefined;
      const why = reason === undefined ? {} : { reason };
      return json(res, ok ? 200 : 503, principal ? { ok, ...why, store: engine, ...stats() } : { ok, ...why });
    }
    if (principal === undefined) return json(res, 401, { error: 'unauthorized' });
    if (req.method === 'GET' && (url.pathname === '/events' || url.pathname === '/.well-known/aep'))
      return json(res, 200, core.discovery());
    if (req.method === 'POST' && url.pathname === '/events') return ingest(req, res, token);
    if (req.method === 'GET' && url.pathname === '/stream') return stream(req, res, url, principal, token);
    return json(res, 404, { error: 'not-found' });
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (err instanceof HttpError) return json(res, err.status, err.body);
      log(`relay: ${req.method} ${new URL(req.url ?? '/', 'http://relay').pathname} failed: ${(err as Error).message}`);
      if (!res.headersSent) json(res, 500, { error: 'internal' });
      else res.end();
    });
  });

  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxBody });
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    const token = tokenOf(req, url);
    const principal = policy.authenticate(token);
    if (url.pathname !== '/socket') {
      socket.destroy();
      return;
    }
    // D21: a browser page may open a socket only from an allowed origin; a rebinding name never.
    const refusal = checkHost(req.headers.host, servedHosts) ?? checkBrowserOrigin(req.headers.origin, allowOrigins);
    if (refusal !== undefined) {
      socket.end(
        `HTTP/1.1 403 Forbidden\r\nconnection: close\r\ncontent-type: text/plain\r\ncontent-length: ${Buffer.byteLength(refusal)}\r\n\r\n${refusal}`,
      );
      return;
    }
    if (principal === undefined) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const conn = new SocketConnection(ws, core, principal, socket);
      sockets.add(conn);
      held.set(conn, { token, principal });
      ws.on('close', () => {
        sockets.delete(conn);
        held.delete(conn);
      });
    });
  });

  const timer = setInterval(() => {
    for (const s of sockets) s.ping();
    for (const r of streams) r.write(': ping\n\n');
  }, opts.pingIntervalMs ?? 25_000);
  timer.unref();

  function stats(): RelayStats {
    core.flushSoon();
    const c = store.counts();
    return {
      connections: sockets.size,
      subscriptions: core.hub.size,
      ...core.counters,
      dropped: core.hub.counters.dropped,
      disconnected: core.hub.counters.disconnected,
      sessions: c.sessions,
      events: c.events,
    };
  }

  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      void store.close();
      reject(
        err.code === 'EADDRINUSE'
          ? new SteeringError('PORT_IN_USE', `relay port ${opts.port ?? DEFAULT_PORT} on ${host} is in use`, {
              cause: err,
            })
          : err,
      );
    };
    server.once('error', onError);
    server.listen(opts.port ?? DEFAULT_PORT, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  // Watched once the relay listens: a relay that failed to start leaves no watch or signal behind.
  const tokensWatch: TokensWatch | undefined =
    tokensFile === undefined
      ? undefined
      : watchTokensFile(tokensFile, {
          initial: entries ?? [],
          onChange: applyTokens,
          log,
          ...(opts.tokensPollMs !== undefined ? { pollMs: opts.tokensPollMs } : {}),
          ...(opts.watchTokens === false ? { watch: false } : {}),
        });
  const onReloadSignal = () => tokensWatch?.reload(opts.reloadSignal ?? 'signal');
  if (opts.reloadSignal !== undefined && tokensWatch !== undefined) process.on(opts.reloadSignal, onReloadSignal);
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (opts.port ?? DEFAULT_PORT);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  log(
    `relay: listening on http://${shownHost}:${port} (store ${store.path}, ${policy.required ? 'token required' : 'no token: watch-only'})`,
  );

  let closing: Promise<void> | undefined;
  return {
    host,
    port,
    url: `http://${shownHost}:${port}`,
    socketUrl: `ws://${shownHost}:${port}/socket`,
    stats,
    reloadTokens: (why = 'asked') => tokensWatch?.reload(why),
    close() {
      closing ??= (async () => {
        clearInterval(timer);
        tokensWatch?.close();
        if (opts.reloadSignal !== undefined) process.off(opts.reloadSignal, onReloadSignal);
        for (const r of streams) r.end(': shutting-down\n\n');
        // WS peers get close 1001; one that does not answer within a second is cut.
        const gone = [...wss.clients].map((c) => new Promise<void>((resolve) => c.once('close', () => resolve())));
        for (const s of sockets) s.shutdown();
        let cut: NodeJS.Timeout | undefined;
        await Promise.race([Promise.all(gone), new Promise<void>((resolve) => (cut = setTimeout(resolve, 1000)))]);
        clearTimeout(cut);
        for (const c of wss.clients) c.terminate();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
        await core.flush();
        await store.close();
      })();
      return closing;
    },
  };
}
