// In-process relay helpers for benches that start relays in their own process on purpose (the
// NATS bench wires relay nodes to one nats-server): fan-out rate and instruct → ack p50 between
// two relay handles. The main relay figures use child processes instead (bench/relay.bench.ts).
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';
import { command, SessionEmitter } from '../../src/protocol/build.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { connectEmitter } from '../../test/support/emitter-link.js';
import { startTestTarget } from '../../test/support/relay-target.js';

const EVENTS = 20_000;
const SUBSCRIBERS = 2;
const ROUND_TRIPS = 400;

const open = (url: string, headers: Record<string, string> = {}): Promise<WebSocket> =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });

/** Resolves once `ws` has received `n` frames; a stall fails the bench instead of hanging it. */
const countFrames = (ws: WebSocket, n: number): Promise<void> =>
  new Promise((resolve, reject) => {
    let seen = 0;
    const stall = setTimeout(() => reject(new Error(`relay bench: ${seen}/${n} frames after 30 s`)), 30_000);
    ws.on('message', () => {
      seen += 1;
      if (seen === n) {
        clearTimeout(stall);
        resolve();
      }
    });
  });

function events(session: string): string[] {
  const em = new SessionEmitter({ agent: 'bench', session, host: 'bench-host' });
  return Array.from({ length: EVENTS }, (_, i) =>
    JSON.stringify(em.emit({ type: 'progress.status', data: { phase: `step-${i}`, percent: i % 100 } })),
  );
}

/** Drop thresholds lifted so every event is counted (the drop policy is tested in test/relay/backpressure.test.ts). */
export const UNBOUNDED = { soft: 1 << 30, hard: 1 << 30 };

/** Events/s from one emitter on `ingest` to SUBSCRIBERS sockets on `serve` (the same relay, or another node). */
export async function fanOutRate(
  ingest: RelayHandle,
  serve: RelayHandle,
  session: string,
  token?: string,
): Promise<number> {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
  const subs = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => open(serve.socketUrl, headers)));
  const ready = subs.map((ws) => new Promise<void>((resolve) => ws.once('message', () => resolve())));
  for (const ws of subs) ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
  await Promise.all(ready);
  const subscribed = subs.map((ws) => new Promise<void>((resolve) => ws.once('message', () => resolve())));
  for (const ws of subs) ws.send(JSON.stringify({ type: 'subscribe', id: 's', filter: { session } }));
  await Promise.all(subscribed);
  const done = Promise.all(subs.map((ws) => countFrames(ws, EVENTS)));
  const link = connectEmitter({
    url: ingest.socketUrl,
    agent: 'bench',
    outboxCap: EVENTS * 2,
    ...(token ? { token } : {}),
  });
  await link.ready();
  const lines = events(session);
  const t0 = performance.now();
  for (const line of lines) link.sendText(line);
  await done;
  const rate = EVENTS / ((performance.now() - t0) / 1000);
  await link.close();
  for (const ws of subs) ws.close();
  return rate;
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/** Median ms from a consumer on `from` to a target claiming on `to` (another node or the same relay) and its ack back; token `bench`. */
export async function instructAckP50(from: RelayHandle, to: RelayHandle, session: string): Promise<number> {
  const target = await startTestTarget({
    url: to.socketUrl,
    token: 'bench',
    agent: 'bench-target',
    accepts: ['x.bench-target.control.instruct'],
    sessions: [session],
  });
  const consumer = await RelayConsumer.connect({ url: from.socketUrl, token: 'bench', agent: 'bench-cli' });
  let entries = await consumer.roster();
  while (!entries.some((e) => e.session === session)) entries = await consumer.roster();
  const times: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const cmd = command({ agent: 'bench-cli', host: 'bench-host' }, session, {
      type: 'x.bench-target.control.instruct',
      capture: 'redacted',
      data: { text: `instruction ${i}` },
    });
    const t0 = performance.now();
    const r = await consumer.send(cmd, { timeoutMs: 10_000 });
    times.push(performance.now() - t0);
    if (r.outcome !== 'accepted') throw new Error(`bench command ${i} settled ${r.outcome}`);
  }
  await consumer.close();
  await target.close();
  return median(times);
}

export { EVENTS, SUBSCRIBERS, ROUND_TRIPS };
