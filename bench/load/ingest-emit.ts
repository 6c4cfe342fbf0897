// Load generator for ingest, one of several emitter processes: `conns` connections, each sending
// `events` sequenced events of its own session, over WebSocket frames (`mode: "ws"`) or
// `POST /events` (`mode: "http"`, keep-alive, the next POST once the last is answered, as a
// collector posts; one event per POST, or `batch` per NDJSON body). It connects, answers `{ ready }`, and sends on SIGUSR2, so every emitter
// of a pass starts at once; then answers `{ ms }`, its own sending time. A socket emitter keeps at
// most `window` events ahead of the server's `pong` to its pings, so neither side drowns in
// buffered frames and the pace is what the server sustains.
import { Agent, request } from 'node:http';
import { SessionEmitter } from '../../src/protocol/build.js';
import { answer, argOf } from '../lib/proc.js';
import { close, connect, type Conn } from './ws.js';

interface Arg {
  socketUrl: string;
  url: string;
  token: string;
  mode: 'ws' | 'http';
  conns: number;
  events: number;
  session: string;
  window: number;
  /** Events per POST (`application/x-ndjson` above 1). */
  batch?: number;
}
const arg = argOf<Arg>();

const linesFor = (session: string): string[] => {
  const em = new SessionEmitter({ agent: 'bench', session, host: 'bench-host' });
  // `notice`: relays may shed debug/info under backpressure (AEP-0003 §8.4); the bench counts all.
  return Array.from({ length: arg.events }, (_, i) =>
    JSON.stringify(
      em.emit({ type: 'progress.status', severity: 'notice', data: { phase: `step-${i}`, percent: i % 100 } }),
    ),
  );
};
const sessions = Array.from({ length: arg.conns }, (_, c) => `${arg.session}-${c}`);
const lines = sessions.map(linesFor);

const agent = new Agent({ keepAlive: true, maxSockets: arg.conns });
const perPost = arg.batch ?? 1;
const headers = {
  'content-type': perPost > 1 ? 'application/x-ndjson' : 'application/json',
  'aep-version': '0.1',
  authorization: `Bearer ${arg.token}`,
};
function post(body: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${arg.url}/events`,
      { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
      (res) => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 202 ? resolve() : reject(new Error(`POST /events answered ${res.statusCode}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function viaHttp(): Promise<void> {
  await Promise.all(
    lines.map(async (ls) => {
      for (let i = 0; i < ls.length; i += perPost) await post(ls.slice(i, i + perPost).join('\n'));
    }),
  );
}

async function viaSocket(conns: Conn[]): Promise<void> {
  await Promise.all(
    conns.map(async (c, k) => {
      const ls = lines[k]!;
      let answered = 0;
      let wake: (() => void) | undefined;
      c.ws.on('message', (d) => {
        if (d.toString().includes('"pong"')) {
          answered += 1;
          wake?.();
        }
      });
      const step = Math.max(1, arg.window >> 2);
      let pinged = 0;
      for (let sent = 0; sent < ls.length; ) {
        c.ws.send(ls[sent++]!);
        if (sent % step === 0 || sent === ls.length) {
          pinged += 1;
          c.ws.send(`{"type":"ping","t":${pinged}}`);
        }
        while ((pinged - answered) * step > arg.window || (sent === ls.length && answered < pinged))
          await new Promise<void>((r) => (wake = r));
      }
    }),
  );
}

const conns =
  arg.mode === 'ws'
    ? await Promise.all(
        sessions.map(() => connect(arg.socketUrl, arg.token, { role: 'emitter', identity: { agent: 'bench' } })),
      )
    : [];
if (arg.mode === 'http') await post(lines[0]!.shift()!); // opens a socket; not counted
// Held open until the signal: an idle keep-alive socket does not keep a process alive.
const hold = setInterval(() => {}, 1 << 30);
await new Promise<void>((resolve) => {
  process.once('SIGUSR2', () => resolve());
  answer({ ready: true });
});
clearInterval(hold);
const t0 = performance.now();
await (arg.mode === 'ws' ? viaSocket(conns) : viaHttp());
const ms = performance.now() - t0;
await Promise.all(conns.map(close));
agent.destroy();
answer({ ms });
