import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { JOIN_CAP, QUEUE_CAP, TEXT_CAP, partitionExpired, pendingCount, takePrefix } from '../../src/machines/queue.js';
import type { QueuedInstruction } from '../../src/machines/session-context.js';

const item = (id: string, text: string, acceptedAt = 0): QueuedInstruction => ({
  id,
  key: `k-${id}`,
  text,
  acceptedAt,
});

test('caps carry the decided numbers (D2, D3, D8)', () => {
  assert.equal([QUEUE_CAP, TEXT_CAP, JOIN_CAP], [20, 4000, 10_000]);
});

test('D8: the prefix stops at the first instruction that would overflow, even if a later one fits', () => {
  const q = [item('a', 'a'.repeat(6000)), item('b', 'b'.repeat(4000)), item('c', 'c')];
  const p = takePrefix(q);
  assert.equal(
    p.taken.map((i) => i.id),
    ['a'],
  );
  assert.equal(
    p.rest.map((i) => i.id),
    ['b', 'c'],
  );
});

test('D8: the separator counts toward the cap', () => {
  const q = [item('a', 'a'.repeat(4999)), item('b', 'b'.repeat(4999))];
  assert.is(takePrefix(q).text.length, 4999 * 2 + 2);
  const over = [item('a', 'a'.repeat(5000)), item('b', 'b'.repeat(4999))];
  assert.equal(
    takePrefix(over).taken.map((i) => i.id),
    ['a'],
  );
});

test('pendingCount includes in-flight instructions', () => {
  assert.is(pendingCount([item('a', 'x')], [{ hookId: 'h', items: [item('b', 'y'), item('c', 'z')] }]), 3);
});

test('partitionExpired keeps order on both sides', () => {
  const r = partitionExpired([item('a', 'x', 0), item('b', 'y', 50), item('c', 'z', 10)], 100, 80);
  assert.equal(
    r.expired.map((i) => i.id),
    ['a', 'c'],
  );
  assert.equal(
    r.kept.map((i) => i.id),
    ['b'],
  );
});

test.run();
