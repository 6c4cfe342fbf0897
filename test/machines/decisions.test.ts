import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DECISION_CHUNK, decisionCount, decisionKeys, decisionOf, noDecisions, withDecision } from '../../src/machines/decisions.js';

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

test.run();
