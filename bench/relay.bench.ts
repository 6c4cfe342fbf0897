// Relay figures, each against a baseline measured in this same run:
//  - ingest → fan-out throughput with the SQLite file store, against a bare `ws` broadcast server
//    (what the relay adds: parsing, validation, store, filters), and against the relay's own
//    in-memory store (what durability costs);
//  - instruct → ack round trip (consumer → relay → a target that acks → relay → consumer),
//    against a bare WebSocket echo round trip.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import WebSocket, { WebSocketServer } from 'ws';
import { command, SessionEmitter } from '../src/protocol/build.js';
import { RelayConsumer } from '../src/consumer/connection.js';
import { startRelay } from '../src/relay/server.js';
import { connectRelay } from '../src/relay/ws-connection.js';
import { startTestTarget } from '../test/support/relay-target.js';
import { figure, type BenchFigure } from './types.js';

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
  return Array.from({ length: EVENTS }, (_, i) => JSON.stringify(em.emit({ type: 'progress.status', data: { phase: `step-${i}`, percent: i % 100 } })));
}

/** Events/s through the relay: one emitter socket in, SUBSCRIBERS sockets out. */
async function relayThroughput(storePath: string): Promise<number> {
  // The sender outruns same-process readers on purpose; drop thresholds are lifted so every
  // event is counted (the drop policy itself is tested in test/relay/backpressure.test.ts).
  const relay = await startRelay({ port: 0, storePath, bufferCap: EVENTS, backpressure: { soft: 1 << 30, hard: 1 << 30 } });
  const session = `bench-${storePath === ':memory:' ? 'mem' : 'file'}`;
  const subs = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => open(relay.socketUrl)));
  const ready = subs.map((ws) => new Promise<void>((resolve) => ws.once('message', () => resolve())));
  for (const ws of subs) ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], role: 'consumer' }));
  await Promise.all(ready);
  const subscribed = subs.map((ws) => new Promise<void>((resolve) => ws.once('message', () => resolve())));
  for (const ws of subs) ws.send(JSON.stringify({ type: 'subscribe', id: 's', filter: { session } }));
  await Promise.all(subscribed);
  const done = Promise.all(subs.map((ws) => countFrames(ws, EVENTS)));
  const link = connectRelay({ url: relay.socketUrl, agent: 'bench', outboxCap: EVENTS * 2 });
  await link.ready();
  const lines = events(session);
  const t0 = performance.now();
  for (const line of lines) link.sendText(line);
  await done;
  const rate = EVENTS / ((performance.now() - t0) / 1000);
  await link.close();
  for (const ws of subs) ws.close();
  await relay.close();
  return rate;
}

/** Events/s through a bare ws server that rebroadcasts every frame it receives. */
async function bareBroadcast(): Promise<number> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  const port = (wss.address() as { port: number }).port;
  const listeners = new Set<WebSocket>();
  wss.on('connection', (ws, req) => {
    if (req.url === '/listen') listeners.add(ws);
    else ws.on('message', (data) => { for (const l of listeners) l.send(data, { binary: false }); });
  });
  const subs = await Promise.all(Array.from({ length: SUBSCRIBERS }, () => open(`ws://127.0.0.1:${port}/listen`)));
  while (listeners.size < SUBSCRIBERS) await new Promise((r) => setImmediate(r));
  const done = Promise.all(subs.map((ws) => countFrames(ws, EVENTS)));
  const emitter = await open(`ws://127.0.0.1:${port}/emit`);
  const lines = events('bare');
  const t0 = performance.now();
  for (const line of lines) emitter.send(line);
  await done;
  const rate = EVENTS / ((performance.now() - t0) / 1000);
  emitter.close();
  for (const ws of subs) ws.close();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
  return rate;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
};

/** Median ms from send to settled ack, through the relay to a target that acks. */
async function instructRoundTrip(): Promise<number> {
  const relay = await startRelay({ port: 0, storePath: ':memory:', token: 'bench' });
  const session = 'bench-session';
  const target = await startTestTarget({ url: relay.socketUrl, token: 'bench', agent: 'bench-target', accepts: ['x.bench-target.control.instruct'], sessions: [session] });
  const consumer = await RelayConsumer.connect({ url: relay.socketUrl, token: 'bench', agent: 'bench-cli' });
  let entries = await consumer.roster();
  while (!entries.some((e) => e.session === session)) entries = await consumer.roster();
  const times: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const cmd = command({ agent: 'bench-cli', host: 'bench-host' }, session, { type: 'x.bench-target.control.instruct', capture: 'redacted', data: { text: `instruction ${i}` } });
    const t0 = performance.now();
    const r = await consumer.send(cmd, { timeoutMs: 10_000 });
    times.push(performance.now() - t0);
    if (r.outcome !== 'accepted') throw new Error(`bench command ${i} settled ${r.outcome}`);
  }
  await consumer.close();
  await target.close();
  await relay.close();
  return median(times);
}

/** Median ms for one frame to a bare ws echo server and back. */
async function echoRoundTrip(): Promise<number> {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  wss.on('connection', (ws) => ws.on('message', (d) => ws.send(d, { binary: false })));
  const ws = await open(`ws://127.0.0.1:${(wss.address() as { port: number }).port}`);
  const times: number[] = [];
  for (let i = 0; i < ROUND_TRIPS; i++) {
    const t0 = performance.now();
    await new Promise<void>((resolve) => {
      ws.once('message', () => resolve());
      ws.send(JSON.stringify({ type: 'x.bench.control.instruct', i }));
    });
    times.push(performance.now() - t0);
  }
  ws.close();
  await new Promise<void>((resolve) => wss.close(() => resolve()));
  return median(times);
}

export default async function relayBench(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'relay-bench-'));
  try {
    // One discarded pass warms the JIT for both sides before anything is timed.
    await bareBroadcast();
    await relayThroughput(':memory:');
    // Best of three, interleaved, so a burst of load elsewhere on the machine hits all sides alike.
    let bare = 0;
    let memory = 0;
    let file = 0;
    for (let i = 0; i < 3; i++) {
      bare = Math.max(bare, await bareBroadcast());
      memory = Math.max(memory, await relayThroughput(':memory:'));
      file = Math.max(file, await relayThroughput(join(dir, `relay-${i}.db`)));
    }
    const echo = await echoRoundTrip();
    const instruct = await instructRoundTrip();
    const what = `best of 3 runs of ${EVENTS} events, 1 emitter socket, ${SUBSCRIBERS} subscriber sockets`;
    return [
      figure({ name: 'relay-fanout-sqlite', what: `relay ingest → fan-out, SQLite file store (WAL); ${what}`, unit: 'events/s', value: file, baseline: bare, baselineWhat: 'bare ws broadcast server, same sockets and frames' }),
      figure({ name: 'relay-fanout-sqlite-vs-memory', what: `relay ingest → fan-out, SQLite file store vs in-memory store; ${what}`, unit: 'events/s', value: file, baseline: memory, baselineWhat: 'the same relay with --memory' }),
      figure({ name: 'relay-instruct-ack-p50', what: `consumer → relay → target acks → relay → consumer, median of ${ROUND_TRIPS}`, unit: 'ms', value: instruct, baseline: echo, baselineWhat: 'bare WebSocket echo round trip' }),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
