// A loopback HTTP server standing in for an ntfy server and a webhook receiver: it records every
// POST (path, headers, parsed JSON body) and can be told to answer with an error status.
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Pushed {
  path: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
  at: number;
}

export interface PushServer {
  url: string;
  received: Pushed[];
  /** The status the next posts get (200 by default). */
  status: number;
  /** This many posts are answered 503 before the status above applies again. */
  failures: number;
  /** Resolves with the first recorded post matching `test`, past or future, or rejects after `ms`. */
  next(test: (p: Pushed) => boolean, ms?: number): Promise<Pushed>;
  close(): Promise<void>;
}

export async function startPushServer(): Promise<PushServer> {
  const waiters: { test: (p: Pushed) => boolean; resolve: (p: Pushed) => void }[] = [];
  const s: PushServer = {
    url: '',
    received: [],
    status: 200,
    failures: 0,
    next(test, ms = 5000) {
      const hit = s.received.find(test);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const w = {
          test,
          resolve: (p: Pushed) => {
            clearTimeout(timer);
            resolve(p);
          },
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(w), 1);
          reject(new Error(`no matching push within ${ms} ms (got ${s.received.length})`));
        }, ms);
        waiters.push(w);
      });
    },
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      let body: Record<string, unknown> = {};
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { raw: text };
      }
      const status = s.failures > 0 ? 503 : s.status;
      if (s.failures > 0) s.failures -= 1;
      if (status === 200) {
        const p: Pushed = { path: req.url ?? '/', headers: req.headers, body, at: Date.now() };
        s.received.push(p);
        for (const w of [...waiters])
          if (w.test(p)) {
            waiters.splice(waiters.indexOf(w), 1);
            w.resolve(p);
          }
      }
      res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  s.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return s;
}
