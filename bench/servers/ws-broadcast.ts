// Baseline server: a bare `ws` broadcaster. Every event frame (a dotted `type`) goes, as
// received, to every other connection that subscribed; `hello` and `subscribe` get the shortest
// answers an AEP client waits for, so one load generator drives this and the relays alike. No
// parsing beyond telling frames apart, no store, no filters: the fan-out floor.
import { WebSocketServer, type WebSocket } from 'ws';
import { answer, serveUntilStopped } from '../lib/proc.js';

const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
const subscribed = new Set<WebSocket>();
wss.on('connection', (ws) => {
  ws.on('message', (data, isBinary) => {
    const text = data.toString();
    // Event frames carry `"type":"a.b..."`; frames are small JSON objects, so a cheap look suffices.
    const m = /"type":"([^"]*)"/.exec(text);
    const type = m?.[1] ?? '';
    if (type.includes('.')) {
      for (const s of subscribed) if (s !== ws) s.send(data, { binary: isBinary });
    } else if (type === 'hello') {
      ws.send('{"type":"hello","versions":["0.1"],"role":"both"}');
    } else if (type === 'subscribe') {
      subscribed.add(ws);
      const id = (JSON.parse(text) as { id?: unknown }).id;
      ws.send(JSON.stringify({ type: 'subscribed', id }));
    }
  });
  ws.on('close', () => subscribed.delete(ws));
});
wss.once('listening', () => {
  const port = (wss.address() as { port: number }).port;
  answer({ socketUrl: `ws://127.0.0.1:${port}/socket` });
});
serveUntilStopped(() => new Promise<void>((r) => wss.close(() => r())));
