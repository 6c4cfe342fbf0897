// D46: every end of a held request names who decided it and through what surface; a command may
// name only a sender's surface. D48: a risky request's remote allow needs two distinct identities.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepCommand } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { decidedByOf, describeDecidedBy, readDecidedBy } from '../../src/machines/decided-by.js';
import { SESSION, VENDOR, heldPermission, instruct, run, timeout, types } from '../support/session-steps.js';

const answerCmd = (id: string, request: string, option: string, agent: string, extra: Record<string, unknown> = {}) =>
  command({ agent, host: 'h' }, 'sess-1', {
    type: 'control.attention.respond',
    id,
    subject: request,
    cause: request,
    data: { answer: { option }, ...extra },
  });
const answer = (cmd: AepCommand, at = 2500): SessionInput => ({
  type: 'command.respond',
  at,
  command: cmd,
  answeredId: `ans-${cmd.id}`,
});
const risky = (hookId: string, requestId: string): SessionInput => {
  const h = heldPermission(hookId, requestId) as Extract<SessionInput, { type: 'hook.held' }>;
  return { ...h, request: { ...h.request, risky: { rule: 'force-push', why: 'rewrites history' } } };
};
const only = <T extends SessionOutput['type']>(outs: SessionOutput[], t: T) =>
  outs.filter((o): o is Extract<SessionOutput, { type: T }> => o.type === t);
const rules = (outs: SessionOutput[]) => only(outs, 'control.rejected').map((o) => o.rejection.rule);

test('a respond resolves the request decided_by its relay-checked sender and the surface it names', () => {
  const held = run([heldPermission('hp', 'req-1')]);
  const out = run(
    [answer(answerCmd('c1', 'req-1', 'allow', 'alice', { surface: 'console', device: 'laptop' }))],
    held.snap,
  );
  assert.equal(only(out.outputs, 'attention.resolved')[0]?.decidedBy, {
    identity: 'alice',
    surface: 'console',
    device: 'laptop',
  });
  // No surface named: a command line.
  const held2 = run([heldPermission('hq', 'req-2')]);
  const out2 = run([answer(answerCmd('c2', 'req-2', 'deny', 'bob'))], held2.snap);
  assert.equal(only(out2.outputs, 'attention.resolved')[0]?.decidedBy, { identity: 'bob', surface: 'cli' });
});

test("a command naming the adapter's own surfaces, or an unknown one, is rejected and the request stays open", () => {
  for (const [surface, rule] of [
    ['agent', 'surface-reserved'],
    ['timeout', 'surface-reserved'],
    ['policy', 'surface-reserved'],
    ['phone', 'surface-invalid'],
    [7, 'surface-invalid'],
  ] as const) {
    const held = run([heldPermission('hp', 'req-1')]);
    const out = run([answer(answerCmd(`c-${surface}`, 'req-1', 'allow', 'mallory', { surface }))], held.snap);
    assert.equal(rules(out.outputs), [rule], String(surface));
    assert.is(out.snap.context.holds.length, 1, 'still held');
  }
  const long = answerCmd('c-dev', 'req-1', 'allow', 'm', { device: 'x'.repeat(65) });
  assert.equal(decidedByOf(long), decidedByOf(answerCmd('c', 'r', 'allow', 'm', { surface: 'nope' })));
});

test('a timeout names the adapter and surface timeout; decided_by reads back from event data', () => {
  const held = run([heldPermission('hp', 'req-1')]);
  const out = run([timeout('req-1')], held.snap);
  const t = only(out.outputs, 'attention.timeout')[0]!;
  assert.equal(t.decidedBy, { identity: 'adapter', surface: 'timeout' });
  assert.equal(readDecidedBy({ decided_by: { identity: 'a', surface: 'mcp' } }), { identity: 'a', surface: 'mcp' });
  assert.is(readDecidedBy({ decided_by: { identity: 'a', surface: 'phone' } }), undefined);
  assert.is(readDecidedBy({}), undefined);
  assert.is(describeDecidedBy({ identity: 'a', surface: 'link', device: 'phone' }), 'a via link (phone)');
});

test('D48: a first remote allow of a risky request is acked pending-second and the hook stays held', () => {
  const held = run([risky('hp', 'req-1')]);
  const first = run([answer(answerCmd('c1', 'req-1', 'allow', 'alice'))], held.snap);
  assert.equal(types(first.outputs), ['control.accepted']);
  const ack = only(first.outputs, 'control.accepted')[0]!;
  assert.equal(ack.pendingSecond, { identity: 'alice', surface: 'cli' });
  assert.is(ack.subject, 'req-1');
  assert.equal(first.snap.value, { holding: 'permission' });
  // The same identity again, by another command: refused, still held.
  const again = run([answer(answerCmd('c2', 'req-1', 'allow', 'alice', { surface: 'console' }))], first.snap);
  assert.equal(rules(again.outputs), ['second-approver-same']);
  assert.equal(again.snap.value, { holding: 'permission' });
  // A redelivery of the first allow repeats its ack, nothing more.
  const redelivered = run([answer(answerCmd('c1', 'req-1', 'allow', 'alice'))], first.snap);
  assert.equal(types(redelivered.outputs), ['control.reack']);
  // A second identity settles it; the resolution names both.
  const second = run([answer(answerCmd('c3', 'req-1', 'allow', 'bob', { surface: 'mcp' }))], again.snap);
  assert.equal(types(second.outputs), [
    'control.accepted',
    'attention.answered',
    'attention.resolved',
    'reply.decision',
  ]);
  const resolved = only(second.outputs, 'attention.resolved')[0]!;
  assert.equal(resolved.decidedBy, { identity: 'bob', surface: 'mcp' });
  assert.equal(resolved.firstBy, { identity: 'alice', surface: 'cli' });
  assert.equal(only(second.outputs, 'reply.decision')[0]?.decision, { option: 'allow' });
  assert.is(second.snap.value, 'idle');
});

test('D48: a deny settles a risky request at once, even after a first allow; a link never allows it', () => {
  const held = run([risky('hp', 'req-1')]);
  const denied = run([answer(answerCmd('c1', 'req-1', 'deny', 'carol', { surface: 'link' }))], held.snap);
  assert.equal(only(denied.outputs, 'reply.decision')[0]?.decision, { option: 'deny' });
  assert.equal(only(denied.outputs, 'attention.resolved')[0]?.decidedBy, { identity: 'carol', surface: 'link' });
  const firstAllow = run([answer(answerCmd('c2', 'req-1', 'allow', 'alice'))], held.snap);
  const thenDeny = run([answer(answerCmd('c3', 'req-1', 'deny', 'alice'))], firstAllow.snap);
  assert.equal(only(thenDeny.outputs, 'reply.decision')[0]?.decision, { option: 'deny' });
  const viaLink = run([answer(answerCmd('c4', 'req-1', 'allow', 'console-user', { surface: 'link' }))], held.snap);
  assert.equal(rules(viaLink.outputs), ['risky-link']);
  assert.equal(viaLink.snap.value, { holding: 'permission' });
  // A request that is not risky is allowed by one identity, from a link too.
  const plain = run([heldPermission('hq', 'req-2')]);
  const one = run([answer(answerCmd('c5', 'req-2', 'allow', 'alice', { surface: 'link' }))], plain.snap);
  assert.equal(only(one.outputs, 'reply.decision')[0]?.decision, { option: 'allow' });
});

test('D48: the person at the agent answers a risky request alone', () => {
  const h = risky('hp', 'req-1') as Extract<SessionInput, { type: 'hook.held' }>;
  const held = run([{ ...h, call: 'Bash abc' }]);
  const firstAllow = run([answer(answerCmd('c1', 'req-1', 'allow', 'alice'))], held.snap);
  const ran = run(
    [{ type: 'hook.moment', at: 4000, hookId: 'post', eligible: true, ran: { call: 'Bash abc', answeredId: 'oob' } }],
    firstAllow.snap,
  );
  assert.equal(only(ran.outputs, 'attention.resolved')[0]?.decidedBy, { identity: 'local-user', surface: 'agent' });
  assert.is(ran.snap.context.holds.length, 0);
});

const withdrawBy = (id: string, agent: string, data: Record<string, unknown>): SessionInput => ({
  type: 'command.withdraw',
  at: 1500,
  gateOpen: true,
  command: command({ agent, host: 'h' }, SESSION, { type: `x.${VENDOR}.control.withdraw`, id, data }),
});

test('a withdraw names who took the instruction back; a reserved surface is rejected and the instruction stays', () => {
  const queued = run([instruct('i1', 'later')]);
  // The instruct's sender is `tester` (session-steps).
  const bad = run([withdrawBy('w0', 'tester', { instruction: 'i1', surface: 'timeout' })], queued.snap);
  assert.equal(rules(bad.outputs), ['surface-reserved']);
  assert.is(bad.snap.context.queue.length, 1);
  const out = run([withdrawBy('w1', 'tester', { instruction: 'i1', surface: 'mcp' })], bad.snap);
  assert.equal(only(out.outputs, 'instruction.dropped')[0]?.decidedBy, { identity: 'tester', surface: 'mcp' });
});

test.run();
