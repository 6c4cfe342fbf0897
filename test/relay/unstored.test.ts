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
  assert.is(u.waits(a, 's', p(6)), undefined, 'up to the next refused one passes');
  assert.match(u.waits(a, 's', p(8)) ?? '', /\(0:7\) is not stored yet/, 'the next refused one holds');
  u.taken(a, 's', p(7));
  assert.is(u.waits(a, 's', p(8)), undefined);
  assert.not.ok(u.any(), 'every refused one taken: no hold left');
});

test('the held event sent alone (a repeated ack, live) does not free the ones refused behind it', () => {
  const u = new Unstored<object>();
  const a = {};
  // 1 refused for now; 2..4 refused behind it; then 1 comes again alone, out of the log's order.
  u.refused(a, 's', p(1), 0);
  for (const seq of [2, 3, 4]) {
    assert.ok(u.waits(a, 's', p(seq), 10));
    u.refused(a, 's', p(seq), 10);
  }
  u.taken(a, 's', p(1), 20);
  // A new event (5) before the resend of 2..4: stored, it would hide them from that resend.
  assert.match(u.waits(a, 's', p(5), 30) ?? '', /\(0:2\)/);
  for (const seq of [2, 3, 4]) {
    assert.is(u.waits(a, 's', p(seq), 40), undefined);
    u.taken(a, 's', p(seq), 40);
  }
  assert.is(u.waits(a, 's', p(5), 50), undefined);
  assert.not.ok(u.any());
});

test('positions never sent on the connection do not hold; a hold taken past its time ends', () => {
  const u = new Unstored<object>();
  const a = {};
  // The connection's refused events are 1, 3 and 5 (2 and 4 went another way).
  for (const seq of [1, 3, 5]) u.refused(a, 's', p(seq), 0);
  u.taken(a, 's', p(1), 10);
  assert.is(u.waits(a, 's', p(3), 10), undefined, 'the resend of 3 follows 1 at once');
  u.taken(a, 's', p(3), 10);
  u.taken(a, 's', p(5), 10);
  assert.not.ok(u.any());
  u.refused(a, 's', p(3), 0);
  u.refused(a, 's', p(4), 0);
  u.taken(a, 's', p(3), 10_001);
  assert.not.ok(u.any(), 'taken after the hold ran out: dropped');
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
