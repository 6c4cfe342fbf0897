// A session's first event refused for now holds back its later ones from that connection until
// it is taken again; an earlier or equal position passes, another connection or session is not held,
// and a hold nobody renews ends after its time.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Unstored } from '../../src/relay/unstored.js';

const p = (seq: number, epoch = 0) => ({ epoch, seq });

test('held back after the first refused position until it is taken again', () => {
  const u = new Unstored<object>();
  const a = {};
  const b = {};
  assert.not.ok(u.any());
  u.refused(a, 's', p(5));
  u.refused(a, 's', p(7));
  assert.match(u.waits(a, 's', p(6)) ?? '', /\(0:5\) is not stored yet; resend from it/);
  assert.is(u.waits(a, 's', p(5)), undefined, 'the held one itself passes');
  assert.is(u.waits(a, 's', p(4)), undefined);
  assert.is(u.waits(a, 's', p(0, 1)) !== undefined, true, 'a later epoch waits too');
  assert.is(u.waits(b, 's', p(9)), undefined, 'another connection');
  assert.is(u.waits(a, 't', p(9)), undefined, 'another session');
  u.taken(a, 's', p(4));
  assert.ok(u.waits(a, 's', p(6)), 'an earlier position taken does not free it');
  u.taken(a, 's', p(5));
  assert.is(u.waits(a, 's', p(6)), undefined);
  assert.not.ok(u.any());
});

test('a lower refusal moves the hold back; a connection leaving drops its holds', () => {
  const u = new Unstored<object>();
  const a = {};
  u.refused(a, 's', p(5));
  u.refused(a, 's', p(3));
  assert.match(u.waits(a, 's', p(4)) ?? '', /\(0:3\)/);
  u.leave(a);
  assert.is(u.waits(a, 's', p(9)), undefined);
  assert.not.ok(u.any());
});

test('a hold not refused again ends after its time; refused again, it holds on', () => {
  const u = new Unstored<object>();
  const a = {};
  u.refused(a, 's', p(5), 0);
  u.refused(a, 's', p(5), 8000);
  u.refused(a, 's', p(9), 15_000);
  assert.ok(u.waits(a, 's', p(6), 17_000), 'renewed at 8 s, still held at 17 s');
  assert.is(u.waits(a, 's', p(6), 18_001), undefined, 'not renewed by the later refusal: ends 10 s after the last');
  assert.not.ok(u.any());
});

test.run();
