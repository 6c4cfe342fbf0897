// D41 across nodes: a sender on A commands a session claimed on B. The command reaches B at once
// on a core subject while A writes it to history, and again through the commands stream once
// that write is confirmed; the target gets it once. Its answer waits on B (for A's writes) before
// any node sees it, and a history write that fails after the forward is told to the sender as
// `store-unavailable` with `outcome: "unknown"` before the answer; so is a commands-stream write
// that fails after it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { command } from '../../src/protocol/build.js';
import { NatsStore } from '../../src/relay/nats/store.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { StoreUnavailableError } from '../../src/relay/store-fault.js';
import type { Admission } from '../../src/relay/session-store.js';
import { emitterFor, freshSession, type WsPeer } from '../support/relay-harness.js';
import { crossingSession } from '../support/nats-crossing.js';
import { natsUrl } from '../support/relay-store.js';

const TOKEN = 'early-secret';
const TYPE = 'x.test-target.control.instruct';
const namespace = `early${process.pid}`;
let a: RelayHandle;
let b: RelayHandle;
let storeA: NatsStore;
let nc: NatsConnection;

const natsStore = async () => NatsStore.open({ servers: await natsUrl(), namespace, leaseMs: 2000 });

test.before(async () => {
  storeA = await natsStore();
  a = await startRelay({ port: 0, token: TOKEN, store: storeA });
  b = await startRelay({ port: 0, token: TOKEN, store: await natsStore() });
  nc = await connect({ servers: await natsUrl() });
});
test.after(async () => {
  await nc?.close();
  await Promise.all([a.close(), b.close()]);
});

const instruct = (session: string) =>
  command({ agent: 'test-cli', host: 'test-host' }, session, {
    type: TYPE,
    capture: 'redacted',
    data: { text: 'run the tests' },
  });

/** A session claimed on B by a raw target, a sender on A and a watcher on B subscribed to it. */
async function crossing() {
  const o = { aSocket: a.socketUrl, bSocket: b.socketUrl, token: TOKEN, type: TYPE, prefix: 'early' };
  const { s, em, target, sender, watchers } = await crossingSession(o, [b.socketUrl]);
  const watcher = watchers[0]!;
  const close = () => {
    for (const p of [sender, watcher, target]) p.close();
  };
  return { s, em, target, sender, watcher, close };
}

/** A's history writes, each held until the test lets it go (or fails it). */
function holdWritesOnA() {
  const admitAll = storeA.admitAll.bind(storeA);
  const waiting: { list: readonly Admission[]; go: () => void; fail: (err: Error) => void }[] = [];
  storeA.admitAll = (list) =>
    new Promise<boolean[]>((resolve, reject) => {
      waiting.push({
        list,
        go: () => admitAll(list).then(resolve, reject),
        fail: (err) => reject(err),
      });
    });
  return {
    waiting,
    restore: () => {
      storeA.admitAll = admitAll;
      for (const w of waiting.splice(0)) w.go();
    },
  };
}

const index = (p: WsPeer, f: (x: Record<string, unknown>) => boolean) => p.frames.findIndex((x) => x.json && f(x.json));

/**
 * Once the watcher on B sees the start of another session the target sends now, B has taken
 * every frame the target sent before it (one connection's frames are taken in order).
 */
async function tookAll(target: WsPeer, watcher: WsPeer): Promise<void> {
  const started = emitterFor(freshSession('other'), 'test-agent').emit({ type: 'session.started' });
  const id = `o${started.id}`;
  watcher.send({ type: 'subscribe', id, filter: { session: started.session } });
  await watcher.next((f) => f.type === 'subscribed' && f.id === id);
  target.send(started);
  await watcher.next((f) => f.id === started.id);
}

/**
 * A command crossing while A's history write of it is held, its target's answer and an event
 * after it sent, and B known to have taken both.
 */
async function answeredWhileWriting() {
  const c = await crossing();
  const writes = holdWritesOnA();
  const cmd = instruct(c.s);
  c.sender.send(cmd);
  await c.target.next((f) => f.id === cmd.id);
  const answer = c.em.emit({ type: 'control.accepted', cause: cmd.id });
  const after = c.em.emit({ type: 'progress.status', data: { phase: 'after the answer' } });
  c.target.send(answer);
  c.target.send(after);
  await tookAll(c.target, c.watcher);
  return { ...c, writes, cmd, answer, after };
}

test('the command reaches B before its history write is confirmed, once, though both copies come', async () => {
  const { s, target, sender, close } = await crossing();
  const early = nc.subscribe(`${namespace}.early.>`);
  const copies: string[] = [];
  void (async () => {
    for await (const m of early) if (m.string() !== '') copies.push(m.string());
  })();
  const writes = holdWritesOnA();
  const cmd = instruct(s);
  sender.send(cmd);
  await target.next((f) => f.id === cmd.id);
  assert.ok(
    writes.waiting.some((w) => w.list.some((x) => x.id === cmd.id)),
    "the target got the command only after A's write",
  );
  writes.restore();
  // The stream copy follows the confirmed write; B takes it (its durable consumer acks it) and drops it.
  const jsm = await jetstreamManager(nc);
  const stream = `${namespace.toUpperCase()}_CMD`;
  for (let i = 0; i < 200; i++) {
    const last = (await jsm.streams.info(stream)).state.last_seq;
    const consumers = await jsm.consumers.list(stream).next();
    if (last > 0 && consumers.some((c) => c.ack_floor.stream_seq >= last)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  const last = (await jsm.streams.info(stream)).state.last_seq;
  const msg = await jsm.streams.getMessage(stream, { seq: last });
  assert.is(JSON.parse(msg!.string()).id, cmd.id, 'the stream copy was not written');
  assert.is(copies.filter((c) => JSON.parse(c).id === cmd.id).length, 1, 'the early copy was not sent');
  // B took the stream copy before acking it: a command sent now reaches the target behind
  // anything B sent it of the first one.
  const next = instruct(s);
  sender.send(next);
  await target.next((f) => f.id === next.id);
  assert.is(target.frames.filter((f) => f.json?.id === cmd.id).length, 1, 'the target got the command twice');
  early.unsubscribe();
  close();
});

test("the answer waits on B for A's write: neither node's subscribers see it before", async () => {
  const { sender, watcher, close, writes, answer, after } = await answeredWhileWriting();
  for (const p of [sender, watcher])
    assert.is(
      index(p, (f) => f.id === answer.id || f.id === after.id),
      -1,
      'the answer went out before the write',
    );
  writes.restore();
  for (const p of [sender, watcher]) {
    await p.next((f) => f.id === after.id);
    assert.ok(index(p, (f) => f.id === answer.id) < index(p, (f) => f.id === after.id), 'out of order');
  }
  close();
});

test('a history write that fails after the forward: the sender hears unknown, then the answer', async () => {
  const { sender, close, writes, cmd, answer } = await answeredWhileWriting();
  const w = writes.waiting.find((x) => x.list.some((y) => y.id === cmd.id))!;
  writes.waiting.splice(writes.waiting.indexOf(w), 1);
  w.fail(new StoreUnavailableError('the test failed this write'));
  const error = await sender.next((f) => f.type === 'error' && f.cause === cmd.id);
  assert.is(error.code, 'store-unavailable');
  assert.is(error.outcome, 'unknown');
  assert.match(error.detail, /send it again with the same id/);
  await sender.next((f) => f.id === answer.id);
  assert.ok(index(sender, (f) => f.type === 'error') < index(sender, (f) => f.id === answer.id));
  writes.restore();
  close();
});

test('a commands-stream write that fails after the forward: unknown too, then the answer (last: it removes the stream)', async () => {
  const { s, em, target, sender, close } = await crossing();
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete(`${namespace.toUpperCase()}_CMD`);
  const cmd = instruct(s);
  sender.send(cmd);
  await target.next((f) => f.id === cmd.id);
  const answer = em.emit({ type: 'control.accepted', cause: cmd.id });
  target.send(answer);
  const error = await sender.next((f) => f.type === 'error' && f.cause === cmd.id);
  assert.is(error.code, 'store-unavailable');
  assert.is(error.outcome, 'unknown');
  assert.match(error.detail, /did not confirm the command/);
  assert.match(error.detail, /whether it took effect is unknown/);
  assert.match(error.detail, /send the same command again with the same id/);
  await sender.next((f) => f.id === answer.id);
  assert.ok(index(sender, (f) => f.type === 'error') < index(sender, (f) => f.id === answer.id));
  close();
});

test.run();
