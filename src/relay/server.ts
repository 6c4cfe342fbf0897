// The relay process: HTTP ingest and discovery, SSE consume (http.ts, sse.ts), the WebSocket
// duplex (via `ws`) and /healthz on one port (AEP-0003 §3; aep-wire §6). Default bind
// 127.0.0.1:8787. This file opens the store and the core, listens, and closes them again.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { SteeringError } from '../protocol/errors.js';
import { accessPolicy, loadTokensFile, type AccessPolicy, type TokenEntry } from './acl.js';
import { DEFAULT_CLAIM_LEASE_MS } from './claims.js';
import { Connections } from './connections.js';
import { RelayCore, type RelayLimits } from './core.js';
import { httpHandler, tokenOf } from './http.js';
import { checkBrowserOrigin, checkHost } from './origin.js';
import { DEFAULT_BACKPRESSURE, Hub, type BackpressureLimits } from './hub.js';
import { SocketConnection } from './socket.js';
import { DEFAULT_BUFFER, DEFAULT_MAX_SESSIONS, type FaultAwareStore } from './session-store.js';
import { ThreadedStore } from './store-thread.js';
import { auditBlock, ensureSigningKey } from './signing-key.js';
import { streamCheckpoints, type Ticker } from './checkpoint-stream.js';
import { FILE_STORE_ADVICE, isStoreUnavailable } from './store-fault.js';
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
  /** D47: the Ed25519 key file that signs the store's chain checkpoints, made there if absent. */
  signingKey?: string;
  /** D47: the clock of the idle checkpoint tick (a test's own). */
  checkpointTicker?: Ticker;
}

interface RelayStats {
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

/** How often a store that keeps refusing writes is reported; the refusals between are counted. */
const STORE_FAILURE_REPORT_MS = 10_000;

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
  const signing = opts.signingKey === undefined ? undefined : ensureSigningKey(opts.signingKey);
  const store: FaultAwareStore =
    opts.store ??
    (await ThreadedStore.open({
      path: opts.storePath ?? ':memory:',
      bufferCap: opts.bufferCap ?? DEFAULT_BUFFER,
      sessionCap: opts.sessionCap ?? DEFAULT_MAX_SESSIONS,
      ...(opts.signingKey !== undefined ? { signingKey: opts.signingKey } : {}),
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
  if (signing !== undefined) core.audit = auditBlock(signing);
  const checkpointFailed = (err: Error) =>
    log(`relay: idle checkpoint not signed: ${err.message}; a later tick signs it`);
  const stopCheckpoints = streamCheckpoints(store, core.hub, checkpointFailed, opts.checkpointTicker);
  const allowOrigins = opts.allowOrigins ?? [];
  const host = opts.host || DEFAULT_HOST;
  const servedHosts = [host, ...(opts.allowHosts ?? [])];
  const conns = new Connections();

  /** D39: new entries in force; every connection whose token lost or changed its rights is closed. */
  function applyTokens(next: TokenEntry[]): void {
    policy = policyOf(next);
    core.policy = policy;
    conns.revoke(policy);
  }
  const stats = (): RelayStats => relayStats(core, store, conns);
  const server = createServer(
    httpHandler({ core, store, conns, policy: () => policy, servedHosts, allowOrigins, stats, log }),
  );
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxBody });
  server.on(
    'upgrade',
    upgradeHandler(wss, core, conns, () => policy, servedHosts, allowOrigins),
  );

  const timer = setInterval(() => conns.ping(), opts.pingIntervalMs ?? 25_000);
  timer.unref();

  await listen(server, opts.port ?? DEFAULT_PORT, host, store);
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
        stopCheckpoints();
        tokensWatch?.close();
        if (opts.reloadSignal !== undefined) process.off(opts.reloadSignal, onReloadSignal);
        await shutDown(server, wss, conns);
        await core.flush();
        // D47: the rows no checkpoint covers yet are signed before the store closes.
        await Promise.resolve(store.checkpointIdle?.()).catch(checkpointFailed);
        await store.close();
      })();
      return closing;
    },
  };
}

/** The WebSocket upgrade on `/socket`: checked like an HTTP request (D21), then one SocketConnection. */
function upgradeHandler(
  wss: WebSocketServer,
  core: RelayCore,
  conns: Connections,
  policy: () => AccessPolicy,
  servedHosts: string[],
  allowOrigins: string[],
): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  return (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://relay');
    const token = tokenOf(req, url);
    const principal = policy().authenticate(token);
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
      conns.addSocket(conn, token, principal);
      ws.on('close', () => conns.dropSocket(conn));
    });
  };
}

function relayStats(core: RelayCore, store: FaultAwareStore, conns: Connections): RelayStats {
  core.flushSoon();
  const c = store.counts();
  return {
    connections: conns.sockets.size,
    subscriptions: core.hub.size,
    ...core.counters,
    dropped: core.hub.counters.dropped,
    disconnected: core.hub.counters.disconnected,
    sessions: c.sessions,
    events: c.events,
  };
}

/** Listens on `port`; a port in use is PORT_IN_USE, and the store opened for the relay is closed. */
function listen(server: Server, port: number, host: string, store: FaultAwareStore): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      void store.close();
      reject(
        err.code === 'EADDRINUSE'
          ? new SteeringError('PORT_IN_USE', `relay port ${port} on ${host} is in use`, {
              cause: err,
            })
          : err,
      );
    };
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
}

/** Says goodbye to every connection, then stops the server. */
async function shutDown(server: Server, wss: WebSocketServer, conns: Connections): Promise<void> {
  for (const r of conns.streams) r.end(': shutting-down\n\n');
  // WS peers get close 1001; one that does not answer within a second is cut.
  const gone = [...wss.clients].map((c) => new Promise<void>((resolve) => c.once('close', () => resolve())));
  for (const s of conns.sockets) s.shutdown();
  let cut: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(gone), new Promise<void>((resolve) => (cut = setTimeout(resolve, 1000)))]);
  clearTimeout(cut);
  for (const c of wss.clients) c.terminate();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
