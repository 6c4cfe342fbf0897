// Load generator for fan-out, the subscribing side: `ws` WebSocket subscribers and `sse`
// `GET /stream` subscribers, all to every event, in this one process. Answers `{ ready }` once
// all are subscribed, then `{ done }` once every one has received `expect` events.
import { request } from 'node:http';
import { answer, argOf } from '../lib/proc.js';
import { connect, subscribe } from './ws.js';

interface Arg {
  socketUrl: string;
  url: string;
  token: string;
  ws: number;
  sse: number;
  expect: number;
}
const arg = argOf<Arg>();
const seen: number[] = [];
let finished = false;
const check = () => {
  if (!finished && seen.every((n) => n >= arg.expect)) {
    finished = true;
    answer({ done: true, seen });
  }
};
const stall = setInterval(() => process.stderr.write(`ingest-sink: ${seen.join('/')} of ${arg.expect}\n`), 30_000);
stall.unref();

for (let i = 0; i < arg.ws; i += 1) {
  const c = await connect(arg.socketUrl, arg.token, { role: 'consumer' });
  await subscribe(c, `s${i}`, {});
  const k = seen.push(0) - 1;
  c.ws.on('message', () => {
    seen[k]! += 1;
    if (seen[k] === arg.expect) check();
  });
}

/**
 * A stream is live once the server says so (`: connected`), or, for a server that sends nothing
 * before its first event (the reference relay writes its headers with it), once its `/healthz`
 * counts `n` subscribers.
 */
async function counted(n: number, live: () => boolean): Promise<void> {
  while (!live()) {
    const r = await fetch(`${arg.url}/healthz`, { headers: { authorization: `Bearer ${arg.token}` } });
    const body = (await r.json().catch(() => ({}))) as { subscribers?: unknown };
    if (typeof body.subscribers === 'number' && body.subscribers >= n) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

// SSE events are counted by their `data:` lines; a chunk may end inside one, so its tail is kept.
const DATA = '\ndata: ';
for (let i = 0; i < arg.sse; i += 1) {
  const k = seen.push(0) - 1;
  let connected = false;
  const registered = counted(arg.ws + i + 1, () => connected);
  await new Promise<void>((resolve, reject) => {
    registered.then(resolve, reject);
    const req = request(`${arg.url}/stream`, { headers: { authorization: `Bearer ${arg.token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`GET /stream answered ${res.statusCode}`));
      res.setEncoding('utf8');
      let tail = '';
      res.on('data', (chunk: string) => {
        const text = tail + chunk;
        let at = text.indexOf(DATA);
        while (at !== -1) {
          seen[k]! += 1;
          at = text.indexOf(DATA, at + DATA.length);
        }
        tail = text.slice(-(DATA.length - 1));
        if (!connected && text.includes(': connected')) {
          connected = true;
          resolve();
        }
        if (seen[k]! >= arg.expect) check();
      });
    });
    req.on('error', reject);
    req.end();
  });
}
answer({ ready: true });
