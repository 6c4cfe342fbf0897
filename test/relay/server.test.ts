// HTTP ingest, discovery, health and SSE against a real relay on an ephemeral port.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RelayHandle } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import { command } from '../../src/protocol/build.js';
import { emitterFor, freshSession, ndjson, post, SseClient } from '../support/relay-harness.js';

let relay: RelayHandle;
let base = '';
test.before(async () => {
  relay = await testRelay({
    port: 0,
    storePath: ':memory:',
    bufferCap: 5,
    limits: { maxBody: 64 * 1024, maxBatch: 50 },
  });
  base = relay.url;
});

test('discovery at /events and /.well-known/aep advertises endpoints and capabilities', async () => {
  for (const path of ['/events', '/.well-known/aep']) {
    const res = await fetch(`${base}${path}`);
    assert.is(res.status, 200);
    const d = (await res.json()) as any;
    assert.equal(d.aep, ['0.1']);
    assert.equal(d.endpoints, { events: '/events', stream: '/stream', socket: '/socket' });
    assert.equal(d.capabilities.replay, { buffer: 5, all: true });
    assert.equal(d.capabilities.filters, ['attr-match']);
    assert.equal(d.capabilities.roster, {});
  }
});

test('/healthz answers without a token', async () => {
  const res = await fetch(`${base}/healthz`);
  assert.is(res.status, 200);
  assert.is(((await res.json()) as any).ok, true);
});

test('ingest: 202 for JSON and NDJSON; each event then reaches a live SSE subscriber in order', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  const sse = await SseClient.open(base, { filter: JSON.stringify({ session: s }) });
  const a = em.emit({ type: 'session.started' });
  const b = em.emit({ type: 'run.started', run: 'r1', data: { trigger: 'user' } });
  const c = em.emit({ type: 'run.finished', run: 'r1' });
  const one = await fetch(`${base}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'aep-version': '0.1' },
    body: JSON.stringify(a, null, 2),
  });
  assert.is(one.status, 202);
  assert.is((await post(base, ndjson([b, c]))).status, 202);
  await sse.until((x) => x.events.length >= 3);
  assert.equal(
    sse.events.map((e) => e.id),
    [a.id, b.id, c.id],
  );
  assert.equal(
    sse.messages.filter((m) => m.data).map((m) => m.event),
    ['session.started', 'run.started', 'run.finished'],
  );
  assert.equal(
    sse.messages.filter((m) => m.data).map((m) => m.id),
    [`${s}:0:0`, `${s}:0:1`, `${s}:0:2`],
  );
  // The NDJSON line is served byte for byte; the pretty-printed body loses only its line breaks.
  assert.is(sse.messages.filter((m) => m.data)[1]!.data, JSON.stringify(b));
  sse.close();
});

test('a batch with one bad line is rejected whole: 400 naming the line, nothing ingested', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  const good = em.emit({ type: 'session.started' });
  const bad = { ...em.emit({ type: 'run.started', run: 'r' }) } as Record<string, unknown>;
  delete bad.id;
  const res = await post(base, `${ndjson([good])}${JSON.stringify(bad)}\n`);
  assert.is(res.status, 400);
  assert.is(res.body.error, 'invalid-event');
  assert.is(res.body.line, 1);
  const broken = await post(base, `${ndjson([good])}{not json\n`);
  assert.is(broken.status, 400);
  assert.is(broken.body.error, 'invalid-json');
  const replay = await SseClient.open(base, { from: JSON.stringify([{ session: s }]), live: '0' });
  await replay.done();
  assert.equal(replay.events, []);
});

test('ingest refusals: 415 content type, 426 version (with versions), 413 body and batch caps', async () => {
  const e = emitterFor(freshSession()).emit({ type: 'session.started' });
  const ct = await post(base, JSON.stringify(e), { 'content-type': 'text/plain' });
  assert.is(ct.status, 415);
  const v = await post(base, JSON.stringify(e), { 'aep-version': '9.9' });
  assert.is(v.status, 426);
  assert.equal(v.body.versions, ['0.1']);
  const none = await fetch(`${base}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(e),
  });
  assert.is(none.status, 426);
  const big = await post(base, JSON.stringify({ ...e, data: { label: 'x'.repeat(70 * 1024) } }), {
    'content-type': 'application/json',
  });
  assert.is(big.status, 413);
  assert.is(big.body.error, 'payload-too-large');
  const em = emitterFor(freshSession());
  const many = await post(base, ndjson(Array.from({ length: 51 }, () => em.emit({ type: 'progress.status' }))));
  assert.is(many.status, 413);
  assert.equal(many.body, { error: 'too-many-events', max: 50, count: 51 });
});

test('SSE: a bad filter, ceiling or from is a 400 before any stream (fail closed)', async () => {
  const queries: Record<string, string>[] = [
    { filter: '{"seq":1}' },
    { filter: '{oops' },
    { capture: 'everything' },
    { from: '{}' },
  ];
  for (const q of queries) {
    const c = await SseClient.open(base, q);
    assert.is(c.status, 400, JSON.stringify(q));
    c.close();
  }
});

test('SSE resume: from and Last-Event-ID deliver strictly after the position, then live', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  const evs = [0, 1, 2].map(() => em.emit({ type: 'progress.status' }));
  await post(base, ndjson(evs));
  const byFrom = await SseClient.open(base, {
    filter: JSON.stringify({ session: s }),
    from: JSON.stringify([{ session: s, epoch: 0, seq: 0 }]),
  });
  const byHeader = await SseClient.open(
    base,
    { filter: JSON.stringify({ session: s }) },
    { 'last-event-id': `${s}:0:1` },
  );
  await byFrom.until((c) => c.events.length >= 2);
  await byHeader.until((c) => c.events.length >= 1);
  const next = em.emit({ type: 'progress.status' });
  await post(base, ndjson([next]));
  await byFrom.until((c) => c.events.length >= 3);
  await byHeader.until((c) => c.events.length >= 2);
  assert.equal(
    byFrom.events.map((e) => e.seq),
    [1, 2, 3],
  );
  assert.equal(
    byHeader.events.map((e) => e.seq),
    [2, 3],
  );
  byFrom.close();
  byHeader.close();
});

test('SSE replay-exhausted comes before what the buffer still holds; live=0 ends with replay-complete', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  await post(base, ndjson(Array.from({ length: 8 }, () => em.emit({ type: 'progress.status' }))));
  const c = await SseClient.open(base, { from: JSON.stringify([{ session: s, epoch: 0, seq: 0 }]), live: '0' });
  await c.done();
  const firstData = c.messages.findIndex((m) => m.data !== undefined);
  const marker = c.messages.findIndex((m) => m.comments.some((x) => x.startsWith('replay-exhausted')));
  assert.ok(marker >= 0 && marker < firstData);
  assert.ok(c.comments.includes(`replay-exhausted ${s} 0:3`));
  assert.equal(
    c.events.map((e) => e.seq),
    [3, 4, 5, 6, 7],
  );
  assert.is(c.comments.at(-1), 'replay-complete');
});

test('SSE from=all replays every held session with no exhausted marker', async () => {
  const s1 = freshSession();
  const s2 = freshSession();
  await post(
    base,
    ndjson([emitterFor(s1).emit({ type: 'session.started' }), emitterFor(s2).emit({ type: 'session.started' })]),
  );
  const c = await SseClient.open(base, { from: 'all', live: '0', filter: JSON.stringify({ session: [s1, s2] }) });
  await c.done();
  assert.equal(c.events.map((e) => e.session).sort(), [s1, s2].sort());
  assert.not.ok(c.comments.some((x) => x.startsWith('replay-exhausted')));
});

test('capture ceiling applies on SSE replay and live delivery alike', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  const secret = () =>
    em.emit({ type: 'run.started', run: 'r', capture: 'redacted', data: { trigger: 'user', prompt: 'CANARY-TEXT' } });
  await post(base, ndjson([secret()]));
  const c = await SseClient.open(base, {
    filter: JSON.stringify({ session: s }),
    capture: 'metadata',
    from: JSON.stringify([{ session: s }]),
  });
  await c.until((x) => x.events.length >= 1);
  await post(base, ndjson([secret()]));
  await c.until((x) => x.events.length >= 2);
  for (const e of c.events) {
    assert.is(e.capture, 'metadata');
    assert.equal(e.data, { trigger: 'user' });
  }
  assert.not.ok(c.messages.some((m) => m.data?.includes('CANARY')));
  c.close();
});

test('a POSTed command is routed like one over WebSocket: without a token it is refused 403 with its cause, and nothing is kept', async () => {
  const s = freshSession();
  await post(base, ndjson([emitterFor(s).emit({ type: 'session.started' })]));
  const cmd = command({ agent: 'cli', host: 'h' }, s, { type: 'control.pause' });
  const r = await post(base, ndjson([cmd]));
  assert.is(r.status, 403);
  assert.equal(
    [r.body.code, r.body.cause, r.body.detail],
    ['unauthorized', cmd.id, 'control needs an authenticated binding'],
  );
  const c = await SseClient.open(base, { from: JSON.stringify([{ session: s }]), live: '0' });
  await c.done();
  assert.equal(
    c.events.map((e) => e.type),
    ['session.started'],
  );
});

test('a relay restart keeps history in its SQLite file and resumes from a position', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-restart-'));
  const storePath = join(dir, 'relay.db');
  const s = freshSession();
  const em = emitterFor(s);
  const first = await testRelay({ port: 0, storePath });
  const evs = [0, 1, 2].map(() => em.emit({ type: 'progress.status' }));
  await post(first.url, ndjson(evs));
  await first.close();
  const second = await testRelay({ port: 0, storePath });
  const c = await SseClient.open(second.url, { from: JSON.stringify([{ session: s, epoch: 0, seq: 0 }]), live: '0' });
  await c.done();
  assert.equal(
    c.messages.filter((m) => m.data).map((m) => m.data),
    evs.slice(1).map((e) => JSON.stringify(e)),
  );
  // Dedupe state survived too: re-posting the same events stores nothing new.
  const again = await post(second.url, ndjson(evs));
  assert.is(again.body.stored, 0);
  await second.close();
});

test('auth: with a token every surface but /healthz needs it; header or access_token query', async () => {
  const locked = await testRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  assert.is((await fetch(`${locked.url}/events`)).status, 401);
  assert.is((await fetch(`${locked.url}/events`, { headers: { authorization: 'Bearer nope' } })).status, 401);
  assert.is((await fetch(`${locked.url}/events`, { headers: { authorization: 'Bearer tok' } })).status, 200);
  assert.is((await fetch(`${locked.url}/events?access_token=tok`)).status, 200);
  const anon = (await (await fetch(`${locked.url}/healthz`)).json()) as any;
  assert.equal(anon, { ok: true });
  const authed = (await (
    await fetch(`${locked.url}/healthz`, { headers: { authorization: 'Bearer tok' } })
  ).json()) as any;
  assert.is(typeof authed.events, 'number');
  const sse = await SseClient.open(locked.url, {});
  assert.is(sse.status, 401);
  sse.close();
  await locked.close();
});

test('a port in use is a PORT_IN_USE error', async () => {
  try {
    await testRelay({ port: relay.port, storePath: ':memory:' });
    assert.unreachable('second relay started on a taken port');
  } catch (err) {
    assert.is((err as { code?: string }).code, 'PORT_IN_USE');
  }
});

test.after(async () => {
  await relay.close();
});

test.run();
