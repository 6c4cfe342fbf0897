import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RelayStore, type Admission } from '../../src/relay/store.js';

const ev = (session: string, epoch: number, seq: number, source = 'src'): Admission => ({
  session, source, id: `${session}-${epoch}-${seq}`, epoch, seq, raw: JSON.stringify({ session, epoch, seq, source }),
});
const loose = (session: string, id: string): Admission => ({ session, source: 'sender', id, raw: JSON.stringify({ id }) });
const seqs = (items: string[]) => items.map((r) => JSON.parse(r) as { seq?: number; id?: string }).map((o) => o.seq ?? o.id);

test('admission dedupes on (source, id); the same id from another source is a different event', () => {
  const s = RelayStore.open({ path: ':memory:' });
  assert.ok(s.admit(ev('a', 0, 0)));
  assert.not.ok(s.admit(ev('a', 0, 0)));
  assert.ok(s.admit({ ...ev('a', 0, 0, 'other'), seq: 1 }));
  assert.is(s.replay('a').items.length, 2);
  s.close();
});

test('replay sorts by (epoch, seq) and resumes strictly after a position (AEP-0001 §7)', () => {
  const s = RelayStore.open({ path: ':memory:' });
  s.admitAll([ev('a', 1, 0), ev('a', 0, 2), ev('a', 0, 0), ev('a', 0, 1), ev('a', 1, 1)]);
  assert.equal(seqs(s.replay('a').items), [0, 1, 2, 0, 1]);
  assert.equal(seqs(s.replay('a', { epoch: 0, seq: 1 }).items), [2, 0, 1]);
  assert.equal(seqs(s.replay('a', { epoch: 1, seq: -1 }).items), [0, 1]);
  assert.equal(s.replay('a', { epoch: 1, seq: 1 }).items, []);
  s.close();
});

test('seq-less session events sit by arrival among positioned ones, and resume keeps only later ones', () => {
  const s = RelayStore.open({ path: ':memory:' });
  s.admit(ev('a', 0, 0));
  s.admit(loose('a', 'cmd1'));
  s.admit(ev('a', 0, 1));
  s.admit(loose('a', 'cmd2'));
  assert.equal(seqs(s.replay('a').items), [0, 'cmd1', 1, 'cmd2']);
  assert.equal(seqs(s.replay('a', { epoch: 0, seq: 0 }).items), ['cmd1', 1, 'cmd2']);
  assert.equal(seqs(s.replay('a', { epoch: 0, seq: 1 }).items), ['cmd2']);
  s.close();
});

test('buffer cap evicts oldest first and a resume before the evicted range is marked exhausted', () => {
  const s = RelayStore.open({ path: ':memory:', bufferCap: 3 });
  for (let i = 0; i < 6; i++) s.admit(ev('a', 0, i));
  const r = s.replay('a', { epoch: 0, seq: 0 });
  assert.equal(seqs(r.items), [3, 4, 5]);
  assert.equal(r.exhausted, { epoch: 0, seq: 3 });
  // A position at or past what was evicted is not exhausted: nothing is missing.
  assert.is(s.replay('a', { epoch: 0, seq: 2 }).exhausted, undefined);
  assert.equal(seqs(s.replay('a', { epoch: 0, seq: 2 }).items), [3, 4, 5]);
  // An evicted id is forgotten, as the buffer no longer holds it.
  assert.ok(s.admit(ev('a', 0, 0)));
  s.close();
});

test('session cap evicts the least recently written session', () => {
  const s = RelayStore.open({ path: ':memory:', sessionCap: 2 });
  s.admit(ev('a', 0, 0));
  s.admit(ev('b', 0, 0));
  s.admit(ev('a', 0, 1));
  s.admit(ev('c', 0, 0));
  assert.equal(s.sessionIds().sort(), ['a', 'c']);
  assert.equal(s.replay('b').items, []);
  assert.is(s.counts().sessions, 2);
  s.close();
});

test('a file store survives reopening with its history, dedupe state and eviction marks', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-store-'));
  const path = join(dir, 'nested', 'relay.db');
  let s = RelayStore.open({ path, bufferCap: 2 });
  s.admitAll([ev('a', 0, 0), ev('a', 0, 1), ev('a', 0, 2)]);
  s.close();
  assert.ok(existsSync(path));
  s = RelayStore.open({ path, bufferCap: 2 });
  assert.equal(seqs(s.replay('a').items), [1, 2]);
  assert.equal(s.replay('a').exhausted, { epoch: 0, seq: 1 });
  assert.not.ok(s.admit(ev('a', 0, 2)));
  s.admit(ev('a', 0, 3));
  assert.equal(seqs(s.replay('a', { epoch: 0, seq: 1 }).items), [2, 3]);
  s.close();
});

test('an unopenable store path is a CONFIG_INVALID error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-store-'));
  const file = join(dir, 'plain-file');
  writeFileSync(file, 'x');
  assert.throws(() => RelayStore.open({ path: join(file, 'relay.db') }), /cannot open relay store/);
});

test.run();
