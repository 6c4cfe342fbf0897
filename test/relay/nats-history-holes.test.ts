// D38 on JetStream, one node's own guard: a session's positioned events that JetStream did not
// confirm hold back its later ones until each is stored, the earliest first and then the next. The
// earliest may be resent alone (a repeated ack, out of its log's order); a later event stored
// then would hide the other failed one from every resend. Real nats-server; the failures are
// injected into this node's publishes of chosen events.
import { randomBytes } from 'node:crypto';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Engine } from '../../src/relay/nats/engine.js';
import { NatsStore } from '../../src/relay/nats/store.js';
import type { Admission } from '../../src/relay/store.js';
import { natsUrl } from '../support/relay-store.js';

let store: NatsStore;
/** Ids of events whose publish fails, as if JetStream did not confirm it. */
const failing = new Set<string>();

test.before(async () => {
  store = await NatsStore.open({ servers: await natsUrl(), namespace: `holes${randomBytes(4).toString('hex')}` });
  const js = (store as unknown as { engine: Engine }).engine.js;
  const publish = js.publish.bind(js);
  js.publish = ((subject: string, data: string, opts?: object) => {
    const id = (JSON.parse(data) as { id: string }).id;
    if (failing.has(id)) return Promise.reject(new Error(`injected: JetStream did not confirm ${id}`));
    return publish(subject, data, opts);
  }) as typeof js.publish;
});
test.after(async () => {
  await store.close();
});

const SESSION = 'holes-1';
const at = (seq: number): Admission => {
  const id = `ev-${seq}`;
  const raw = JSON.stringify({ aep: '0.1', id, type: 'progress.status', session: SESSION, seq, source: 'urn:t' });
  return { session: SESSION, source: 'urn:t', id, epoch: 0, seq, raw };
};
/** What the store said of one write: stored, or why not. */
const write = (...seqs: number[]): Promise<string> =>
  store.admitAll(seqs.map(at)).then(
    () => 'stored',
    (err: Error) => err.message,
  );
const held = async (): Promise<number[]> => {
  const r = await store.replay(SESSION);
  return r.items.map((raw) => (JSON.parse(raw) as { seq: number }).seq);
};

/** `first` written, and `failed` pipelined behind it (queued while it is out): their publishes fail. */
async function failBehind(first: number[], failed: number[]): Promise<void> {
  for (const seq of failed) failing.add(`ev-${seq}`);
  const [a, b] = await Promise.all([write(...first), write(...failed)]);
  failing.clear();
  assert.is(a, 'stored');
  assert.match(b, new RegExp(`did not confirm ev-${failed[0]}`));
}

test('two failed positions: the earliest resent alone, the next still holds back later events', async () => {
  await failBehind([0, 1, 2], [3, 4]);
  // The earliest comes alone (as a repeated ack does): stored.
  assert.is(await write(3), 'stored');
  // A later event while 4 is still missing: refused, naming 4, and not stored.
  assert.match(await write(5), /an earlier event of session holes-1 \(0:4\) is not stored yet; resend from it/);
  assert.equal(await held(), [0, 1, 2, 3]);
  // The resend from 4 takes both.
  assert.is(await write(4, 5), 'stored');
  assert.equal(await held(), [0, 1, 2, 3, 4, 5]);
  // Nothing holds back any more.
  assert.is(await write(6), 'stored');
});

test('in one write: the earliest hole is filled and what follows the next one is refused', async () => {
  await failBehind([7], [8, 9]);
  assert.match(await write(8, 10), /\(0:9\) is not stored yet/);
  assert.equal((await held()).slice(7), [7, 8]);
  assert.is(await write(9, 10), 'stored');
  assert.equal((await held()).slice(7), [7, 8, 9, 10]);
});

test.run();
