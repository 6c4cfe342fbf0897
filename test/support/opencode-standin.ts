// A stand-in for `opencode serve` 1.18.33 shaped exactly like the frames and answers the real
// server gave (copilot-opencode-observed §2, and the e2e run against it): the global SSE stream
// `GET /api/event` with `{id, type, durable, location, data}` frames, `GET /api/session`,
// `GET /api/session/active`, the V2 prompt, interrupt and permission reply routes, the V1 abort,
// status and `prompt_async` routes (the TUI's V1 loop), and HTTP Basic auth (user `opencode`) when a password is set. The test drives the frames.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from './mock-openai.js';

interface StandinCall {
  method: string;
  path: string;
  body: any;
}

export interface OpencodeStandin {
  url: string;
  calls: StandinCall[];
  /** Sessions listed, and those running (`/api/session/active`). */
  sessions: Set<string>;
  running: Set<string>;
  /** Sessions V1's `/session/status` says are busy: a turn the TUI started in the V1 loop. */
  busy: Set<string>;
  /** Sends one frame to every open event stream. */
  emit(type: string, session: string, data: Record<string, unknown>): void;
  /** Sends one frame to every open V1 stream (`GET /event`, `{id, type, properties}`). */
  emitV1(type: string, session: string, properties: Record<string, unknown>): void;
  /** How many event streams are open. */
  streams(): number;
  /** The interrupt route answers 404, as a server without it would. */
  noInterrupt: boolean;
  close(): Promise<void>;
}

export async function startOpencodeStandin(o: { password?: string } = {}): Promise<OpencodeStandin> {
  const open = new Set<ServerResponse>();
  const openV1 = new Set<ServerResponse>();
  let seq = 0;
  const s: OpencodeStandin = {
    url: '',
    calls: [],
    sessions: new Set(),
    running: new Set(),
    busy: new Set(),
    noInterrupt: false,
    emit(type, session, data) {
      seq += 1;
      const frame = {
        id: `evt_${String(seq).padStart(8, '0')}`,
        type,
        durable: { aggregateID: session, seq, version: 1 },
        location: { directory: '/work/proj' },
        data: { sessionID: session, ...data },
      };
      for (const res of open) res.write(`data: ${JSON.stringify(frame)}\n\n`);
    },
    emitV1(type, session, properties) {
      seq += 1;
      const frame = {
        id: `evt_${String(seq).padStart(8, '0')}`,
        type,
        properties: { sessionID: session, ...properties },
      };
      for (const res of openV1) res.write(`data: ${JSON.stringify(frame)}\n\n`);
    },
    streams: () => open.size,
    close: async () => {
      for (const res of [...open, ...openV1]) res.end();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const json = (res: ServerResponse, status: number, body?: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0]!;
    const want =
      o.password === undefined ? undefined : `Basic ${Buffer.from(`opencode:${o.password}`).toString('base64')}`;
    if (want !== undefined && req.headers.authorization !== want)
      return json(res, 401, { _tag: 'UnauthorizedError', message: 'Authentication required' });
    const raw = await readBody(req);
    const body = raw === '' ? undefined : JSON.parse(raw);
    s.calls.push({ method: req.method ?? '', path, body });
    if (req.method === 'GET' && path === '/api/event') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'evt_0', type: 'server.connected', data: {} })}\n\n`);
      open.add(res);
      req.on('close', () => open.delete(res));
      return;
    }
    if (req.method === 'GET' && path === '/event') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${JSON.stringify({ id: 'evt_0', type: 'server.connected', properties: {} })}\n\n`);
      openV1.add(res);
      req.on('close', () => openV1.delete(res));
      return;
    }
    if (req.method === 'GET' && path === '/api/session')
      return json(res, 200, {
        data: [...s.sessions].map((id) => ({ id, location: { directory: '/work/proj' } })),
      });
    if (req.method === 'GET' && path === '/api/session/active')
      return json(res, 200, { data: Object.fromEntries([...s.running].map((id) => [id, { type: 'running' }])) });
    const m = /^\/api\/session\/([^/]+)(\/.*)?$/.exec(path);
    const id = m?.[1] ?? '';
    if (req.method === 'GET' && m && m[2] === undefined)
      return s.sessions.has(id) ? json(res, 200, { data: { id } }) : json(res, 404, { _tag: 'SessionNotFoundError' });
    if (req.method === 'POST' && m?.[2] === '/prompt')
      return json(res, 200, {
        data: {
          admittedSeq: ++seq,
          id: body.id,
          sessionID: id,
          prompt: body.prompt,
          delivery: body.delivery ?? 'steer',
        },
      });
    if (req.method === 'POST' && m?.[2] === '/interrupt') return s.noInterrupt ? json(res, 404) : json(res, 204);
    if (req.method === 'POST' && /^\/permission\/[^/]+\/reply$/.test(m?.[2] ?? '')) return json(res, 204);
    if (req.method === 'POST' && /^\/session\/[^/]+\/abort$/.test(path)) return json(res, 200, true);
    if (req.method === 'GET' && path === '/session/status')
      return json(res, 200, Object.fromEntries([...s.busy].map((id) => [id, { type: 'busy' }])));
    if (req.method === 'POST' && /^\/session\/[^/]+\/prompt_async$/.test(path)) return json(res, 204);
    json(res, 404, { _tag: 'NotFound' });
  };
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  s.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return s;
}
