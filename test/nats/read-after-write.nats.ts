// The core's rule on JetStream: every read waits for the writes made before it. An adapter
// learns what the relay holds by a replay and takes an event it sent before asking, and not
// refused by the answer, as stored; a refusal that came after the answer would leave a hole its
// resend skips for good. nats-server is paused (SIGSTOP) so a write is still out, unconfirmed,
// when the replay is asked for; then it either fails (deadline) or is stored (resumed).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { NatsStore } from '../../src/relay/nats/store.js';
import type { Admission } from '../../src/relay/store.js';
import { emitterFor, freshSession } from '../support/relay-harness.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';

let server: NatsServer;
let store: NatsStore;
test.before(async () => {
  server = await startNatsServer();
  store = await NatsStore.open({ servers: server.url, namespace: 'raw', leaseMs: 60_000 });
});
test.after(async () => {
  server.proc.kill('SIGCONT');
  await store?.close();
  await server.stop();
});

const admission = (session: string, seq: number): Admission => {
  const e = emitterFor(session).emit({ type: 'progress.status', data: { phase: `p${seq}` } });
  return { session, source: e.source, id: e.id, epoch: 0, seq: e.seq!, raw: JSON.stringify(e) };
};

/** Settles `p` and says when, in the order things settled. */
const mark = (order: string[], what: string, p: Promise<unknown>) =>
  p.then(
    () => order.push(`${what} ok`),
    () => order.push(`${what} failed`),
  );

test('a write that fails after its deadline is refused before a replay asked meanwhile answers', async () => {
  const session = freshSession('raw');
  await store.admitAll([admission(session, 0)]);
  const order: string[] = [];
  server.proc.kill('SIGSTOP');
  try {
    const write = mark(order, 'write', store.admitAll([admission(session, 1)]));
    await new Promise((r) => setTimeout(r, 50));
    const read = mark(order, 'replay', store.replay(session));
    await Promise.all([write, read]);
  } finally {
    server.proc.kill('SIGCONT');
  }
  assert.equal(order[0], 'write failed', order.join(', '));
  assert.is(order.length, 2);
});

test('a write stored after a pause is in the replay asked for while it was out', async () => {
  const session = freshSession('raw');
  // The first test's failed write: its outage ends once a probe finds the stream again.
  for (let i = 0; i < 50 && store.health().ok !== true; i++) await new Promise((r) => setTimeout(r, 100));
  await store.admitAll([admission(session, 0)]);
  server.proc.kill('SIGSTOP');
  const second = admission(session, 1);
  let write: Promise<boolean[]>;
  let read: ReturnType<NatsStore['replay']>;
  try {
    write = store.admitAll([second]);
    await new Promise((r) => setTimeout(r, 50));
    read = store.replay(session);
    await new Promise((r) => setTimeout(r, 300));
  } finally {
    server.proc.kill('SIGCONT');
  }
  assert.equal(await write, [true]);
  const r = await read;
  assert.ok(r.items.includes(second.raw), `the replay lacks the write made before it: ${r.items.length} items`);
});

test.run();
