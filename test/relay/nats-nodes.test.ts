// Several relay nodes on one JetStream server, one fabric: a consumer on node A commands a
// session claimed on node B with exactly the single-node outcomes, the frame forwarded byte for
// byte, the ack (and a retry's recorded re-ack) reaching the sender on A, resume on any node.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { NatsStore } from '../../src/relay/nats/store.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { emitterFor, freshSession, SseClient, WsPeer } from '../support/relay-harness.js';
import { natsUrl } from '../support/relay-store.js';
import { startTestTarget } from '../support/relay-target.js';

const TOKEN = 'fabric-secret';
const TYPE = 'x.test-target.control.instruct';
const tokens = [
  { token: 'alice', identity: 'alice', commands: [TYPE], sessions: ['team-*'] },
  { token: 'adapter-x', identity: 'adapter-x', emit: [{ agents: ['test-target'], sessions: ['*'] }] },
  { token: 'rogue', identity: 'rogue', emit: [{ agents: ['test-target'], sessions: ['*'] }] },
];
const CLAIM_LEASE_MS = 1500;
const namespace = `nodes${process.pid}`;
let a: RelayHandle;
let b: RelayHandle;

let storeB: NatsStore;

const node = async (store: NatsStore): Promise<RelayHandle> =>
  startRelay({ port: 0, token: TOKEN, tokens, claimLeaseMs: CLAIM_LEASE_MS, store });
const natsStore = async () => NatsStore.open({ servers: await natsUrl(), namespace, leaseMs: 2000 });

test.before(async () => {
  a = await node(await natsStore());
  storeB = await natsStore();
  b = await node(storeB);
});
test.after(async () => {
  await Promise.all([a.close(), b.close()]);
});

const sender = { agent: 'test-cli', host: 'test-host' };
const instruct = (session: string) =>
  command(sender, session, { type: TYPE, capture: 'redacted', data: { text: 'run the tests' } });
const consumerOn = (r: RelayHandle, token = TOKEN) =>
  RelayConsumer.connect({ url: r.socketUrl, agent: 'test-cli', token });

/** Waits until `r`'s roster lists `n` claims of `session` (the claim crossed the fabric). */
async function claimsSeen(r: RelayHandle, session: string, n: number): Promise<void> {
  const c = await consumerOn(r);
  try {
    for (let i = 0; i < 100; i++) {
      if ((await c.roster()).filter((e) => e.session === session).length === n) return;
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error(`node never saw ${n} claim(s) of ${session}: ${JSON.stringify(await c.roster())}`);
  } finally {
    await c.close();
  }
}

/** The session's whole history as node `r` serves it (`live=0`). */
async function historyOf(r: RelayHandle, s: string): Promise<SseClient> {
  const h = await SseClient.open(
    r.url,
    { from: JSON.stringify([{ session: s }]), live: '0' },
    { authorization: `Bearer ${TOKEN}` },
  );
  await h.done();
  return h;
}

/**
 * A session claimed on B by a raw target for `agent`, watched by a raw consumer on A that has
 * seen its start: A sees B's events once they are stored; the claim crosses through the bucket.
 */
async function claimedOnB(agent: string) {
  const s = freshSession('team');
  const em = emitterFor(s, agent);
  const target = await WsPeer.target(b.socketUrl, agent, [TYPE], TOKEN);
  const peer = await WsPeer.greet(a.socketUrl, { role: 'consumer' }, TOKEN);
  peer.send({ type: 'subscribe', id: 'w', filter: { session: s } });
  await peer.next((f) => f.type === 'subscribed');
  target.send(em.emit({ type: 'session.started' }));
  await peer.next((f) => f.type === 'session.started');
  await claimsSeen(a, s, 1);
  return { s, em, target, peer };
}

test('a consumer on A commands a session claimed on B: forwarded byte-identically, the ack reaches A', async () => {
  const { s, em, target, peer } = await claimedOnB('raw-target');
  const cmd = instruct(s);
  const text = `{ "type":"${cmd.type}",  "aep":"0.1", "id":"${cmd.id}", "time":"${cmd.time}", "source":"${cmd.source}", "agent":"${cmd.agent}", "session":"${s}", "capture":"redacted", "data":{"text":"please"} }`;
  peer.send(text);
  const fwd = await target.next((f) => f.id === cmd.id);
  assert.is(target.frames.find((f) => f.json === fwd)!.text, text);
  target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
  assert.is((await peer.next((f) => f.type === 'control.accepted')).cause, cmd.id);
  // Either node serves the session's history, the command kept once, as it arrived.
  for (const r of [a, b]) {
    const h = await historyOf(r, s);
    assert.equal(
      h.events.map((e) => e.type),
      ['session.started', cmd.type, 'control.accepted'],
    );
    assert.is(h.messages.filter((m) => m.data)[1]!.data, text);
  }
  peer.close();
  target.ws.close();
});

test('an answer crossing to the sender node is fanned out there once and in its session order', async () => {
  const { s, em, target, peer } = await claimedOnB('once-target');
  const answers = (id: string) => peer.events().filter((e) => e.type === 'control.accepted' && e.cause === id);
  for (let i = 0; i < 6; i++) {
    const cmd = instruct(s);
    peer.send(cmd);
    await target.next((f) => f.id === cmd.id);
    // Every other round an event goes just ahead of the answer: the answer's early copy would
    // overtake it on A, so there the answer waits for its turn.
    if (i % 2 === 1) target.send(em.emit({ type: 'progress.status', data: { phase: `before ${i}` } }));
    target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
    // An event B stores after the answer reaches A through the same ordered feed as the answer's
    // stored copy, so by then both copies of the answer have come.
    const after = em.emit({ type: 'progress.status', data: { phase: `after ${i}` } });
    target.send(after);
    await peer.next((f) => f.id === after.id);
    assert.is(answers(cmd.id).length, 1, JSON.stringify(answers(cmd.id)));
  }
  const seqs = peer
    .events()
    .filter((e) => e.seq !== undefined)
    .map((e) => e.seq!);
  assert.equal(
    seqs,
    [...seqs].sort((x, y) => x - y),
    'A fanned out the session out of order',
  );
  peer.close();
  target.ws.close();
});

test('what a sender on A was answered from B is in the history A reads next, however slow B writes', async () => {
  const s = freshSession('team');
  const t = await startTestTarget({ url: b.socketUrl, token: TOKEN, accepts: [TYPE], sessions: [s] });
  await claimsSeen(a, s, 1);
  const c = await consumerOn(a);
  // B's writes take 300 ms (a slow JetStream): the answer reaches A long before it is stored.
  const admitAll = storeB.admitAll.bind(storeB);
  storeB.admitAll = (list) => new Promise((r) => setTimeout(r, 300)).then(() => admitAll(list));
  for (let i = 0; i < 3; i++) {
    const cmd = instruct(s);
    const r = await c.send(cmd, { timeoutMs: 3000 });
    assert.is(r.outcome, 'accepted');
    const h = await historyOf(a, s);
    assert.ok(
      h.events.some((e) => e.type === 'control.accepted' && e.cause === cmd.id),
      `round ${i}: the answer is not in A's history yet`,
    );
  }
  storeB.admitAll = admitAll;
  await c.close();
  await t.close();
});

test('the single-node refusals across nodes: no-route, unsupported, unauthorized, ambiguous', async () => {
  const s = freshSession('team');
  const c = await consumerOn(a);
  assert.equal(await c.send(instruct(s), { timeoutMs: 3000 }), {
    outcome: 'refused',
    code: 'no-route',
    detail: `no live connection claims session ${s}`,
  });
  const narrow = await startTestTarget({
    url: b.socketUrl,
    token: TOKEN,
    accepts: ['x.test-target.control.cancel'],
    sessions: [s],
  });
  await claimsSeen(a, s, 1);
  const unsupported = await c.send(instruct(s), { timeoutMs: 3000 });
  assert.equal(unsupported, { outcome: 'refused', code: 'unsupported', detail: `the target does not accept ${TYPE}` });
  const alice = await consumerOn(a, 'alice');
  const other = await alice.send(instruct(freshSession('other')), { timeoutMs: 3000 });
  assert.is(other.outcome === 'refused' && other.code, 'unauthorized');
  await alice.close();
  const second = await startTestTarget({ url: a.socketUrl, token: TOKEN, accepts: [TYPE], sessions: [s] });
  await claimsSeen(b, s, 2);
  assert.equal(await c.send(instruct(s), { timeoutMs: 3000 }), {
    outcome: 'refused',
    code: 'ambiguous',
    detail: `2 live connections claim session ${s}`,
  });
  await second.close();
  await claimsSeen(a, s, 1);
  await narrow.close();
  // A connection that closes takes its claims with it on every node, at once.
  await claimsSeen(a, s, 0);
  await c.close();
});

test('a claimant that leaves while its command crosses: the sender on A gets no-route, as on one relay', async () => {
  const c = await consumerOn(a);
  for (let i = 0; i < 3; i++) {
    const s = freshSession('team');
    const t = await startTestTarget({ url: b.socketUrl, token: TOKEN, accepts: [TYPE], sessions: [s] });
    await claimsSeen(a, s, 1);
    // Gone without a goodbye, and the command sent at once: A may still route it to B.
    (t.link as unknown as { ws: { terminate(): void } }).ws.terminate();
    void t.close();
    const r = await c.send(instruct(s), { timeoutMs: 3000 });
    assert.equal(r, { outcome: 'refused', code: 'no-route', detail: `no live connection claims session ${s}` });
  }
  await c.close();
});

test('a retry with the same id crosses again and its recorded, byte-identical ack reaches the sender on A', async () => {
  const s = freshSession('team');
  const t = await startTestTarget({ url: b.socketUrl, token: TOKEN, accepts: [TYPE], sessions: [s] });
  await claimsSeen(a, s, 1);
  const cmd = instruct(s);
  const peer = await WsPeer.greet(a.socketUrl, { role: 'consumer' }, TOKEN);
  peer.send({ type: 'subscribe', id: 'acks', filter: { cause: cmd.id } });
  await peer.next((f) => f.type === 'subscribed');
  peer.send(cmd);
  const first = await peer.next((f) => f.type === 'control.accepted');
  const n = peer.frames.length;
  peer.send(cmd);
  const again = await peer.next((f) => f.type === 'control.accepted', n);
  assert.is(peer.frames.slice(n).find((f) => f.json === again)!.text, peer.frames.find((f) => f.json === first)!.text);
  assert.is(t.received.length, 2);
  // History keeps one ack (the re-ack is a redelivery), read on either node.
  const h = await historyOf(b, s);
  assert.is(h.events.filter((e) => e.type === 'control.accepted').length, 1);
  peer.close();
  await t.close();
});

test('resume (epoch, seq) on any node: events ingested on B, resumed on A after a position', async () => {
  const s = freshSession();
  const em = emitterFor(s);
  const evs = [
    em.emit({ type: 'session.started' }),
    em.emit({ type: 'run.started', run: 'r' }),
    em.emit({ type: 'run.finished', run: 'r' }),
  ];
  const res = await fetch(`${b.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-ndjson', 'aep-version': '0.1', authorization: `Bearer ${TOKEN}` },
    body: evs.map((e) => JSON.stringify(e)).join('\n'),
  });
  assert.is(res.status, 202);
  const live = await SseClient.open(
    a.url,
    { filter: JSON.stringify({ session: s }), from: JSON.stringify([{ session: s, epoch: 0, seq: 0 }]) },
    { authorization: `Bearer ${TOKEN}` },
  );
  await live.until((x) => x.events.length >= 2);
  assert.equal(
    live.events.map((e) => e.id),
    [evs[1]!.id, evs[2]!.id],
  );
  // And live: what B ingests next reaches A's subscriber once, in order.
  const next = em.emit({ type: 'session.ended', data: { reason: 'other' } });
  await fetch(`${b.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'aep-version': '0.1', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(next),
  });
  await live.until((x) => x.events.length >= 3);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(
    live.events.map((e) => e.id),
    [evs[1]!.id, evs[2]!.id, next.id],
  );
  live.close();
});

test('D19 across nodes: a live claim on B refuses a rival identity on A; a closed one keeps it out for the lease', async () => {
  const s = freshSession();
  const owner = await WsPeer.greet(b.socketUrl, { role: 'emitter', identity: { agent: 'test-target' } }, 'adapter-x');
  owner.send(emitterFor(s, 'test-target').emit({ type: 'session.started' }));
  await claimsSeen(a, s, 1);
  const rogue = await WsPeer.greet(a.socketUrl, { role: 'emitter', identity: { agent: 'test-target' } }, 'rogue');
  const rival = emitterFor(s, 'test-target');
  const first = rival.emit({ type: 'session.started' });
  rogue.send(first);
  const refused = await rogue.next((f) => f.type === 'error' && f.cause === first.id);
  assert.is(refused.code, 'unauthorized');
  assert.match(refused.detail, /claimed by another live connection/);
  owner.ws.close();
  await claimsSeen(a, s, 0);
  const second = rival.emit({ type: 'progress.status' });
  rogue.send(second);
  assert.match(
    (await rogue.next((f) => f.type === 'error' && f.cause === second.id)).detail,
    /was claimed by another identity; its claim lapses in \d+ s/,
  );
  await new Promise((r) => setTimeout(r, CLAIM_LEASE_MS + 300));
  const third = rival.emit({ type: 'progress.status' });
  rogue.send(third);
  await claimsSeen(b, s, 1);
  assert.not.ok(rogue.frames.some((f) => f.json?.type === 'error' && f.json.cause === third.id));
  rogue.close();
});

test('session ids NATS subjects reserve (dots, wildcards, spaces) or that are too long for a subject work across nodes', async () => {
  for (const s of [`team-a.b *>c d ü ${process.pid}`, `team-${'x'.repeat(400)}.${process.pid}`]) {
    const t = await startTestTarget({ url: b.socketUrl, token: TOKEN, accepts: [TYPE], sessions: [s] });
    await claimsSeen(a, s, 1);
    const c = await consumerOn(a);
    const r = await c.send(instruct(s), { timeoutMs: 3000 });
    assert.is(r.outcome, 'accepted');
    const h = await historyOf(a, s);
    // (Which of the claim and the command was stored first is up to the two nodes' timing.)
    assert.equal(h.events.map((e) => e.type).sort(), ['control.accepted', 'session.started', TYPE].sort());
    assert.ok(h.events.every((e) => e.session === s));
    await c.close();
    await t.close();
  }
});

test('/healthz names the engine and its state; both nodes see two nodes', async () => {
  for (const r of [a, b]) {
    const h = (await (
      await fetch(`${r.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).json()) as any;
    assert.is(h.ok, true);
    assert.is(h.store.engine, 'nats-jetstream');
    assert.match(h.store.version, /^2\./);
    assert.is(h.store.nodes, 2);
  }
});

test.run();
