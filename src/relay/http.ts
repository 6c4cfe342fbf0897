// The relay's HTTP side (AEP-0003 §3; aep-wire §6): Host and Origin checks (D21), CORS,
// `/healthz`, discovery, ingest (`POST /events`, JSON or NDJSON, decided whole) and the SSE
// stream (sse.ts), and the rows a remote verify reads (audit-http.ts). The WebSocket upgrade on the same port is the server's (server.ts).
import type { IncomingMessage, RequestListener } from 'node:http';
import type { AepEvent } from '../protocol/envelope.js';
import { HttpError } from '../protocol/errors.js';
import { relayCheck } from '../protocol/validate.js';
import { bearerToken, type AccessPolicy } from './acl.js';
import { auditRows } from './audit-http.js';
import type { Connections } from './connections.js';
import { oneLine, SUPPORTED_VERSIONS, type RelayCore } from './core.js';
import { CORS, json, type Res } from './http-reply.js';
import { checkBrowserOrigin, checkHost, corsHeaders } from './origin.js';
import type { FaultAwareStore } from './session-store.js';
import { stream } from './sse.js';
import type { Incoming, Refusal } from './types.js';

/** HTTP status of a relay refusal of a POSTed command or event (D17, D19). */
const REFUSAL_STATUS: Record<Refusal['code'], number> = {
  unauthorized: 403,
  unsupported: 422,
  ambiguous: 409,
  'no-route': 409,
  'store-unavailable': 503,
};

/** The bearer token of a request: the `Authorization` header or the `token` query parameter. */
export const tokenOf = (req: IncomingMessage, url: URL): string | undefined =>
  bearerToken(req.headers.authorization, url.searchParams);

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

/** What the HTTP side serves from; `policy` is asked per request (D39: a reload replaces it). */
export interface HttpContext {
  core: RelayCore;
  store: FaultAwareStore;
  conns: Connections;
  policy: () => AccessPolicy;
  /** D21: `Host` names served and browser origins allowed. */
  servedHosts: string[];
  allowOrigins: string[];
  /** The relay's counts, for an authorized `/healthz`. */
  stats: () => object;
  log: (line: string) => void;
}

async function ingest(cx: HttpContext, req: IncomingMessage, res: Res, token: string | undefined): Promise<void> {
  const limits = cx.core.limits;
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
  const who = cx.policy().authenticate(token);
  if (who === undefined) return json(res, 401, { error: 'unauthorized' });
  // Events and commands are authorized and routed exactly as over WebSocket; the refusal is
  // the response, with the rule, and nothing of the body is kept (D17, D19).
  const r = await cx.core.ingest(batch, who);
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
      ...(r.refusal.outcome === undefined ? {} : { outcome: r.refusal.outcome }),
    });
  }
  json(res, 202, { accepted: r.accepted, stored: r.stored, ...(r.routed.length > 0 ? { routed: r.routed } : {}) });
}

async function route(cx: HttpContext, req: IncomingMessage, res: Res): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://relay');
  // D21: DNS rebinding (a name that resolves to this machine) and foreign browser pages stop here.
  const host = checkHost(req.headers.host, cx.servedHosts);
  if (host !== undefined) return json(res, 421, { error: 'host-not-allowed', detail: host });
  const origin = checkBrowserOrigin(req.headers.origin, cx.allowOrigins);
  if (origin !== undefined) return json(res, 403, { error: 'origin-not-allowed', detail: origin });
  res[CORS] = corsHeaders(req.headers.origin);
  if (req.method === 'OPTIONS') {
    res.writeHead(204, res[CORS]);
    res.end();
    return;
  }
  const token = tokenOf(req, url);
  const principal = cx.policy().authenticate(token);
  if (req.method === 'GET' && url.pathname === '/healthz') {
    // Counts only for an authorized caller (aep-wire §3.8).
    // 503 while the store's engine is down; its state and the counts only for an authorized caller.
    // D38: a store that cannot write is down too, and the reason is said (it names no secret).
    const engine = cx.store.health();
    const reason = cx.store.unavailable?.() ?? (typeof engine.reason === 'string' ? engine.reason : undefined);
    const ok = engine.ok && reason === undefined;
    const why = reason === undefined ? {} : { reason };
    return json(res, ok ? 200 : 503, principal ? { ok, ...why, store: engine, ...cx.stats() } : { ok, ...why });
  }
  if (principal === undefined) return json(res, 401, { error: 'unauthorized' });
  if (req.method === 'GET' && (url.pathname === '/events' || url.pathname === '/.well-known/aep'))
    return json(res, 200, cx.core.discovery());
  if (req.method === 'POST' && url.pathname === '/events') return ingest(cx, req, res, token);
  if (req.method === 'GET' && url.pathname === '/stream')
    return stream(cx.core, cx.conns, req, res, url, principal, token);
  if (req.method === 'GET' && url.pathname === '/audit/rows') return auditRows(cx.store, url, principal, res);
  return json(res, 404, { error: 'not-found' });
}

/** The request listener: an `HttpError` is its answer; anything else is logged and a 500. */
export function httpHandler(cx: HttpContext): RequestListener {
  return (req, res) => {
    route(cx, req, res).catch((err: unknown) => {
      if (err instanceof HttpError) return json(res, err.status, err.body);
      cx.log(
        `relay: ${req.method} ${new URL(req.url ?? '/', 'http://relay').pathname} failed: ${(err as Error).message}`,
      );
      if (!res.headersSent) json(res, 500, { error: 'internal' });
      else res.end();
    });
  };
}
