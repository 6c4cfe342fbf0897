// Load generator for relay ingest → fan-out: one emitter socket sends `events` sequenced events
// of one session, `subscribers` sockets subscribed to that session count them. The emitter keeps
// at most `window` events ahead of the slowest subscriber, so no side drowns in buffered frames
// and the figure is the rate the server sustains. Answers `{ rate }` (events/s per subscriber).
import { SessionEmitter } from '../../src/protocol/build.js';
import { answer, argOf } from '../lib/proc.js';
import { close, connect, subscribe } from './ws.js';

interface Arg {
  url: string;
  token?: string;
  events: number;
  subscribers: number;
  window: number;
  session: string;
}
const arg = argOf<Arg>();
const em = new SessionEmitter({ agent: 'bench', session: arg.session, host: 'bench-host' });
// `notice`: relays may shed debug/info under backpressure (AEP-0003 §8.4); the bench counts all.
const lines = Array.from({ length: arg.events }, (_, i) =>
  JSON.stringify(
    em.emit({ type: 'progress.status', severity: 'notice', data: { phase: `step-${i}`, percent: i % 100 } }),
  ),
);

const subs = await Promise.all(
  Array.from({ length: arg.subscribers }, () => connect(arg.url, arg.token, { role: 'consumer' })),
);
await Promise.all(subs.map((c, i) => subscribe(c, `s${i}`, { session: arg.session })));
const seen = subs.map(() => 0);
let wake: (() => void) | undefined;
const finished = new Promise<void>((resolve) => {
  subs.forEach((c, i) => {
    c.ws.on('message', () => {
      seen[i]! += 1;
      if (wake) {
        const w = wake;
        wake = undefined;
        w();
      }
      if (seen.every((n) => n >= arg.events)) resolve();
    });
  });
});
const stall = setTimeout(() => {
  process.stderr.write(`ws-fanout: ${seen.join('/')} of ${arg.events} after 60 s\n`);
  process.exit(1);
}, 60_000);
const emitter = await connect(arg.url, arg.token, { role: 'emitter', identity: { agent: 'bench' } });
const t0 = performance.now();
let sent = 0;
while (sent < lines.length) {
  while (sent < lines.length && sent - Math.min(...seen) < arg.window) emitter.ws.send(lines[sent++]!);
  if (sent < lines.length) await new Promise<void>((r) => (wake = r));
}
await finished;
const rate = arg.events / ((performance.now() - t0) / 1000);
clearTimeout(stall);
await Promise.all([...subs, emitter].map(close));
answer({ rate });
