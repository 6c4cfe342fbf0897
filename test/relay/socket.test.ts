// The WebSocket binding against a real relay: hello rules, subscriptions, roster, frames.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import { emitterFor, freshSession, ndjson, post, WsPeer } from '../support/relay-harness.js';

let relay: RelayHandle;
let url = '';
test.before(async () => {
  relay = await testRelay({
    port: 0,
    storePath: ':memory:',
    bufferCap: 4,
    limits: { maxFrom: 3, maxSubscriptions: 2 },
  });
  url = relay.socketUrl;
});

test('hello first: an event before hello gets hello-required and the socket closes 1002', async () => {
  const p = await WsPeer.open(url);
  p.send(emitterFor(freshSession()).emit({ type: 'session.started' }));
  const err = await p.next((f) => f.type === 'error');
  assert.is(err.code, 'hello-required');
  assert.is(await p.closed(), 1002);
});

test('version intersection: none gives version-unsupported with our versions; a match gives one version', async () => {
  const p = await WsPeer.open(url);
  p.send({ type: 'hello', versions: ['9.9'], role: 'consumer' });
  const err = await p.next((f) => f.type === 'error');
  assert.is(err.code, 'version-unsupported');
  assert.equal(err.versions, ['0.1']);
  assert.is(await p.closed(), 1002);
  const q = await WsPeer.open(url);
  q.send({ type: 'hello', versions: ['9.9', '0.1'], role: 'consumer' });
  const hello = await q.next((f) => f.type === 'hello');
  assert.equal(hello.versions, ['0.1']);
  assert.equal(hello.capabilities.roster, {});
  q.close();
});

test('unknown frames and capability keys are ignored; bad JSON gets an error and the socket stays', async () => {
  const p = await WsPeer.greet(url, { role: 'consumer', capabilities: { futurecap: { x: 1 } } });
  p.send({ type: 'zigzag' });
  p.send('{not json');
  await p.next((f) => f.type === 'error' && f.code === 'bad-json');
  p.send({ type: 'ping', t: 42 });
  assert.is((await p.next((f) => f.type === 'pong')).t, 42);
  p.send({ type: 'subscribe', id: 'a' });
  await p.next((f) => f.type === 'subscribed' && f.id === 'a');
  p.close();
});

test('binary frames are refused with binary-unsupported and close 1003', async () => {
  const p = await WsPeer.greet(url, { role: 'consumer' });
  p.ws.send(Buffer.from([1, 2, 3]));
  assert.is((await p.next((f) => f.type === 'error')).code, 'binary-unsupported');
  assert.is(await p.closed(), 1003);
});

test('subscribe errors are in-band, per request, and leave the connection and other subscriptions alive', async () => {
  const p = await WsPeer.greet(url, { role: 'consumer' });
  const s = freshSession();
  p.send({ type: 'subscribe', id: 'live', filter: { session: s } });
  await p.next((f) => f.type === 'subscribed' && f.id === 'live');
  p.send({ type: 'subscribe', id: 'bad-filter', filter: { data: 1 } });
  p.send({ type: 'subscribe', id: 'bad-from', from: {} });
  p.send({ type: 'subscribe', id: 'bad-capture', capture: 'loud' });
  p.send({
    type: 'subscribe',
    id: 'too-many-from',
    from: [{ session: 'a' }, { session: 'b' }, { session: 'c' }, { session: 'd' }],
  });
  for (const id of ['bad-filter', 'bad-from', 'bad-capture'])
    assert.is((await p.next((f) => f.type === 'error' && f.id === id)).code, 'invalid-filter');
  assert.is((await p.next((f) => f.type === 'error' && f.id === 'too-many-from')).code, 'limit-exceeded');
  p.send({ type: 'subscribe', id: 'second' });
  await p.next((f) => f.type === 'subscribed' && f.id === 'second');
  p.send({ type: 'subscribe', id: 'third' });
  assert.is((await p.next((f) => f.type === 'error' && f.id === 'third')).code, 'limit-exceeded');
  const e = emitterFor(s).emit({ type: 'session.started' });
  await post(relay.url, ndjson([e]));
  const got = await p.next((f) => f.id === e.id);
  assert.is(got.session, s);
  p.send({ type: 'unsubscribe', id: 'live' });
  await p.next((f) => f.type === 'unsubscribed' && f.id === 'live');
  p.close();
});

test('WS resume: replay-exhausted frame, then replayed events as bare byte-identical frames, then live', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  const evs = Array.from({ length: 6 }, () => em.emit({ type: 'progress.status' }));
  await post(relay.url, ndjson(evs));
  const p = await WsPeer.greet(url, { role: 'consumer' });
  p.send({ type: 'subscribe', id: 'r', filter: { session: s }, from: [{ session: s, epoch: 0, seq: 0 }] });
  await p.next((f) => f.id === evs[5]!.id);
  const marker = p.frames.findIndex((f) => f.json.type === 'replay-exhausted');
  const firstEvent = p.frames.findIndex((f) => f.json.aep === '0.1');
  assert.ok(marker >= 0 && marker < firstEvent);
  assert.equal(p.frames[marker]!.json, {
    type: 'replay-exhausted',
    sub: 'r',
    session: s,
    earliest: { epoch: 0, seq: 2 },
  });
  assert.equal(
    p.frames.filter((f) => f.json.aep).map((f) => f.text),
    evs.slice(2).map((e) => JSON.stringify(e)),
  );
  const next = em.emit({ type: 'progress.status' });
  await post(relay.url, ndjson([next]));
  await p.next((f) => f.id === next.id);
  p.close();
});

test('capture ceiling on WS replay and on live delivery', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  const secret = () =>
    em.emit({ type: 'run.started', run: 'r', capture: 'redacted', data: { trigger: 'user', prompt: 'CANARY' } });
  await post(relay.url, ndjson([secret()]));
  const p = await WsPeer.greet(url, { role: 'consumer' });
  p.send({ type: 'subscribe', id: 'c', filter: { session: s }, capture: 'metadata', from: [{ session: s }] });
  await p.next((f) => f.type === 'run.started');
  await post(relay.url, ndjson([secret()]));
  await p.next((f) => f.type === 'run.started', p.frames.findIndex((f) => f.json.type === 'run.started') + 1);
  const evs = p.events();
  assert.is(evs.length, 2);
  for (const e of evs) {
    assert.is(e.capture, 'metadata');
    assert.equal(e.data, { trigger: 'user' });
  }
  assert.not.ok(p.frames.some((f) => f.text.includes('CANARY')));
  p.close();
});

test('an invalid event over WS gets invalid-event with its id as cause; the socket stays', async () => {
  const p = await WsPeer.greet(url, { role: 'emitter', identity: { agent: 'x' } });
  const e = emitterFor(freshSession()).emit({ type: 'session.started' }) as Record<string, unknown>;
  delete e.seq;
  p.send(e);
  const err = await p.next((f) => f.type === 'error');
  assert.is(err.code, 'invalid-event');
  assert.is(err.cause, e.id);
  p.send({ type: 'ping', t: 1 });
  await p.next((f) => f.type === 'pong');
  p.close();
});

test('roster: one entry per (connection, claimed session), control verbatim; attention.routed does not claim; emitters are refused in-band', async () => {
  const s1 = freshSession();
  const s2 = freshSession();
  const control = { accepts: ['control.attention.respond'], ack_window_ms: 7000 };
  const a = await WsPeer.greet(url, {
    role: 'emitter',
    identity: { agent: 'agent-a', instance: 'i1' },
    capabilities: { control, emits: ['session'] },
  });
  const b = await WsPeer.greet(url, { role: 'both', identity: { agent: 'agent-b' } });
  a.send(emitterFor(s1, 'agent-a').emit({ type: 'session.started' }));
  a.send(emitterFor(s2, 'agent-a').emit({ type: 'session.started' }));
  b.send(emitterFor(s1, 'agent-b').emit({ type: 'session.started' }));
  b.send(command({ agent: 'router', host: 'h' }, s2, { type: 'attention.routed' }));
  const c = await WsPeer.greet(url, { role: 'consumer' });
  // The roster reflects frames already processed: ask until b's claim on s1 is visible.
  let entries: any[] = [];
  for (let i = 0; i < 50 && entries.filter((e) => e.session === s1).length < 2; i++) {
    c.send({ type: 'roster', id: `r${i}` });
    entries = (await c.next((f) => f.type === 'roster' && f.id === `r${i}`)).entries;
  }
  const mine = entries.filter((e) => e.session === s1 || e.session === s2);
  assert.equal(mine.filter((e) => e.session === s1).length, 2);
  const [s2entry] = mine.filter((e) => e.session === s2);
  assert.equal(
    { ...s2entry, last_event_at: undefined },
    {
      session: s2,
      agent: 'agent-a',
      instance: 'i1',
      control,
      emits: ['session'],
      state: 'live',
      last_event_at: undefined,
      queued: 0,
    },
  );
  assert.type(s2entry.last_event_at, 'string', 'when the session last did something');
  a.send({ type: 'roster', id: 'from-emitter' });
  const err = await a.next((f) => f.type === 'error' && f.id === 'from-emitter');
  assert.is(err.code, 'unauthorized');
  a.send({ type: 'ping', t: 2 });
  await a.next((f) => f.type === 'pong');
  for (const p of [a, b, c]) p.close();
});

test.after(async () => {
  await relay.close();
});

test.run();
