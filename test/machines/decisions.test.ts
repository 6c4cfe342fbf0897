import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  DECISION_CHUNK,
  DECISION_FAN,
  decisionCount,
  decisionKeys,
  decisionOf,
  noDecisions,
  withDecision,
} from '../../src/machines/decisions.js';

test('D4: every decision stays findable across sealed chunks, and older records never change', () => {
  let d = noDecisions();
  const snapshots = [];
  const n = DECISION_CHUNK * 3 + 7;
  for (let i = 0; i < n; i += 1) {
    snapshots.push(d);
    d = withDecision(d, `k${i}`, i % 3 === 0 ? 'rejected' : 'accepted');
  }
  assert.is(decisionCount(d), n);
  assert.is(d.sealed.length, 3);
  for (let i = 0; i < n; i += 1) assert.is(decisionOf(d, `k${i}`), i % 3 === 0 ? 'rejected' : 'accepted');
  assert.is(decisionOf(d, 'missing'), undefined);
  assert.is(decisionOf(snapshots[10]!, 'k10'), undefined, 'an older record does not see later keys');
  assert.is(decisionOf(snapshots[11]!, 'k10'), 'rejected' === decisionOf(d, 'k10') ? 'rejected' : 'accepted');
  assert.equal(decisionKeys(d).length, n);
  assert.is(decisionOf(noDecisions(), '__proto__'), undefined);
});

test('D4: sealed chunks merge log-structured, so lookups read few chunks and keys keep their order', () => {
  let d = noDecisions();
  const n = DECISION_CHUNK * DECISION_FAN * 3 + DECISION_CHUNK * 2 + 3;
  const keys: string[] = [];
  for (let i = 0; i < n; i += 1) {
    keys.push(`aep://t/agent/s\u0000c${i}`);
    d = withDecision(d, keys[i]!, 'accepted');
  }
  // Three chunks of CHUNK*FAN, two of CHUNK, and three keys still in `recent`.
  assert.equal(
    d.sealed.map((c) => Object.keys(c).length),
    [
      DECISION_CHUNK * DECISION_FAN,
      DECISION_CHUNK * DECISION_FAN,
      DECISION_CHUNK * DECISION_FAN,
      DECISION_CHUNK,
      DECISION_CHUNK,
    ],
  );
  assert.is(Object.keys(d.recent).length, 3);
  assert.equal(decisionKeys(d), keys, 'oldest first, as decided');
  for (const k of keys) assert.is(decisionOf(d, k), 'accepted');
  // A record read back from a snapshot (plain JSON) keeps merging where it left off.
  let back = JSON.parse(JSON.stringify(d)) as typeof d;
  for (let i = n; i < n + DECISION_CHUNK * (DECISION_FAN - 2) - 3; i += 1)
    back = withDecision(back, `k${i}`, 'rejected');
  assert.equal(
    back.sealed.map((c) => Object.keys(c).length),
    Array(4).fill(DECISION_CHUNK * DECISION_FAN),
  );
  assert.is(decisionCount(back), n + DECISION_CHUNK * (DECISION_FAN - 2) - 3);
});

test.run();
