// Baseline server: a bare broadcaster on one port, WebSocket and HTTP alike. Every event frame
// (a dotted `type`) received on a socket, and every line of a `POST /events` body, goes as
// received to every other socket that subscribed and to every `GET /stream` (SSE) response;
// `hello`, `subscribe` and `ping` get the shortest answers an AEP client waits for, a POST the
// 202 the relay gives, so one load generator drives this and the relays alike. No parsing beyond
// telling frames apart, no checks, no store, no filters: the fan-out floor of each path.
import { createServer, type ServerResponse } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { answer, serveUntilStopped } from '../lib/proc.js';

const subscribed = new Set<WebSocket>();
const streams = new Set<ServerResponse>();
// The type of a frame: frames are small JSON objects, so a cheap look suffices.
const typeOf = (text: string): string => /"type":"([^"]*)"/.exec(text)?.[1] ?? '';

function toStreams(line: string, type: string): void {
  for (const r of streams) r.write(`event: ${type}\ndata: ${line}\n\n`);
}

const server = createServer((req, res) => {
  if (req.method === 'GET' && req.url?.startsWith('/stream')) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write(': connected\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    let n = 0;
    for (const line of body.split('\n')) {
      if (line === '') continue;
      n += 1;
      for (const s of subscribed) s.send(line);
      if (streams.size > 0) toStreams(line, typeOf(line));
    }
    const text = `{"accepted":${n},"stored":${n}}`;
    res.writeHead(202, { 'content-type': 'application/json', 'content-length': text.length }).end(text);
  });
});
const wss = new WebSocketServer({ server });
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => {
    const text = data.toString();
    const type = typeOf(text);
    if (type.includes('.')) {
      for (const s of subscribed) if (s !== ws) s.send(data, { binary: isBinary });
      if (streams.size > 0) toStreams(text, type);
    } else if (type === 'hello') {
      ws.send('{"type":"hello","versions":["0.1"],"role":"both"}');
    } else if (type === 'subscribe') {
      subscribed.add(ws);
      const id = (JSON.parse(text) as { id?: unknown }).id;
      ws.send(JSON.stringify({ type: 'subscribed', id }));
    } else if (type === 'ping') {
      ws.send(text.replace('"ping"', '"pong"'));
    }
  });
  ws.on('close', () => subscribed.delete(ws));
});
server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as { port: number }).port;
  answer({ socketUrl: `ws://127.0.0.1:${port}/socket`, url: `http://127.0.0.1:${port}` });
});
serveUntilStopped(
  () =>
    new Promise<void>((r) => {
      for (const s of streams) s.end();
      for (const c of wss.clients) c.terminate();
      server.close(() => r());
    }),
);
