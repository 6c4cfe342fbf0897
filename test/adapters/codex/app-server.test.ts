// What the Codex app-server lane reads off the server's messages, as Codex 0.171.0 sends them
// (native-lanes.md "Observed"): a file-change approval says what it writes from its item (D35),
// and both "the turn is over" refusals of `turn/steer` read `turn-ended` (D31).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { APPROVALS, changesOf, STEER_REFUSALS } from '../../../src/adapters/codex/app-server/messages.js';

const fileChange = {
  type: 'fileChange',
  id: 'call_1',
  changes: [
    { path: '/w/made.txt', kind: { type: 'add' }, diff: 'PATCHED\n' },
    { path: '/w/old.ts', kind: { type: 'update' }, diff: '' },
  ],
  status: 'inProgress',
};

test("a file-change approval names its item's paths; without the item, its grant root or reason", () => {
  const ask = APPROVALS['item/fileChange/requestApproval']!;
  const params = { threadId: 't', turnId: 'u', itemId: 'call_1', reason: null, grantRoot: null };
  assert.is(ask.tool, 'apply_patch');
  assert.is(ask.detail(params, fileChange), 'add /w/made.txt, update /w/old.ts');
  assert.is(ask.detail(params), undefined);
  assert.is(ask.detail({ ...params, grantRoot: '/w' }), 'write under /w');
  assert.is(ask.detail({ ...params, reason: 'needs write access' }), 'needs write access');
  assert.is(changesOf({ changes: [] }), undefined);
});

test('the refusals the real server gives read as the lane reads them', () => {
  const read = (m: string) => STEER_REFUSALS.find((r) => r.match.test(m))?.reason;
  assert.is(read('no active turn to steer'), 'turn-ended');
  assert.is(read('expected active turn id `a` but found `b`'), 'turn-ended');
  assert.is(read('thread not found: x'), 'refused');
});

test.run();
