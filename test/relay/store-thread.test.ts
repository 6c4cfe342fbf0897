// The file store's writer thread against a real relay and a real SQLite file: frames fan out as
// the bytes received; fan-out goes on while the file cannot be written (a command there:
// forward-early.test.ts); a write SQLite refuses behaves as
// it did with the store on the relay's own thread. A second connection to the same file (the
// lock, the refusing trigger) is the fault, so nothing in the relay is replaced.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { startRelay, storeFailures } from '../../src/relay/server.js';
import { pack, ThreadedStore, unpack } from '../../src/relay/store-thread.js';
import type { Admission } from '../../src/relay/store.js';
import { isStoreUnavailable } from '../../src/relay/store-fault.js';
import {
  FILE_RELAY_TOKEN,
  fileRelay,
  fileRelayAuth,
  freshDir,
  history,
  otherConnection,
  removeFileRelayDirs,
} from '../support/file-relay.js';
import { emitterFor, freshSession, post, WAIT_MS, WsPeer } from '../support/relay-harness.js';

const TOKEN = FILE_RELAY_TOKEN;
const auth = fileRelayAuth;

async function until(pred: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const ev = (session: string, seq: number): Admission => ({
  session,
  source: 'src',
  id: `${session}-${seq}`,
  epoch: 0,
  seq,
  raw: JSON.stringify({ session, seq }),
});

test('a read sent while a batch is with the writer sees that batch; committed() reads the file at once', async () => {
  const path = join(freshDir(), 'relay.db');
  const s = await ThreadedStore.open({ path });
  const written = s.admitAll([ev('a', 0), ev('a', 1), ev('b', 0)]);
  // Not awaited: the read goes to the writer behind the batch.
  const r = s.replay('a');
  assert.ok(r instanceof Promise, 'a read while a batch is in flight waits for it');
  assert.equal(
    (await r).items.map((t) => JSON.parse(t).seq),
    [0, 1],
  );
  assert.equal(await written, [true, true, true]);
  assert.equal(await s.admitAll([ev('a', 1), ev('a', 2)]), [false, true], 'dedupe on (source, id) across batches');
  // Nothing in flight: the relay's own connection answers at once, and so does committed().
  const now = s.replay('a');
  assert.not.ok(now instanceof Promise);
  assert.is((now as { items: string[] }).items.length, 3);
  assert.is(s.committed!('b').length, 1);
  assert.equal(s.counts(), { sessions: 2, events: 4 });
  await s.close();
  const again = await ThreadedStore.open({ path });
  assert.is((await again.replay('a')).items.length, 3, 'the history survives reopening');
  await again.close();
});

test('a batch crosses to the writer packed and comes back the same admissions; no position stays no position', () => {
  const list: Admission[] = [
    { session: 's', source: 'src', id: 'a', epoch: 0, seq: 0, raw: '{"a":1}' },
    { session: 's', source: 'src', id: 'b', raw: '{"cmd":"x"}' },
    { session: 't', source: 'other', id: 'c', epoch: 3, seq: 12, raw: '{"text":"caf\u00e9 ✓"}' },
  ];
  assert.equal(unpack(pack(list)), list);
});

test('admissions made while a batch is with the writer share the next one; each caller gets its own answers', async () => {
  const s = await ThreadedStore.open({ path: join(freshDir(), 'relay.db') });
  const first = s.admitAll([ev('a', 0), ev('a', 1)]);
  const second = s.admitAll([ev('a', 1), ev('a', 2)]);
  const third = s.admitAll([ev('b', 0), ev('a', 2)]);
  assert.equal(await first, [true, true]);
  assert.equal(await second, [false, true], 'a redelivery of the batch before');
  assert.equal(await third, [true, false], 'a redelivery within the shared batch');
  assert.equal(
    (await s.replay('a')).items.map((t) => JSON.parse(t).seq),
    [0, 1, 2],
  );
  await s.close();
});

test('admissions handed in during one turn with nothing at the writer go as one batch once the turn is done', async () => {
  const s = await ThreadedStore.open({ path: join(freshDir(), 'relay.db') });
  const commits = (): unknown => s.health().commits;
  try {
    // As several POSTs read in one poll hand in their bodies: one commit for all of them.
    const calls = [0, 1, 2, 3, 4].map((i) => s.admitAll([ev('a', i)]));
    assert.is(commits(), 0, 'nothing posted before the turn ends');
    assert.equal(await Promise.all(calls), [[true], [true], [true], [true], [true]]);
    assert.is(commits(), 1, 'five admissions, one write');
    // An urgent one in the same turn as others goes at once and takes them with it, in order.
    const before = s.admitAll([ev('b', 0)]);
    const urgent = s.admitAll([ev('b', 0), ev('b', 1)], { now: true });
    assert.ok(urgent instanceof Promise, 'not written on the relay thread ahead of what was handed in first');
    assert.equal(await before, [true]);
    assert.equal(await urgent, [false, true], 'committed after the admission made before it');
    assert.is(commits(), 2);
    assert.equal(
      (await s.replay('a')).items.map((t) => JSON.parse(t).seq),
      [0, 1, 2, 3, 4],
    );
  } finally {
    await s.close();
  }
});

test('an urgent batch is posted while one is with the writer: the writer takes them in order', async () => {
  const s = await ThreadedStore.open({ path: join(freshDir(), 'relay.db') });
  const first = s.admitAll([ev('a', 0), ev('a', 1)]);
  const urgent = s.admitAll([ev('a', 1), ev('a', 2)], { now: true });
  // Not urgent: waits for the batches in flight, then goes as one.
  const later = s.admitAll([ev('a', 2), ev('b', 0)]);
  assert.equal(await first, [true, true]);
  assert.equal(await urgent, [false, true], 'committed after the batch posted before it');
  assert.equal(await later, [false, true]);
  assert.equal(
    (await s.replay('a')).items.map((t) => JSON.parse(t).seq),
    [0, 1, 2],
  );
  await s.close();
});

test("an urgent batch with nothing at the writer is written on the relay's thread and answered at once; a held lock sends it the writer's way", async () => {
  const path = join(freshDir(), 'relay.db');
  const s = (await ThreadedStore.open({ path })) as ThreadedStore;
  const other = otherConnection(path);
  try {
    const at = s.admitAll([ev('a', 0), ev('a', 1)], { now: true });
    assert.equal(at, [true, true], 'answered in the same turn, not a promise');
    assert.equal(s.admitAll([ev('a', 1)], { now: true }), [false], 'dedupe as on the writer');
    assert.equal(await s.admitAll([ev('a', 2)]), [true], 'the writer goes on after it');
    other.exec('BEGIN IMMEDIATE');
    const held = s.admitAll([ev('a', 3)], { now: true });
    assert.ok(held instanceof Promise, 'the lock is held elsewhere: it waits on the writer');
    other.exec('COMMIT');
    assert.equal(await held, [true]);
    assert.equal(
      ((await s.replay('a')) as { items: string[] }).items.map((t) => JSON.parse(t).seq),
      [0, 1, 2, 3],
    );
  } finally {
    other.close();
    await s.close();
  }
  const again = await ThreadedStore.open({ path });
  assert.is((await again.replay('a')).items.length, 4, 'both connections wrote to the file');
  await again.close();
});

test("the session cap holds across the relay's thread and the writer: each counts the sessions the other added", async () => {
  const s = (await ThreadedStore.open({ path: join(freshDir(), 'relay.db'), sessionCap: 2 })) as ThreadedStore;
  try {
    assert.equal(await s.admitAll([ev('a', 0)]), [true], 'by the writer');
    assert.equal(s.admitAll([ev('b', 0)], { now: true }), [true], "on the relay's thread");
    assert.equal(await s.admitAll([ev('c', 0)]), [true], 'by the writer: a third session');
    assert.equal(s.counts(), { sessions: 2, events: 2 }, 'the least recently written session is evicted');
    assert.is(((await s.replay('a')) as { items: string[] }).items.length, 0);
    assert.equal(s.admitAll([ev('d', 0)], { now: true }), [true], "on the relay's thread again");
    assert.equal(s.counts(), { sessions: 2, events: 2 });
    assert.is(((await s.replay('b')) as { items: string[] }).items.length, 0);
  } finally {
    await s.close();
  }
});

test('an urgent batch posted behind one the locked file refuses is refused with it, though the lock is gone by its turn', async () => {
  const path = join(freshDir(), 'relay.db');
  const s = (await ThreadedStore.open({ path })) as ThreadedStore;
  const other = otherConnection(path);
  try {
    other.exec('BEGIN IMMEDIATE');
    const first = Promise.resolve(s.admitAll([ev('a', 0)]));
    const urgent = Promise.resolve(s.admitAll([ev('a', 1)], { now: true }));
    const e1 = await first.then(
      () => undefined,
      (e: Error) => e,
    );
    // Released before the writer could take the urgent batch on its own: it would commit now.
    other.exec('COMMIT');
    const e2 = await urgent.then(
      () => undefined,
      (e: Error) => e,
    );
    assert.ok(e1 !== undefined && isStoreUnavailable(e1), `the locked write is refused for now: ${e1?.message}`);
    assert.ok(e2 !== undefined && isStoreUnavailable(e2), 'the batch queued behind it is refused with it (D38)');
    assert.is(e2!.message, e1!.message, 'for the same reason');
    await until(() => s.unavailable() === undefined, 'a probe finds the file writable again');
    assert.equal(await s.admitAll([ev('a', 0), ev('a', 1)]), [true, true], 'neither refused batch was stored');
  } finally {
    other.close();
    await s.close();
  }
});

test('a frame is fanned out as the bytes received: spacing, key order, escapes and non-ASCII text kept; line breaks only are removed', async () => {
  const { relay } = await fileRelay();
  try {
    const s = freshSession('bytes');
    const sub = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
    sub.send({ type: 'subscribe', id: 'w', filter: { session: s } });
    await sub.next((f) => f.type === 'subscribed');
    const emitter = await WsPeer.greet(relay.socketUrl, { role: 'emitter', identity: { agent: 'test-agent' } }, TOKEN);
    const e = emitterFor(s).emit({ type: 'progress.status', data: { phase: 'x' } });
    // JSON.stringify of the parsed event would change every one of these.
    const odd = `{ "seq":${e.seq},"type":"${e.type}" , "aep":"0.1","id":"${e.id}","time":"${e.time}","source":"${e.source}","agent":"${e.agent}","session":"${s}","data":{"phase":"caf\\u00e9 ✓ 日本"} }`;
    emitter.send(odd);
    const multi = JSON.stringify({ ...e, seq: e.seq! + 1, id: `${e.id}-2` }, null, 2);
    emitter.send(multi);
    await sub.next((f) => f.id === `${e.id}-2`);
    const texts = sub.frames.filter((f) => f.json?.session === s).map((f) => f.text);
    assert.is(texts[0], odd, 'byte-identical to the frame received');
    assert.is(texts[1], multi.replace(/[\r\n]+/g, ''), 'a frame with line breaks loses only them');
    // History serves the same text.
    const h = await history(relay, s);
    assert.is(h[0], odd);
    emitter.close();
    sub.close();
  } finally {
    await relay.close();
  }
});

test('a write SQLite refuses: socket events were fanned out and the failure is logged, a refused POST is a 500 that keeps nothing, and the relay goes on storing', async () => {
  const lines: string[] = [];
  const { relay, path } = await fileRelay(lines);
  const other = otherConnection(path);
  try {
    other.exec(
      `CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.raw LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`,
    );
    const s = freshSession('refused');
    const em = emitterFor(s, 'test-agent');
    const sub = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
    sub.send({ type: 'subscribe', id: 'w', filter: { session: s } });
    await sub.next((f) => f.type === 'subscribed');
    const emitter = await WsPeer.greet(relay.socketUrl, { role: 'emitter', identity: { agent: 'test-agent' } }, TOKEN);
    emitter.send(em.emit({ type: 'progress.status', data: { phase: 'poison' } }));
    await sub.next((f) => f.data?.phase === 'poison');
    await until(
      () => lines.some((l) => l.includes('store write failed: refused by the test trigger')),
      'the failed write is logged',
    );

    const refused = await post(
      relay.url,
      `${JSON.stringify(em.emit({ type: 'progress.status', data: { phase: 'poison-http' } }))}\n`,
      auth,
    );
    assert.is(refused.status, 500);
    assert.is(refused.body.error, 'internal');

    emitter.send(em.emit({ type: 'progress.status', data: { phase: 'fine' } }));
    await sub.next((f) => f.data?.phase === 'fine');
    const ok = await post(
      relay.url,
      `${JSON.stringify(em.emit({ type: 'progress.status', data: { phase: 'fine-http' } }))}\n`,
      auth,
    );
    assert.is(ok.status, 202);
    assert.is(ok.body.stored, 1);
    const phases = (await history(relay, s)).map((t) => (JSON.parse(t) as { data: { phase: string } }).data.phase);
    assert.equal(phases, ['fine', 'fine-http']);
    const health = (await (await fetch(`${relay.url}/healthz`, { headers: auth })).json()) as { ok: boolean };
    assert.ok(health.ok, 'one refused write leaves the store healthy');
    emitter.close();
    sub.close();
  } finally {
    other.close();
    await relay.close();
  }
});

test('a store path the relay cannot open is the same clear error as before', async () => {
  const file = join(freshDir(), 'plain-file');
  (await import('node:fs')).writeFileSync(file, 'x');
  let err: Error | undefined;
  await startRelay({ port: 0, storePath: join(file, 'relay.db') }).catch((e: Error) => (err = e));
  assert.match(String(err?.message), /cannot open relay store/);
});

test.after(() => {
  removeFileRelayDirs();
});

test('a store that keeps refusing is reported once per interval with a count, and says what to do', () => {
  const lines: string[] = [];
  let t = 1_000;
  const report = storeFailures(
    (l) => lines.push(l),
    10_000,
    () => t,
  );
  report(new Error('database or disk is full'));
  for (let i = 0; i < 5; i += 1) {
    t += 1_000;
    report(new Error('database or disk is full'));
  }
  assert.is(lines.length, 1, 'one line for a burst of refusals');
  assert.match(lines[0]!, /store write failed: database or disk is full; .*Free disk space/);
  t += 10_000;
  report(new Error('database or disk is full'));
  assert.is(lines.length, 2);
  assert.match(lines[1]!, /\(and 5 more since the last report\)/);
});

test.run();
