import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { RelayStore, type Admission, type SessionStore, type StoreOptions } from '../../src/relay/store.js';
import { NatsStore } from '../../src/relay/nats/store.js';
import { natsUrl, STORE_KIND } from '../support/relay-store.js';

const ev = (session: string, epoch: number, seq: number, source = 'src'): Admission => ({
  session,
  source,
  id: `${session}-${epoch}-${seq}`,
  epoch,
  seq,
  raw: JSON.stringify({ session, epoch, seq, source }),
});
const loose = (session: string, id: string): Admission => ({
  session,
  source: 'sender',
  id,
  raw: JSON.stringify({ id }),
});
// Both stores behind the one interface: SQLite by default, JetStream with AEP_TEST_STORE=nats
// (a file path maps to one namespace, so reopening it finds the same history).
const spaces = new Map<string, string>();
async function open(opts: StoreOptions): Promise<SessionStore> {
  if (STORE_KIND === 'sqlite') return RelayStore.open(opts);
  if (opts.path !== ':memory:' && !spaces.has(opts.path)) spaces.set(opts.path, `st${spaces.size}${process.pid}`);
  const namespace = opts.path === ':memory:' ? `sm${Math.random().toString(36).slice(2, 10)}` : spaces.get(opts.path)!;
  return NatsStore.open({
    servers: await natsUrl(),
    namespace,
    ...(opts.bufferCap ? { bufferCap: opts.bufferCap } : {}),
    ...(opts.sessionCap ? { sessionCap: opts.sessionCap } : {}),
  });
}
const admit = async (s: SessionStore, a: Admission): Promise<boolean> => (await s.admitAll([a]))[0]!;
const replay = async (s: SessionStore, session: string, after?: { epoch: number; seq: number }) =>
  s.replay(session, after);

const seqs = (items: string[]) =>
  items.map((r) => JSON.parse(r) as { seq?: number; id?: string }).map((o) => o.seq ?? o.id);

test('admission dedupes on (source, id); the same id from another source is a different event', async () => {
  const s = await open({ path: ':memory:' });
  assert.ok(await admit(s, ev('a', 0, 0)));
  assert.not.ok(await admit(s, ev('a', 0, 0)));
  assert.ok(await admit(s, { ...ev('a', 0, 0, 'other'), seq: 1 }));
  assert.is((await replay(s, 'a')).items.length, 2);
  await s.close();
});

test('replay sorts by (epoch, seq) and resumes strictly after a position (AEP-0001 §7)', async () => {
  const s = await open({ path: ':memory:' });
  await s.admitAll([ev('a', 1, 0), ev('a', 0, 2), ev('a', 0, 0), ev('a', 0, 1), ev('a', 1, 1)]);
  assert.equal(seqs((await replay(s, 'a')).items), [0, 1, 2, 0, 1]);
  assert.equal(seqs((await replay(s, 'a', { epoch: 0, seq: 1 })).items), [2, 0, 1]);
  assert.equal(seqs((await replay(s, 'a', { epoch: 1, seq: -1 })).items), [0, 1]);
  assert.equal((await replay(s, 'a', { epoch: 1, seq: 1 })).items, []);
  await s.close();
});

test('seq-less session events sit by arrival among positioned ones, and resume keeps only later ones', async () => {
  const s = await open({ path: ':memory:' });
  await admit(s, ev('a', 0, 0));
  await admit(s, loose('a', 'cmd1'));
  await admit(s, ev('a', 0, 1));
  await admit(s, loose('a', 'cmd2'));
  assert.equal(seqs((await replay(s, 'a')).items), [0, 'cmd1', 1, 'cmd2']);
  assert.equal(seqs((await replay(s, 'a', { epoch: 0, seq: 0 })).items), ['cmd1', 1, 'cmd2']);
  assert.equal(seqs((await replay(s, 'a', { epoch: 0, seq: 1 })).items), ['cmd2']);
  await s.close();
});

test('buffer cap evicts oldest first and a resume before the evicted range is marked exhausted', async () => {
  const s = await open({ path: ':memory:', bufferCap: 3 });
  for (let i = 0; i < 6; i++) await admit(s, ev('a', 0, i));
  const r = await replay(s, 'a', { epoch: 0, seq: 0 });
  assert.equal(seqs(r.items), [3, 4, 5]);
  assert.equal(r.exhausted, { epoch: 0, seq: 3 });
  // A position at or past what was evicted is not exhausted: nothing is missing.
  assert.is((await replay(s, 'a', { epoch: 0, seq: 2 })).exhausted, undefined);
  assert.equal(seqs((await replay(s, 'a', { epoch: 0, seq: 2 })).items), [3, 4, 5]);
  // SQLite forgets an evicted id, as the buffer no longer holds it; JetStream still knows it
  // within the stream's dedupe window (a redelivery is refused there for longer).
  assert.is(await admit(s, ev('a', 0, 0)), STORE_KIND === 'sqlite');
  await s.close();
});

test('one batch admits as the same events admitted one by one: caps, dedupe, exhausted marks, seq-less events', async () => {
  const batch: Admission[] = [];
  for (let i = 0; i < 8; i++) {
    batch.push(ev('a', 0, i), ev('b', 1, i));
    if (i % 3 === 0) batch.push(loose('a', `loose-${i}`));
  }
  batch.push(ev('a', 0, 7), loose('c', 'c-1'), ev('a', 0, 9));
  const whole = await open({ path: ':memory:', bufferCap: 3 });
  const single = await open({ path: ':memory:', bufferCap: 3 });
  const fresh = await whole.admitAll(batch);
  const one: boolean[] = [];
  for (const a of batch) one.push(await admit(single, a));
  assert.equal(fresh, one);
  for (const store of [whole, single]) assert.equal(await store.sessionIds(), ['b', 'c', 'a']);
  for (const session of ['a', 'b', 'c']) {
    for (const after of [undefined, { epoch: 0, seq: 0 }, { epoch: 0, seq: 7 }]) {
      assert.equal(
        await replay(whole, session, after),
        await replay(single, session, after),
        `${session} after ${JSON.stringify(after)}`,
      );
    }
  }
  // SQLite keeps one ring per session; JetStream keeps seq-less events in a ring of their own,
  // so the cap of 3 evicts them only among themselves there.
  assert.equal(
    seqs((await replay(whole, 'a')).items),
    STORE_KIND === 'sqlite' ? [6, 'loose-6', 7, 9] : ['loose-0', 'loose-3', 6, 'loose-6', 7, 9],
  );
  assert.equal((await replay(whole, 'a', { epoch: 0, seq: 0 })).exhausted, { epoch: 0, seq: 6 });
  await whole.close();
  await single.close();
});

test('a batch over the session cap evicts the sessions least recently written as of its end', async () => {
  const s = await open({ path: ':memory:', sessionCap: 2 });
  await s.admitAll([ev('a', 0, 0), ev('b', 0, 0), ev('c', 0, 0), ev('a', 0, 1)]);
  assert.equal(await s.sessionIds(), ['c', 'a']);
  assert.equal((await replay(s, 'b')).items, []);
  await s.close();
});

test('a file store folds its WAL into the database file from its checkpointer, never inside a commit', async () => {
  if (STORE_KIND !== 'sqlite') return;
  const dir = mkdtempSync(join(tmpdir(), 'aep-store-ckpt-'));
  const path = join(dir, 'relay.db');
  const s = RelayStore.open({ path });
  const emptySize = statSync(path).size;
  for (let b = 0; b < 20; b++) s.admitAll(Array.from({ length: 200 }, (_, i) => ev('a', b, i)));
  // Commits only append to the WAL (wal_autocheckpoint = 0) ...
  assert.is(statSync(path).size, emptySize, 'no commit checkpointed');
  // ... and the worker's PASSIVE checkpoints carry the pages into the file.
  const deadline = Date.now() + 5000;
  while (statSync(path).size === emptySize && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.ok(statSync(path).size > emptySize, 'the checkpointer wrote the database file');
  await s.close();
  assert.not.ok(existsSync(`${path}-wal`), 'a closed store leaves no WAL behind');
  const again = RelayStore.open({ path });
  assert.is((await replay(again, 'a')).items.length, 4000);
  await again.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a file store: WAL journal, integer columns as INTEGER and read back as numbers (never bigints), a refused batch kept nowhere', async () => {
  if (STORE_KIND !== 'sqlite') return;
  const dir = mkdtempSync(join(tmpdir(), 'aep-store-sql-'));
  const path = join(dir, 'relay.db');
  const s = RelayStore.open({ path, bufferCap: 2 });
  const other = new DatabaseSync(path);
  try {
    assert.equal(other.prepare('PRAGMA journal_mode').get(), { __proto__: null, journal_mode: 'wal' });
    const far = 2 ** 40;
    s.admitAll([ev('a', far, far + 1), ev('a', far, far + 2), ev('a', far, far + 3), loose('a', 'c1')]);
    const types = other
      .prepare('SELECT DISTINCT typeof(arrival) a, typeof(epoch) e, typeof(seq) s FROM events WHERE epoch IS NOT NULL')
      .all();
    assert.equal(types, [{ __proto__: null, a: 'integer', e: 'integer', s: 'integer' }]);
    const r = s.replay('a');
    assert.equal(r.exhausted, { epoch: far, seq: far + 2 });
    assert.is(typeof r.exhausted!.seq, 'number');
    assert.equal(s.counts(), { sessions: 1, events: 3 });
    other.exec(
      `CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.id = 'b-0-1' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
    );
    assert.throws(() => s.admitAll([ev('b', 0, 0), ev('b', 0, 1)]), /refused/);
    assert.equal(s.counts(), { sessions: 1, events: 3 }, 'the event before the refused one was rolled back with it');
    assert.equal(s.admitAll([ev('b', 0, 0)]), [true], 'the next batch is written');
  } finally {
    other.close();
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('session cap evicts the least recently written session', async () => {
  const s = await open({ path: ':memory:', sessionCap: 2 });
  await admit(s, ev('a', 0, 0));
  await admit(s, ev('b', 0, 0));
  await admit(s, ev('a', 0, 1));
  await admit(s, ev('c', 0, 0));
  assert.equal((await s.sessionIds()).sort(), ['a', 'c']);
  assert.equal((await replay(s, 'b')).items, []);
  assert.is(s.counts().sessions, 2);
  await s.close();
});

test('a file store survives reopening with its history, dedupe state and eviction marks', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-store-'));
  const path = join(dir, 'nested', 'relay.db');
  let s = await open({ path, bufferCap: 2 });
  await s.admitAll([ev('a', 0, 0), ev('a', 0, 1), ev('a', 0, 2)]);
  await s.close();
  if (STORE_KIND === 'sqlite') assert.ok(existsSync(path));
  s = await open({ path, bufferCap: 2 });
  assert.equal(seqs((await replay(s, 'a')).items), [1, 2]);
  assert.equal((await replay(s, 'a')).exhausted, { epoch: 0, seq: 1 });
  assert.not.ok(await admit(s, ev('a', 0, 2)));
  await admit(s, ev('a', 0, 3));
  assert.equal(seqs((await replay(s, 'a', { epoch: 0, seq: 1 })).items), [2, 3]);
  await s.close();
});

test('an unopenable store is a clear error: a bad SQLite path, an unreachable NATS server', async () => {
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => '',
      (err: Error) => err.message,
    );
  assert.match(
    await failure(NatsStore.open({ servers: 'nats://127.0.0.1:1' })),
    /cannot reach NATS at nats:\/\/127.0.0.1:1: .*start nats-server -js/,
  );
  assert.match(await failure(NatsStore.open({ servers: 'http://x' })), /not a NATS server address: "http:\/\/x"/);
  const dir = mkdtempSync(join(tmpdir(), 'relay-store-'));
  const file = join(dir, 'plain-file');
  writeFileSync(file, 'x');
  assert.throws(() => RelayStore.open({ path: join(file, 'relay.db') }), /cannot open relay store/);
});

test.run();
