// The page server of `inspect` and `console`: loopback only, serves the page, the current
// snapshot (state) and a stream of snapshots (events, SSE) under one base path; redraws are
// coalesced, many events in one tick send one. The console adds a secret base path and POST
// actions (api/...), taken only as same-origin JSON, so another site in the browser cannot
// drive them and the relay's own origin rules (D21) never need opening.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { SteeringError } from '../protocol/errors.js';
import type { Board } from '../consumer/board.js';
import { PAGE_HTML } from './page.js';
import { FRAME_HEADERS, pagePolicy } from './page-policy.js';

export const DEFAULT_INSPECT_PORT = 8790;

export interface InspectServer {
  url: string;
  port: number;
  /** Tell open pages that the board changed. */
  changed(): void;
  close(): Promise<void>;
}

/** SSE keep-alive comment, so idle proxies and browsers keep the stream open. */
const KEEPALIVE_MS = 20_000;

/**
 * Who asked, when not the console's own page: a paired device, by the name its token was issued
 * under. It names the device in `decided_by` (D46); the identity stays the console's (D48).
 */
export interface ActionCaller {
  device: string;
}

/** A POST action under `api/`: the parsed JSON body in, a status and a JSON body out. */
export type Action = (
  body: Record<string, unknown>,
  caller?: ActionCaller,
) => Promise<{ status: number; body: unknown }>;

export interface PageServerOptions {
  port?: number;
  host?: string;
  /** Every route lives under it (`/` for inspect, `/<secret>/` for the console). */
  basePath?: string;
  page?: string;
  actions?: Record<string, Action>;
  /** Static files under the base path (the console's web app manifest and icons). */
  files?: Record<string, { type: string; body: string | Buffer }>;
  /** Handlers for paths outside the base path, by prefix (the console's answer links). */
  routes?: Record<string, (rest: string, req: IncomingMessage, res: ServerResponse) => Promise<void>>;
  /** The address a browser elsewhere uses (a TLS-terminating proxy, a tunnel): also a served name and origin. */
  publicUrl?: string;
  /** Serve HTTPS (Node's own) with this certificate and key, PEM. */
  tls?: { cert: string | Buffer; key: string | Buffer };
}

const MAX_ACTION_BODY = 64 * 1024;

export async function readJson(req: IncomingMessage): Promise<Record<string, unknown> | undefined> {
  let size = 0;
  const chunks: Buffer[] = [];
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_ACTION_BODY) return undefined;
    chunks.push(c as Buffer);
  }
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' }).end(JSON.stringify(body));
};

/** The names a loopback page server answers to: its bind address and `localhost` (D21, DNS rebinding). */
const servedHosts = (host: string, port: number): string[] => [
  `${host.includes(':') ? `[${host}]` : host}:${port}`,
  `localhost:${port}`,
];

/** What the request handlers read: the server's options and page, its open streams, the names it answers to. */
interface Served {
  board: Board;
  opts: PageServerOptions;
  base: string;
  page: string;
  csp: string;
  clients: Set<ServerResponse>;
  /** Set once the server listens (its port is known then); until then no Host passes. */
  hosts: string[];
  origins: string[];
}

export async function startInspectServer(board: Board, opts: PageServerOptions = {}): Promise<InspectServer> {
  const host = opts.host ?? '127.0.0.1';
  const page = opts.page ?? PAGE_HTML;
  const sv: Served = {
    board,
    opts,
    base: opts.basePath ?? '/',
    page,
    csp: pagePolicy(page),
    clients: new Set<ServerResponse>(),
    hosts: [],
    origins: [],
  };
  const scheme = opts.tls ? 'https' : 'http';
  const publicUrl = opts.publicUrl === undefined ? undefined : new URL(opts.publicUrl);
  const clients = sv.clients;
  let pending = false;

  const push = (): void => {
    pending = false;
    const frame = `event: snapshot\ndata: ${JSON.stringify(board.snapshot())}\n\n`;
    for (const res of clients) res.write(frame);
  };

  const handler = (req: IncomingMessage, res: ServerResponse): void => handle(sv, req, res);
  const server = opts.tls
    ? createTlsServer({ cert: opts.tls.cert, key: opts.tls.key }, handler)
    : createServer(handler);

  const keepalive = setInterval(() => {
    for (const res of clients) res.write(': ping\n\n');
  }, KEEPALIVE_MS);
  keepalive.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE'
          ? new SteeringError('PORT_IN_USE', `port ${opts.port} on ${host} is taken; pick another with --port`, {
              cause: err,
            })
          : err,
      );
    });
    server.listen(opts.port ?? DEFAULT_INSPECT_PORT, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  sv.hosts = servedHosts(host, port);
  const origin = `${scheme}://${sv.hosts[0]}`;
  sv.origins = sv.hosts.map((h) => `${scheme}://${h}`);
  if (publicUrl) {
    sv.hosts.push(publicUrl.host);
    sv.origins.push(publicUrl.origin);
  }
  return {
    url: `${origin}${sv.base}`,
    port,
    changed() {
      if (pending) return;
      pending = true;
      setImmediate(push);
    },
    close: () =>
      new Promise<void>((resolve) => {
        clearInterval(keepalive);
        for (const res of clients) res.end();
        clients.clear();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A POST under api/: same origin and JSON only, so another site in the browser cannot drive it. */
async function onAction(sv: Served, name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const action = sv.opts.actions?.[name];
  if (action === undefined) return json(res, 404, { error: `no action ${name}` });
  // Same origin only (a page on another site cannot post here), and JSON only (no form posts).
  // The page's origin is the name it was opened under: the bind address, localhost or the public URL.
  if (req.headers.origin !== undefined && !sv.origins.includes(req.headers.origin)) {
    return json(res, 403, { error: 'cross-origin request refused' });
  }
  if (!(req.headers['content-type'] ?? '').startsWith('application/json'))
    return json(res, 415, { error: 'send application/json' });
  const body = await readJson(req);
  if (body === undefined)
    return json(res, 400, { error: `the body must be one JSON object of at most ${MAX_ACTION_BODY} bytes` });
  const out = await action(body);
  json(res, out.status, out.body);
}

/** Every request: the host check (D21), the routes outside the base path, the actions, then the GETs. */
function handle(sv: Served, req: IncomingMessage, res: ServerResponse): void {
  for (const [name, value] of Object.entries(FRAME_HEADERS)) res.setHeader(name, value);
  const full = (req.url ?? '/').split('?')[0]!;
  // Host must be the loopback name we serve (DNS rebinding, D21).
  if (req.headers.host !== undefined && !sv.hosts.includes(req.headers.host)) {
    res.writeHead(421, { 'content-type': 'text/plain' }).end('wrong host\n');
    return;
  }
  for (const [prefix, serve] of Object.entries(sv.opts.routes ?? {})) {
    if (!full.startsWith(prefix)) continue;
    serve(full.slice(prefix.length), req, res).catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`);
    });
    return;
  }
  if (sv.base !== '/' && full === sv.base.slice(0, -1)) {
    res.writeHead(301, { location: sv.base }).end();
    return;
  }
  if (!full.startsWith(sv.base)) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    return;
  }
  const path = `/${full.slice(sv.base.length)}`;
  if (req.method === 'POST' && path.startsWith('/api/')) {
    onAction(sv, path.slice('/api/'.length), req, res).catch((err: Error) => {
      if (!res.headersSent) json(res, 500, { error: err.message });
    });
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: sv.opts.actions ? 'GET, HEAD, POST' : 'GET, HEAD' }).end();
    return;
  }
  serveGet(sv, path, req, res);
}

/** The GET routes under the base path: the page, its files, the snapshot and the snapshot stream. */
function serveGet(sv: Served, path: string, req: IncomingMessage, res: ServerResponse): void {
  if (path === '/' || path === '/index.html') {
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'referrer-policy': 'no-referrer',
      'content-security-policy': sv.csp,
    });
    res.end(sv.page);
    return;
  }
  const file = sv.opts.files && Object.hasOwn(sv.opts.files, path.slice(1)) ? sv.opts.files[path.slice(1)] : undefined;
  if (file !== undefined) {
    res.writeHead(200, { 'content-type': file.type, 'cache-control': 'no-cache' });
    res.end(file.body);
    return;
  }
  if (path === '/state') {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify(sv.board.snapshot()));
    return;
  }
  if (path === '/events') {
    res.writeHead(200, {
      'content-type': 'text/event-stream',
      'cache-control': 'no-store',
      connection: 'keep-alive',
    });
    res.write(`event: snapshot\ndata: ${JSON.stringify(sv.board.snapshot())}\n\n`);
    sv.clients.add(res);
    req.on('close', () => sv.clients.delete(res));
    return;
  }
  res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
}
