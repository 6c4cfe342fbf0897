// Approvals raised on a vendor's user-plane channel (Cline hub) through the pure session machine:
// the same holds as a held hook, answered through the channel, mirrored when the vendor's own UI
// answers, dismissed at the session end or when the channel is lost.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AttentionRequest } from '../../src/machines/session-context.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { end, respond, run, types } from '../support/session-steps.js';

const REQUEST: AttentionRequest = {
  kind: 'permission',
  prompt: 'cline requests permission to use run_commands',
  subject: 'run_commands',
  options: [
    { id: 'approve', label: 'Approve' },
    { id: 'deny', label: 'Deny' },
  ],
  respondVia: ['control', 'oob'],
};
const asked = (approvalId: string, requestId = `r-${approvalId}`, at = 1000): SessionInput => ({
  type: 'approval.requested',
  at,
  requestId,
  approvalId,
  request: REQUEST,
});
const resolved = (approvalId: string, approved?: boolean, at = 3000): SessionInput => ({
  type: 'approval.resolved',
  at,
  approvalId,
  answeredId: `ans-${approvalId}`,
  ...(approved === undefined ? {} : { approved }),
});
const only = <T extends SessionOutput['type']>(outs: SessionOutput[], t: T) =>
  outs.filter((o): o is Extract<SessionOutput, { type: T }> => o.type === t);

test('approval: requested opens a hold with no hook and no timer; a respond answers it through the channel, never a hook reply', () => {
  const { outputs, snap } = run([asked('a1'), respond('c1', 'r-a1', { option: 'approve' })]);
  assert.equal(types(outputs), [
    'attention.requested',
    'control.accepted',
    'attention.answered',
    'attention.resolved',
    'approval.answer',
  ]);
  assert.equal(only(outputs, 'approval.answer')[0], {
    type: 'approval.answer',
    approvalId: 'a1',
    decision: { option: 'approve' },
  });
  assert.equal(snap.context.holds, []);
  const deny = run([asked('a2'), respond('c2', 'r-a2', { text: 'not on main' })]);
  assert.equal(only(deny.outputs, 'approval.answer')[0]!.decision, { option: 'deny', message: 'not on main' });
});

test('approval: an answer given in the vendor UI is mirrored via oob; a cancelled one is dismissed; a late respond is refused', () => {
  const { outputs } = run([
    asked('a1'),
    asked('a2'),
    resolved('a1', true),
    resolved('a2'),
    respond('c1', 'r-a1', { option: 'approve' }),
  ]);
  assert.equal(only(outputs, 'attention.answered')[0], {
    type: 'attention.answered',
    id: 'ans-a1',
    subject: 'r-a1',
    cause: 'r-a1',
    answer: { option: 'approve' },
    via: 'oob',
  });
  assert.equal(
    only(outputs, 'attention.resolved').map((o) => [o.subject, o.resolution]),
    [
      ['r-a1', 'answered'],
      ['r-a2', 'dismissed'],
    ],
  );
  assert.equal(
    only(outputs, 'control.rejected').map((o) => o.rejection.rule),
    ['not-pending'],
  );
  assert.equal(only(outputs, 'approval.answer'), []);
});

test("approval: answered here first, the vendor's own resolution adds nothing; the same request twice is one hold", () => {
  const { outputs } = run([
    asked('a1'),
    asked('a1', 'r-other'),
    respond('c1', 'r-a1', { option: 'deny' }),
    resolved('a1', false),
  ]);
  assert.equal(only(outputs, 'attention.requested').length, 1);
  assert.equal(
    only(outputs, 'attention.answered').map((o) => o.via),
    [undefined],
  );
});

test('approval: a request observed without the control gate (respond_via oob) refuses a respond; its oob answer is still mirrored', () => {
  const oobOnly: SessionInput = {
    type: 'approval.requested',
    at: 1000,
    requestId: 'r-o',
    approvalId: 'o1',
    request: { ...REQUEST, respondVia: ['oob'] },
  };
  const { outputs } = run([oobOnly, respond('c1', 'r-o', { option: 'approve' }), resolved('o1', false)]);
  assert.equal(
    only(outputs, 'control.rejected').map((o) => [o.rejection.reason, o.rejection.rule]),
    [['unsupported', 'gate-off']],
  );
  assert.equal(only(outputs, 'approval.answer'), []);
  assert.equal(
    only(outputs, 'attention.answered').map((o) => [o.answer, o.via]),
    [[{ option: 'deny' }, 'oob']],
  );
});

test('approval: losing the channel or ending the session dismisses what is pending', () => {
  const lost = run([asked('a1'), asked('a2'), { type: 'transport.lost', at: 5000 }]);
  assert.equal(
    only(lost.outputs, 'attention.resolved').map((o) => [o.subject, o.resolution, o.latencyMs]),
    [
      ['r-a1', 'dismissed', 4000],
      ['r-a2', 'dismissed', 4000],
    ],
  );
  assert.is(lost.snap.value, 'idle');
  const ended = run([asked('a3'), end('e1'), asked('a4')]);
  assert.equal(
    only(ended.outputs, 'attention.resolved').map((o) => [o.subject, o.resolution]),
    [['r-a3', 'dismissed']],
  );
  assert.equal(only(ended.outputs, 'attention.requested').length, 1, 'nothing opens after the end');
});

test.run();
