// The consumer client against a real relay: per-subscription delivery, silence as timeout,
// retries that resend the identical command text.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import { emitterFor, freshSession, ndjson, post, WsPeer } from '../support/relay-harness.js';

let relay: RelayHandle;
test.before(async () => {
  relay = await testRelay({ port: 0, storePath: ':memory:', token: 'tok' });
});
const auth = { authorization: 'Bearer tok' };

test('two subscriptions on one connection: each handler sees only what its filter selects', async () => {
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'test-cli' });
  const s1 = freshSession();
  const s2 = freshSession();
  const got1: AepEvent[] = [];
  const got2: AepEvent[] = [];
  await c.subscribe({ filter: { session: s1 } }, { onEvent: (e) => got1.push(e) });
  let done!: () => void;
  const both = new Promise<void>((r) => (done = r));
  await c.subscribe(
    { filter: { session: [s1, s2] } },
    {
      onEvent: (e) => {
        got2.push(e);
        if (new Set(got2.map((x) => x.id)).size === 2) done();
      },
    },
  );
  await post(
    relay.url,
    ndjson([emitterFor(s2).emit({ type: 'session.started' }), emitterFor(s1).emit({ type: 'session.started' })]),
    auth,
  );
  await both;
  // Bare frames carry no subscription id, so overlapping subscriptions may see a copy twice
  // (legal, AEP-0003 §3.5; consumers dedupe on (source, id)); a non-matching event never.
  assert.equal([...new Set(got2.map((e) => e.session))], [s2, s1]);
  assert.ok(got1.length > 0);
  assert.ok(got1.every((e) => e.session === s1));
  await c.close();
});

test('silence from the target settles as timeout; each retry resends the identical text', async () => {
  const s = freshSession();
  const mute = await WsPeer.greet(relay.socketUrl, { role: 'emitter', identity: { agent: 'mute' } }, 'tok');
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'test-cli' });
  const seen = await c.subscribe({ filter: { session: s } }, { onEvent: () => {} });
  const arrived = new Promise<void>((resolve) =>
    c.subscribe({ filter: { session: s, type: 'session.started' } }, { onEvent: () => resolve() }),
  );
  mute.send(emitterFor(s, 'mute').emit({ type: 'session.started' }));
  await arrived;
  seen.close();
  const cmd = command({ agent: 'test-cli', host: 'h' }, s, { type: 'control.pause' });
  const r = await c.send(cmd, { timeoutMs: 100, retries: 1 });
  assert.is(r.outcome, 'timeout');
  const copies = await (async () => {
    await mute.next((f) => f.id === cmd.id);
    const first = mute.frames.findIndex((f) => f.json?.id === cmd.id);
    await mute.next((f) => f.id === cmd.id, first + 1);
    return mute.frames.filter((f) => f.json?.id === cmd.id).map((f) => f.text);
  })();
  assert.is(copies.length, 2);
  assert.is(copies[0], copies[1]);
  assert.is(copies[0], JSON.stringify(cmd));
  mute.close();
  await c.close();
});

test('connect fails clearly when nothing listens', async () => {
  try {
    await RelayConsumer.connect({ url: 'ws://127.0.0.1:9/socket', agent: 'x', timeoutMs: 2000 });
    assert.unreachable('connected to nothing');
  } catch (err) {
    assert.is((err as { code?: string }).code, 'RELAY_UNREACHABLE');
  }
});

test.after(async () => {
  await relay.close();
});

test.run();
