// The answers a fabric node fans out once though they arrive twice (src/relay/crossed.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CrossedAnswers } from '../../src/relay/crossed.js';

test('the first copy of an answer goes out, its second does not, and a third is new again', () => {
  const c = new CrossedAnswers();
  assert.ok(c.first('aep://h/a', 'e1'));
  assert.not.ok(c.first('aep://h/a', 'e1'));
  assert.is(c.size, 0);
  // A later redelivery (its sender resent it) is fanned out as one would be on one node.
  assert.ok(c.first('aep://h/a', 'e1'));
});

test('ids are per source: the same id from another source is another answer', () => {
  const c = new CrossedAnswers();
  assert.ok(c.first('aep://h/a', 'e1'));
  assert.ok(c.first('aep://h/b', 'e1'));
  assert.not.ok(c.first('aep://h/b', 'e1'));
  assert.not.ok(c.first('aep://h/a', 'e1'));
});

test('answers that come only once are held up to the cap, the oldest forgotten first', () => {
  const c = new CrossedAnswers(3);
  for (const id of ['e1', 'e2', 'e3', 'e4']) assert.ok(c.first('s', id));
  assert.is(c.size, 3);
  // e1 was forgotten, so its late copy goes out; e4 is still held.
  assert.ok(c.first('s', 'e1'));
  assert.not.ok(c.first('s', 'e4'));
});

test.run();
