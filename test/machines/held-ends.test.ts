// D34: a held request ends once, and truly: closed by the vendor (dismissed), reported run at the
// agent (answered via oob), and a later respond is refused not-pending with how it ended.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { end, heldForm, heldPermission, respond, run, timeout, types } from '../support/session-steps.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { NOT_PENDING, OPTION_WORDS, optionFor, readAnswer } from '../../src/machines/gate.js';
import { SETTLED_KEPT } from '../../src/machines/step.js';

const holdClosed = (hookId: string, at = 3000): SessionInput => ({ type: 'hold.closed', at, hookId });
const heldCall = (hookId: string, requestId: string, call: string): SessionInput => ({
  ...(heldPermission(hookId, requestId) as Extract<SessionInput, { type: 'hook.held' }>),
  call,
});
const ranMoment = (hookId: string, call: string, at = 4000): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible: true,
  ran: { call, answeredId: `oob-${hookId}` },
});
const only = <T extends SessionOutput['type']>(outs: SessionOutput[], t: T) =>
  outs.filter((o): o is Extract<SessionOutput, { type: T }> => o.type === t);
const rejection = (outs: SessionOutput[]) =>
  only(outs, 'control.rejected').map((o) => [o.rejection.rule, o.rejection.detail]);

test('the vendor closing a held hook dismisses its request at once; a later respond is refused not-pending, nothing answered', () => {
  const held = run([heldPermission('hp', 'req-1', 2000)]);
  const { snap, outputs } = run([holdClosed('hp', 2400)], held.snap);
  assert.equal(types(outputs), ['attention.resolved', 'reply.decision']);
  assert.equal(only(outputs, 'attention.resolved')[0], {
    type: 'attention.resolved',
    subject: 'req-1',
    cause: 'req-1',
    resolution: 'dismissed',
    latencyMs: 400,
    // D46: the person at the agent closed it.
    decidedBy: { identity: 'local-user', surface: 'agent' },
  });
  assert.equal(only(outputs, 'reply.decision')[0], { type: 'reply.decision', hookId: 'hp' });
  assert.equal(snap.context.holds, []);
  assert.is(snap.value, 'idle');
  const late = run([respond('a1', 'req-1', { option: 'allow' })], snap);
  assert.equal(types(late.outputs), ['control.rejected']);
  assert.equal(rejection(late.outputs), [['not-pending', NOT_PENDING.dismissed.detail]]);
  assert.match(NOT_PENDING.dismissed.detail, 'dismissed at the agent');
  // A close after the adapter's own reply, or of an unrelated hook, changes nothing.
  const again = run([holdClosed('hp', 2600), holdClosed('other', 2700)], snap);
  assert.equal(again.outputs, []);
  assert.is(again.snap.context, snap.context);
});

test('a moment reporting the held call ran answers the request via oob; a later respond says "already answered at the agent"', () => {
  const held = run([heldCall('hp', 'req-1', 'Bash abc'), heldCall('hq', 'req-2', 'Bash def')]);
  const { snap, outputs } = run([ranMoment('post', 'Bash abc', 2900)], held.snap);
  assert.equal(types(outputs), ['attention.answered', 'attention.resolved', 'reply.decision', 'reply.neutral']);
  assert.equal(only(outputs, 'attention.answered')[0], {
    type: 'attention.answered',
    id: 'oob-post',
    subject: 'req-1',
    cause: 'req-1',
    answer: { option: 'allow' },
    via: 'oob',
  });
  assert.equal(only(outputs, 'attention.resolved')[0], {
    type: 'attention.resolved',
    subject: 'req-1',
    cause: 'oob-post',
    resolution: 'answered',
    latencyMs: 900,
    decidedBy: { identity: 'local-user', surface: 'agent' },
  });
  assert.equal(only(outputs, 'reply.decision')[0], { type: 'reply.decision', hookId: 'hp' });
  assert.equal(
    snap.context.holds.map((h) => h.requestId),
    ['req-2'],
    'the other call is still held',
  );
  const late = run([respond('a1', 'req-1', { option: 'deny' })], snap);
  assert.equal(rejection(late.outputs), [['not-pending', NOT_PENDING['answered-oob'].detail]]);
  assert.match(NOT_PENDING['answered-oob'].detail, 'already answered at the agent');
  assert.equal(only(late.outputs, 'attention.answered'), []);
  // A moment about a call nobody holds is an ordinary moment.
  const plain = run([ranMoment('post2', 'Read xyz')], snap);
  assert.equal(types(plain.outputs), ['reply.neutral']);
});

test('every way a request ends is remembered: respond after control, timeout, session end is not-pending; an id never seen is unknown-request', () => {
  const answered = run([
    heldPermission('h1', 'r1'),
    respond('a1', 'r1', { option: 'allow' }),
    respond('a2', 'r1', { option: 'deny' }),
  ]);
  assert.equal(rejection(answered.outputs), [['not-pending', NOT_PENDING.answered.detail]]);
  const timedOut = run([heldPermission('h2', 'r2'), timeout('r2'), respond('a3', 'r2', { option: 'allow' })]);
  assert.equal(rejection(timedOut.outputs), [['not-pending', NOT_PENDING.timeout.detail]]);
  const ended = run([heldForm('h3', 'r3'), end('e1'), respond('a4', 'r3', { values: { name: 'x' } })]);
  assert.equal(
    rejection(ended.outputs).map(([r]) => r),
    ['not-pending'],
  );
  const unknown = run([respond('a5', 'nope', { option: 'allow' })], answered.snap);
  assert.equal(
    rejection(unknown.outputs).map(([r]) => r),
    ['unknown-request'],
  );
  assert.match(String(rejection(unknown.outputs)[0]![1]), 'aep-steer pending');
});

test('the settled list is bounded: the oldest ended request is forgotten', () => {
  const inputs: SessionInput[] = [];
  for (let i = 0; i <= SETTLED_KEPT; i += 1) inputs.push(heldPermission(`h${i}`, `r${i}`), holdClosed(`h${i}`));
  const { snap } = run(inputs);
  assert.is(snap.context.settled!.length, SETTLED_KEPT);
  assert.is(snap.context.settled![0]!.requestId, 'r1');
  assert.is(snap.context.settled!.at(-1)!.requestId, `r${SETTLED_KEPT}`);
});

test("allow and deny map onto each request's own options; an option it does not have is refused naming its options", () => {
  const cline = {
    kind: 'permission' as const,
    prompt: 'p',
    options: [
      { id: 'approve', label: 'Approve' },
      { id: 'deny', label: 'Deny' },
    ],
  };
  assert.equal(readAnswer(cline, { option: 'allow' }), { option: 'approve' });
  assert.equal(readAnswer(cline, { option: 'deny' }), { option: 'deny' });
  assert.equal(readAnswer(cline, { text: 'Allow' }), { option: 'approve' });
  assert.equal(readAnswer(cline, { option: 'allow', text: 'go' }), { option: 'approve', message: 'go' });
  const claude = {
    kind: 'permission' as const,
    prompt: 'p',
    options: [
      { id: 'allow', label: 'Allow' },
      { id: 'deny', label: 'Deny' },
    ],
  };
  assert.equal(readAnswer(claude, { option: 'approve' }), { option: 'allow' });
  assert.equal(readAnswer(claude, { option: 'sometimes' }), undefined);
  assert.is(optionFor([{ id: 'accept' }, { id: 'decline' }], 'deny'), 'decline');
  assert.is(optionFor([{ id: 'once' }, { id: 'always' }], 'deny'), undefined);
  for (const group of OPTION_WORDS) for (const w of group) assert.ok(w.evidence.length > 0, `${w.id} has evidence`);
  const clineHeld: SessionInput = {
    type: 'hook.held',
    at: 1,
    hookId: 'h',
    requestId: 'r',
    hold: 'permission',
    timeoutMs: 1000,
    request: cline,
  };
  const bad = run([clineHeld, respond('a1', 'r', { option: 'sometimes' })]);
  const [[rule, detail]] = rejection(bad.outputs) as [[string, string]];
  assert.is(rule, 'answer-invalid');
  assert.match(detail, 'its options are approve, deny');
  // Refused: nothing recorded as answered, and the request still waits for a fitting answer.
  assert.equal(only(bad.outputs, 'attention.answered'), []);
  assert.equal(
    bad.snap.context.holds.map((h) => h.requestId),
    ['r'],
  );
  const good = run([respond('a2', 'r', { option: 'allow' })], bad.snap);
  assert.equal(only(good.outputs, 'reply.decision')[0]!.decision, { option: 'approve' });
});

test.run();
