// D17/D18 end to end: a consumer sends commands through a real relay to a real target link.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { startTestTarget, type TestTarget } from '../support/relay-target.js';
import { emitterFor, freshSession, SseClient, WsPeer } from '../support/relay-harness.js';

const TOKEN = 'shared-secret';
let relay: RelayHandle;
test.before(async () => {
  relay = await testRelay({
    port: 0,
    storePath: ':memory:',
    token: TOKEN,
    tokens: [
      { token: 'alice', identity: 'alice', commands: ['x.*.control.instruct'], sessions: ['team-*'] },
      { token: 'viewer', identity: 'viewer' },
    ],
  });
});
const sender = { agent: 'test-cli', host: 'test-host' };
const instruct = (session: string, text = 'please run the tests', from = sender) =>
  command(from, session, { type: 'x.test-target.control.instruct', capture: 'redacted', data: { text } });
/** A tokens-file identity sends under its own name (D19). */
const asAlice = { agent: 'alice', host: 'test-host' };

async function withTarget<T>(sessions: string[], accepts: string[], fn: (t: TestTarget) => Promise<T>): Promise<T> {
  const t = await startTestTarget({ url: relay.socketUrl, token: TOKEN, accepts, sessions });
  // The claim is in once an event of each session is in history.
  for (const s of sessions) {
    const c = await SseClient.open(
      relay.url,
      { filter: JSON.stringify({ session: s }), from: JSON.stringify([{ session: s }]) },
      { authorization: `Bearer ${TOKEN}` },
    );
    await c.until((x) => x.events.length > 0);
    c.close();
  }
  try {
    return await fn(t);
  } finally {
    await t.close();
  }
}

const consumer = (token?: string) =>
  RelayConsumer.connect({ url: relay.socketUrl, agent: 'test-cli', ...(token ? { token } : {}) });

test('forwarded byte-identically to the one claimant, acked, and kept in session history', async () => {
  const s = freshSession('team');
  const em = emitterFor(s, 'raw-target');
  const target = await WsPeer.target(relay.socketUrl, 'raw-target', ['x.test-target.control.instruct'], TOKEN);
  const cmd = instruct(s);
  // Odd spacing and key order survive: the relay forwards the frame text, not a re-serialisation.
  const text = `{ "type":"${cmd.type}",  "aep":"0.1", "id":"${cmd.id}", "time":"${cmd.time}", "source":"${cmd.source}", "agent":"${cmd.agent}", "session":"${s}", "capture":"redacted", "data":{"text":"please"} }`;
  const peer = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
  peer.send({ type: 'subscribe', id: 'watch', filter: { session: s } });
  await peer.next((f) => f.type === 'subscribed');
  // Once the claiming event reached the subscriber, the relay has recorded the claim.
  target.send(em.emit({ type: 'session.started' }));
  await peer.next((f) => f.type === 'session.started');
  peer.send(text);
  const fwd = await target.next((f) => f.id === cmd.id);
  assert.is(target.frames.find((f) => f.json === fwd)!.text, text);
  target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
  const ack = await peer.next((f) => f.type === 'control.accepted');
  assert.is(ack.cause, cmd.id);
  const h = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session: s }]), live: '0' },
    { authorization: `Bearer ${TOKEN}` },
  );
  await h.done();
  assert.equal(
    h.events.map((e) => e.type),
    ['session.started', cmd.type, 'control.accepted'],
  );
  // History serves the command as it arrived, minus nothing: same text.
  assert.is(h.messages.filter((m) => m.data)[1]!.data, text);
  peer.close();
  target.close();
});

test('a retried command is forwarded again and the byte-identical re-ack crosses the relay; history keeps one copy', async () => {
  const s = freshSession('team');
  await withTarget([s], ['x.test-target.control.instruct'], async (t) => {
    const cmd = instruct(s);
    const peer = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
    peer.send({ type: 'subscribe', id: 'acks', filter: { cause: cmd.id } });
    await peer.next((f) => f.type === 'subscribed');
    peer.send(cmd);
    await peer.next((f) => f.type === 'control.accepted');
    peer.send(cmd);
    const first = peer.frames.findIndex((f) => f.json.type === 'control.accepted');
    await peer.next((f) => f.type === 'control.accepted', first + 1);
    const acks = peer.frames.filter((f) => f.json.type === 'control.accepted').map((f) => f.text);
    assert.is(acks.length, 2);
    assert.is(acks[0], acks[1]);
    assert.is(t.received.length, 2);
    const h = await SseClient.open(
      relay.url,
      { from: JSON.stringify([{ session: s }]), live: '0' },
      { authorization: `Bearer ${TOKEN}` },
    );
    await h.done();
    assert.equal(
      h.events.map((e) => e.type),
      ['session.started', cmd.type, 'control.accepted'],
    );
    peer.close();
  });
});

test("consumer.send settles accepted, and rejected on the target's own nack", async () => {
  const s = freshSession('team');
  await withTarget([s], ['x.test-target.control.instruct', 'control.pause'], async () => {
    const c = await consumer(TOKEN);
    const ok = await c.send(instruct(s), { timeoutMs: 5000 });
    assert.is(ok.outcome, 'accepted');
    await c.close();
  });
  const s2 = freshSession('team');
  // A target that declares no control block gets everything and nacks what it does not take.
  const open = await WsPeer.greet(relay.socketUrl, { role: 'emitter', identity: { agent: 'bare' } }, TOKEN);
  const em = emitterFor(s2, 'bare');
  open.send(em.emit({ type: 'session.started' }));
  const c = await consumer(TOKEN);
  const pending = c.send(command(sender, s2, { type: 'control.pause' }), { timeoutMs: 5000 });
  const fwd = await open.next((f) => f.type === 'control.pause');
  open.send(em.emit({ type: 'control.rejected', cause: fwd.id, data: { reason: 'refused' } }));
  const r = await pending;
  assert.is(r.outcome, 'rejected');
  assert.is(r.outcome === 'rejected' && r.reason, 'refused');
  open.close();
  await c.close();
});

test('refusal no-route: nobody claims the session; nothing enters history', async () => {
  const s = freshSession('team');
  const c = await consumer(TOKEN);
  const r = await c.send(instruct(s), { timeoutMs: 5000 });
  assert.equal(r.outcome === 'refused' && r.code, 'no-route');
  const h = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session: s }]), live: '0' },
    { authorization: `Bearer ${TOKEN}` },
  );
  await h.done();
  assert.equal(h.events, []);
  await c.close();
});

test('refusal ambiguous: two live claimants; neither receives the command', async () => {
  const s = freshSession('team');
  await withTarget([s], ['x.test-target.control.instruct'], async (t1) => {
    await withTarget([s], ['x.test-target.control.instruct'], async (t2) => {
      const c = await consumer(TOKEN);
      const r = await c.send(instruct(s), { timeoutMs: 5000 });
      assert.equal(r.outcome === 'refused' && r.code, 'ambiguous');
      assert.is(t1.received.length + t2.received.length, 0);
      await c.close();
    });
    // With the second claimant gone the same session routes again.
    const c = await consumer(TOKEN);
    assert.is((await c.send(instruct(s), { timeoutMs: 5000 })).outcome, 'accepted');
    assert.is(t1.received.length, 1);
    await c.close();
  });
});

test('refusal unsupported: the claimant did not declare the type; it never receives it', async () => {
  const s = freshSession('team');
  await withTarget([s], ['control.attention.respond'], async (t) => {
    const c = await consumer(TOKEN);
    const r = await c.send(instruct(s), { timeoutMs: 5000 });
    assert.equal(r.outcome === 'refused' && r.code, 'unsupported');
    assert.is(t.received.length, 0);
    await c.close();
  });
});

test('refusal unauthorized: tokenless relay, watch-only token, tokens-file ACL denial', async () => {
  const s = freshSession('team');
  const other = freshSession('elsewhere');
  await withTarget([s, other], ['x.test-target.control.instruct', 'control.pause'], async (t) => {
    const viewer = await consumer('viewer');
    const r1 = await viewer.send(instruct(s), { timeoutMs: 5000 });
    assert.equal(r1.outcome === 'refused' && [r1.code, r1.detail], ['unauthorized', 'viewer is watch-only']);
    const alice = await consumer('alice');
    const r2 = await alice.send(command(asAlice, s, { type: 'control.pause' }), { timeoutMs: 5000 });
    assert.equal(r2.outcome === 'refused' && r2.code, 'unauthorized');
    const r3 = await alice.send(instruct(other, 'x', asAlice), { timeoutMs: 5000 });
    assert.equal(r3.outcome === 'refused' && r3.code, 'unauthorized');
    assert.is(t.received.length, 0);
    // Her one allowed verb on her sessions goes through.
    assert.is(
      (await alice.send(instruct(s, 'please run the tests', asAlice), { timeoutMs: 5000 })).outcome,
      'accepted',
    );
    assert.equal(
      t.received.map((c) => c.session),
      [s],
    );
    await viewer.close();
    await alice.close();
  });
  const open = await testRelay({ port: 0, storePath: ':memory:' });
  const t = await startTestTarget({ url: open.socketUrl, accepts: ['x.test-target.control.instruct'], sessions: [s] });
  const c = await RelayConsumer.connect({ url: open.socketUrl, agent: 'test-cli' });
  const r = await c.send(instruct(s), { timeoutMs: 5000 });
  assert.equal(r.outcome === 'refused' && r.code, 'unauthorized');
  assert.is(t.received.length, 0);
  await c.close();
  await t.close();
  await open.close();
});

test('a wrong token cannot open the socket at all', async () => {
  try {
    await RelayConsumer.connect({ url: relay.socketUrl, agent: 'x', token: 'wrong' });
    assert.unreachable('connected with a wrong token');
  } catch (err) {
    assert.match((err as Error).message, /401/);
  }
});

test('consumer.roster lists the claimant with its declared control block', async () => {
  const s = freshSession('team');
  await withTarget([s], ['x.test-target.control.instruct'], async () => {
    const c = await consumer(TOKEN);
    const entries = await c.roster();
    const mine = entries.find((e) => e.session === s)!;
    assert.is(mine.agent, 'test-target');
    assert.equal(mine.control, { accepts: ['x.test-target.control.instruct'], ack_window_ms: 10000 });
    await c.close();
  });
});

test('consumer.subscribe surfaces a refused filter as a FrameError with its code', async () => {
  const c = await consumer(TOKEN);
  try {
    await c.subscribe({ filter: { seq: 1 } }, { onEvent: () => {} });
    assert.unreachable('bad filter accepted');
  } catch (err) {
    assert.is((err as { code?: string }).code, 'invalid-filter');
  }
  await c.close();
});

test.after(async () => {
  await relay.close();
});

test.run();
