// The scalar shapes say what a value should have been, and what it was, in one sentence each.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { bool, int, num, str, type Shape, type ShapeIssue } from '../../src/protocol/shape.js';

const said = (s: Shape, v: unknown): string[] => {
  const out: ShapeIssue[] = [];
  s.check(v, 'data.n', out);
  return out.map((i) => `${i.path}: ${i.message}`);
};

test('strings and booleans take only their own kind', () => {
  assert.equal([str().kind, bool().kind], ['string', 'boolean']);
  assert.equal(said(str(), 'x'), []);
  assert.equal(said(str(), 1), ['data.n: data.n must be a string, got number']);
  assert.equal(said(bool(), false), []);
  assert.equal(said(bool(), null), ['data.n: data.n must be a boolean, got null']);
});

test('integers: whole numbers at or above their minimum', () => {
  assert.is(int().kind, 'integer');
  assert.equal(said(int({ min: 0 }), 0), []);
  assert.equal(said(int({ min: 0 }), 1.5), ['data.n: data.n must be an integer, got non-integer number']);
  assert.equal(said(int({ min: 0 }), -1), ['data.n: data.n must be >= 0']);
  assert.equal(said(int(), '1'), ['data.n: data.n must be an integer, got string']);
});

test('numbers: finite, within both bounds', () => {
  assert.is(num().kind, 'number');
  assert.equal(said(num({ min: 0, max: 1 }), 0.5), []);
  assert.equal(said(num(), Number.POSITIVE_INFINITY), ['data.n: data.n must be a number, got non-integer number']);
  assert.equal(said(num({ min: 0, max: 1 }), -0.5), ['data.n: data.n must be >= 0']);
  assert.equal(said(num({ min: 0, max: 1 }), 2), ['data.n: data.n must be <= 1']);
  assert.equal(said(num(), []), ['data.n: data.n must be a number, got array']);
});

test.run();
