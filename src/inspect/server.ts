// The inspect page server: loopback only, serves the page, the current snapshot (/state) and a
// stream of snapshots (/events, SSE). Redraws are coalesced: many events in one tick send one.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SteeringError } from '../protocol/errors.js';
import type { Board } from '../consumer/board.js';
import { PAGE_HTML } from './page.js';

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

export async function startInspectServer(board: Board, opts: { port?: number; host?: string } = {}): Promise<InspectServer> {
  const host = opts.host ?? '127.0.0.1';
  const clients = new Set<ServerResponse>();
  let pending = false;

  const push = (): void => {
    pending = false;
    const frame = `event: snapshot\ndata: ${JSON.stringify(board.snapshot())}\n\n`;
    for (const res of clients) res.write(frame);
  };

  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path === '/' || path === '/index.html') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(PAGE_HTML);
      return;
    }
    if (path === '/state') {
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
      res.end(JSON.stringify(board.snapshot()));
      return;
    }
    if (path === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive' });
      res.write(`event: snapshot\ndata: ${JSON.stringify(board.snapshot())}\n\n`);
      clients.add(res);
      req.on('close', () => clients.delete(res));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });

  const keepalive = setInterval(() => {
    for (const res of clients) res.write(': ping\n\n');
  }, KEEPALIVE_MS);
  keepalive.unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'EADDRINUSE'
        ? new SteeringError('PORT_IN_USE', `port ${opts.port} on ${host} is taken; pick another with --port`, { cause: err })
        : err);
    });
    server.listen(opts.port ?? DEFAULT_INSPECT_PORT, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
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
