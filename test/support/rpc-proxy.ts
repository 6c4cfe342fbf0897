// A pass-through between a Codex app-server's Unix socket (WebSocket, JSON-RPC) and its clients,
// so an e2e test can hold one request on its way to the real server and release it later: the
// way to open, deterministically, the window between a turn's end on the server and a request
// already sent for it. Everything else passes unchanged, in order; what passed is recorded.
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import WebSocket, { WebSocketServer } from 'ws';

type Message = Record<string, unknown>;

interface Passed {
  /** `up`: client to server; `down`: server to client. */
  dir: 'up' | 'down';
  message: Message;
}

export interface RpcProxy {
  passed: Passed[];
  /** The next client request with this method waits here until released. */
  holdNext(method: string): { arrived: Promise<Message>; release(): void };
  /** The server's answer to a client request (by the request's id, as the client sent it). */
  answerTo(id: unknown): Message | undefined;
  close(): Promise<void>;
}

export async function startRpcProxy(listenPath: string, serverPath: string): Promise<RpcProxy> {
  const passed: Passed[] = [];
  const holds: { method: string; arrived: (m: Message) => void; released: Promise<void> }[] = [];
  const http: Server = createServer();
  const wss = new WebSocketServer({ server: http });
  const parse = (data: WebSocket.RawData): Message | undefined => {
    try {
      return JSON.parse(String(data)) as Message;
    } catch {
      return undefined;
    }
  };
  wss.on('connection', (client) => {
    const server = new WebSocket(`ws+unix://${serverPath}:/`);
    const early: string[] = [];
    const up = (text: string): void => {
      if (server.readyState === WebSocket.OPEN) server.send(text);
      else early.push(text);
    };
    server.on('open', () => {
      for (const t of early.splice(0)) server.send(t);
    });
    server.on('message', (data) => {
      const m = parse(data);
      if (m !== undefined) passed.push({ dir: 'down', message: m });
      if (client.readyState === WebSocket.OPEN) client.send(String(data));
    });
    client.on('message', (data) => {
      const text = String(data);
      const m = parse(data);
      const at = m === undefined ? -1 : holds.findIndex((h) => h.method === m.method);
      if (m === undefined || at < 0) {
        if (m !== undefined) passed.push({ dir: 'up', message: m });
        up(text);
        return;
      }
      const [hold] = holds.splice(at, 1);
      hold!.arrived(m);
      void hold!.released.then(() => {
        passed.push({ dir: 'up', message: m });
        up(text);
      });
    });
    client.on('close', () => server.close());
    server.on('close', () => client.close());
    server.on('error', () => client.close());
  });
  rmSync(listenPath, { force: true });
  await new Promise<void>((r) => http.listen(listenPath, r));
  return {
    passed,
    holdNext(method) {
      let arrived: (m: Message) => void = () => undefined;
      let release: () => void = () => undefined;
      const got = new Promise<Message>((r) => (arrived = r));
      const released = new Promise<void>((r) => (release = r));
      holds.push({ method, arrived, released });
      return { arrived: got, release };
    },
    answerTo: (id) =>
      passed.find((p) => p.dir === 'down' && p.message.id === id && p.message.method === undefined)?.message,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        http.close(() => r());
        rmSync(listenPath, { force: true });
      }),
  };
}
