import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  end,
  failed,
  heldForm,
  heldPermission,
  instruct,
  moment,
  respond,
  run,
  start,
  startMoment,
  step,
  timeout,
  types,
  written,
} from '../support/session-steps.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';

const rejected = (outs: SessionOutput[]) =>
  outs.filter((o): o is Extract<SessionOutput, { type: 'control.rejected' }> => o.type === 'control.rejected');
const ofType = <T extends SessionOutput['type']>(outs: SessionOutput[], t: T) =>
  outs.filter((o): o is Extract<SessionOutput, { type: T }> => o.type === t);

test('D1/D4: an instruct is acked control.accepted with cause = command id, before any delivery', () => {
  const { snap, outputs } = run([instruct('c1', 'use tabs')]);
  assert.equal(outputs, [
    { type: 'control.accepted', cause: 'c1', key: outputs[0]!.type === 'control.accepted' ? outputs[0]!.key : '' },
  ]);
  assert.is(snap.value, 'queued');
  assert.is(snap.context.queue.length, 1);
  assert.is(snap.context.queue[0]!.acceptedAt, 1000);
});

test('D2: empty, whitespace, non-string and over-long text are rejected invalid without echoing the text', () => {
  const secret = 'x'.repeat(4001);
  const { snap, outputs } = run([
    instruct('e1', ''),
    instruct('e2', '  \n\t '),
    instruct('e3', 42),
    instruct('e4', secret),
  ]);
  const r = rejected(outputs);
  assert.equal(
    r.map((o) => [o.cause, o.rejection.reason, o.rejection.detail]),
    [
      ['e1', 'invalid', 'text is empty'],
      ['e2', 'invalid', 'text is empty'],
      ['e3', 'invalid', 'text must be a string'],
      ['e4', 'invalid', 'text exceeds 4000 characters'],
    ],
  );
  assert.equal(
    r.map((o) => o.rejection.rule),
    ['text-empty', 'text-empty', 'text-not-string', 'text-too-long'],
  );
  assert.not.ok(JSON.stringify(outputs).includes('xxxx'));
  assert.is(snap.context.queue.length, 0);
  const ok = run([instruct('e5', 'y'.repeat(4000))]);
  assert.is(ok.outputs[0]!.type, 'control.accepted');
});

test('D3: the 21st instruct is rejected queue-full', () => {
  const inputs = Array.from({ length: 21 }, (_, i) => instruct(`q${i}`, `instruction ${i}`));
  const { snap, outputs } = run(inputs);
  assert.is(ofType(outputs, 'control.accepted').length, 20);
  const r = rejected(outputs);
  assert.is(r.length, 1);
  assert.equal(
    [r[0]!.cause, r[0]!.rejection.reason, r[0]!.rejection.rule, r[0]!.rejection.detail],
    ['q20', 'invalid', 'queue-full', 'queue full (20)'],
  );
  assert.is(snap.context.queue.length, 20);
  // A slot frees only once an instruction is delivered, not when it is merely in flight.
  const inFlight = run([moment('h1'), instruct('q21', 'late')], snap);
  assert.is(rejected(inFlight.outputs).length, 1);
  const freed = run([written('h1'), instruct('q22', 'later')], inFlight.snap);
  assert.is(ofType(freed.outputs, 'control.accepted').length, 1);
});

test('D4: a redelivered command is re-acked and never queued twice', () => {
  const first = run([instruct('c1', 'one')]);
  const again = run([instruct('c1', 'one'), instruct('c1', 'one')], first.snap);
  assert.equal(types(again.outputs), ['control.reack', 'control.reack']);
  assert.is(again.snap.context.queue.length, 1);
  // Still a duplicate after delivery: the recorded decision outlives the queue entry.
  const delivered = run([moment('h1'), written('h1'), instruct('c1', 'one')], again.snap);
  assert.equal(
    types(delivered.outputs).filter((t) => t.startsWith('control.')),
    ['control.reack'],
  );
  assert.is(delivered.snap.context.queue.length, 0);
  // A rejected command stays rejected on redelivery.
  const rej = run([instruct('bad', ''), instruct('bad', 'now fine')]);
  assert.equal(types(rej.outputs), ['control.rejected', 'control.reack']);
});

test('D5: with the gate off an instruct is rejected unsupported', () => {
  const { snap, outputs } = run([instruct('g1', 'hello', 1000, false)]);
  const r = rejected(outputs);
  assert.equal([r[0]!.rejection.reason, r[0]!.rejection.rule], ['unsupported', 'gate-off']);
  assert.is(snap.context.queue.length, 0);
});

test('D6: after the end moment an instruct is refused "session ended"', () => {
  const { snap, outputs } = run([moment('h0', 100, false), end('h-end'), instruct('late', 'too late')]);
  const r = rejected(outputs);
  assert.equal(
    [r[0]!.rejection.reason, r[0]!.rejection.detail, r[0]!.rejection.rule],
    ['refused', 'session ended', 'session-ended'],
  );
  assert.is(snap.value, 'ended');
  assert.is(snap.context.queue.length, 0);
});

test('D7: an ineligible moment gets the neutral reply and delivers nothing', () => {
  const { snap, outputs } = run([instruct('c1', 'wait for it'), moment('sub', 2000, false)]);
  assert.equal(types(outputs), ['control.accepted', 'reply.neutral']);
  assert.is(snap.context.queue.length, 1);
  assert.is(snap.context.inFlight.length, 0);
});

test('D7-D8: a moment answered early is taken as decided: it carries nothing, and what waits waits on', () => {
  // The instruction was accepted after the adapter had already answered the hook neutrally.
  const early: SessionInput = { ...moment('h1'), answered: true } as SessionInput;
  const { snap, outputs } = run([instruct('c1', 'next time'), early]);
  assert.equal(types(outputs), ['control.accepted', 'reply.neutral']);
  assert.equal(
    snap.context.queue.map((i) => i.id),
    ['c1'],
  );
  const next = run([moment('h2')], snap);
  assert.equal(ofType(next.outputs, 'reply.context')[0]?.ids, ['c1']);
});

test('D8: pending instructions join FIFO with a blank line, whole, within 10,000 characters', () => {
  const a = 'a'.repeat(4000);
  const b = 'b'.repeat(4000);
  const c = 'c'.repeat(4000);
  const { snap, outputs } = run([instruct('i1', a), instruct('i2', b), instruct('i3', c), moment('h1')]);
  const reply = ofType(outputs, 'reply.context')[0]!;
  assert.is(reply.text, `${a}\n\n${b}`);
  assert.equal(reply.ids, ['i1', 'i2']);
  assert.equal(
    snap.context.queue.map((q) => q.id),
    ['i3'],
  );
  const small = run([instruct('s1', 'first'), instruct('s2', 'second'), moment('h2')]);
  assert.is(ofType(small.outputs, 'reply.context')[0]!.text, 'first\n\nsecond');
});

test('D9: delivered follows the confirmed write, once per instruction; a failed write requeues at the head in order', () => {
  const queued = run([instruct('i1', 'one', 1000), instruct('i2', 'two', 1500), moment('h1', 2000)]);
  assert.is(ofType(queued.outputs, 'instruction.delivered').length, 0, 'nothing delivered before the write');
  const ok = run([written('h1', 2600)], queued.snap);
  assert.equal(
    ofType(ok.outputs, 'instruction.delivered').map((o) => [o.eventType, o.cause, o.queuedMs]),
    [
      ['x.claude-code.instruction.delivered', 'i1', 1600],
      ['x.claude-code.instruction.delivered', 'i2', 1100],
    ],
  );
  assert.equal(run([written('h1', 2700)], ok.snap).outputs, [], 'a second confirmation delivers nothing');

  const fail = run([instruct('i3', 'three', 2100), failed('h1', 2600)], queued.snap);
  assert.equal(
    fail.outputs.filter((o) => o.type.startsWith('instruction.')),
    [],
  );
  assert.equal(
    fail.snap.context.queue.map((q) => [q.id, q.acceptedAt]),
    [
      ['i1', 1000],
      ['i2', 1500],
      ['i3', 2100],
    ],
  );
});

test('D10: the end moment drops each queued instruction in FIFO order, then session.ended', () => {
  const { snap, outputs } = run([instruct('i1', 'one'), instruct('i2', 'two'), end('h-end')]);
  assert.equal(types(outputs).slice(2), [
    'instruction.dropped',
    'instruction.dropped',
    'session.ended',
    'reply.neutral',
  ]);
  assert.equal(
    ofType(outputs, 'instruction.dropped').map((o) => [o.cause, o.reason, o.eventType]),
    [
      ['i1', 'session-ended', 'x.claude-code.instruction.dropped'],
      ['i2', 'session-ended', 'x.claude-code.instruction.dropped'],
    ],
  );
  assert.is(snap.context.queue.length, 0);
});

test("D10: session.ended carries the end moment's reason", () => {
  const killed = run([{ type: 'hook.end', at: 9000, hookId: 'h-end', reason: 'killed', causeId: 'obs-1' }]);
  assert.equal(ofType(killed.outputs, 'session.ended'), [{ type: 'session.ended', reason: 'killed', cause: 'obs-1' }]);
  assert.equal(ofType(run([end('h-end')]).outputs, 'session.ended'), [{ type: 'session.ended', reason: 'normal' }]);
});

test('D6: a start moment reopens an ended session: idle again, instructions accepted, old decisions kept', () => {
  const ended = run([instruct('old', 'before the end'), end('h-end')]);
  assert.is(ended.snap.value, 'ended');
  // Before the reopening D6 holds; an ordinary moment does not reopen.
  const still = run([moment('h-plain', 9500), instruct('early', 'too early', 9600)], ended.snap);
  assert.is(still.snap.value, 'ended');
  assert.equal(
    rejected(still.outputs).map((o) => o.rejection.rule),
    ['session-ended'],
  );
  const reopened = run([startMoment('h-start')], still.snap);
  assert.is(reopened.snap.value, 'idle');
  assert.equal(
    reopened.outputs,
    [
      { type: 'session.reopened', eventType: 'x.claude-code.session.reopened' },
      { type: 'reply.neutral', hookId: 'h-start' },
    ],
    'marked on the stream; the start moment itself has nothing to deliver',
  );
  const after = run(
    [
      instruct('new', 'after the resume', 10_100),
      instruct('old', 'before the end', 10_200),
      instruct('early', 'too early', 10_300),
    ],
    reopened.snap,
  );
  assert.equal(
    types(after.outputs),
    ['control.accepted', 'control.reack', 'control.reack'],
    'retries of old commands keep their first decision',
  );
  assert.is(after.snap.value, 'queued');
  assert.equal(
    after.snap.context.queue.map((q) => q.id),
    ['new'],
  );
  const delivered = run([moment('h-next', 10_400), written('h-next', 10_500)], after.snap);
  assert.equal(
    ofType(delivered.outputs, 'instruction.delivered').map((o) => o.cause),
    ['new'],
  );
});

test('D10: a reopened session drops at its next end, marked session.closed: session.ended goes out once per session (AEP)', () => {
  const first = run([end('h-end-1'), startMoment('h-start'), instruct('r1', 'resumed', 10_100)]);
  assert.equal(ofType(first.outputs, 'session.ended').length, 1);
  const second = run(
    [{ type: 'hook.end', at: 11_000, hookId: 'h-end-2', reason: 'timeout', causeId: 'obs-2' }],
    first.snap,
  );
  assert.equal(types(second.outputs), ['instruction.dropped', 'session.closed', 'reply.neutral']);
  assert.equal(ofType(second.outputs, 'session.closed'), [
    { type: 'session.closed', eventType: 'x.claude-code.session.closed', reason: 'timeout', cause: 'obs-2' },
  ]);
  assert.equal(
    ofType(second.outputs, 'instruction.dropped').map((o) => [o.cause, o.reason]),
    [['r1', 'session-ended']],
  );
  assert.is(second.snap.value, 'ended');
  assert.equal(
    rejected(run([instruct('r2', 'late again', 11_100)], second.snap).outputs).map((o) => o.rejection.rule),
    ['session-ended'],
  );
});

const endWithWindow = (hookId: string, at: number, windowMs: number): SessionInput => ({
  type: 'hook.end',
  at,
  hookId,
  reason: 'normal',
  windowMs,
});

test('D25: inside the resume window an ended session keeps its queue and takes instructions; a start moment delivers them', () => {
  const ended = run([instruct('before', 'queued before the end', 1000), endWithWindow('h-end', 9000, 5000)]);
  assert.equal(
    types(ended.outputs),
    ['control.accepted', 'session.ended', 'reply.neutral'],
    'nothing dropped at the end moment',
  );
  assert.is(ended.snap.value, 'ended');
  assert.is(ended.snap.context.resumeUntil, 14_000);
  const between = run([instruct('between', 'sent between runs', 12_000), moment('h-plain', 12_500)], ended.snap);
  assert.equal(
    types(between.outputs),
    ['control.accepted', 'reply.neutral'],
    'accepted; an ordinary moment of an ended session delivers nothing',
  );
  const resumed = run([startMoment('h-start', 13_000), written('h-start', 13_100)], between.snap);
  assert.equal(types(resumed.outputs), [
    'session.reopened',
    'journal.inflight',
    'reply.context',
    'instruction.delivered',
    'instruction.delivered',
  ]);
  assert.equal(
    ofType(resumed.outputs, 'instruction.delivered').map((o) => o.cause),
    ['before', 'between'],
    'FIFO across the end',
  );
  assert.is(resumed.snap.context.resumeUntil, undefined);
  assert.is(resumed.snap.value, 'idle');
});

test('D25: when the window passes, what is still queued drops session-ended and later instructs are refused', () => {
  const ended = run([instruct('a', 'one', 1000), endWithWindow('h-end', 9000, 5000), instruct('b', 'two', 10_000)]);
  const early = run([{ type: 'window.tick', at: 13_999 }], ended.snap);
  assert.equal(early.outputs, [], 'nothing before the window is over');
  const passed = run([{ type: 'window.tick', at: 14_000 }], early.snap);
  assert.equal(
    ofType(passed.outputs, 'instruction.dropped').map((o) => [o.cause, o.reason]),
    [
      ['a', 'session-ended'],
      ['b', 'session-ended'],
    ],
  );
  assert.is(passed.snap.context.queue.length, 0);
  assert.is(passed.snap.context.resumeUntil, undefined);
  const late = run([instruct('c', 'three', 14_100)], passed.snap);
  assert.equal(
    rejected(late.outputs).map((o) => [o.rejection.rule, o.rejection.detail]),
    [['session-ended', 'session ended']],
  );
});

test('D25: an instruct after the window but before any tick drops the queue first, then is refused', () => {
  const ended = run([instruct('a', 'one', 1000), endWithWindow('h-end', 9000, 5000)]);
  const late = run([instruct('late', 'too late', 20_000)], ended.snap);
  assert.equal(types(late.outputs), ['instruction.dropped', 'control.rejected']);
  assert.equal(
    ofType(late.outputs, 'instruction.dropped').map((o) => o.cause),
    ['a'],
  );
});

test('D25: window 0 is D6/D10 exactly; a reply failing inside a window requeues instead of dropping', () => {
  const zero = run([instruct('a', 'one', 1000), endWithWindow('h-end', 9000, 0), instruct('b', 'two', 9001)]);
  assert.equal(types(zero.outputs), [
    'control.accepted',
    'instruction.dropped',
    'session.ended',
    'reply.neutral',
    'control.rejected',
  ]);
  const inWindow = run([
    instruct('a', 'one', 1000),
    moment('h1', 2000),
    endWithWindow('h-end', 9000, 5000),
    failed('h1', 9100),
  ]);
  assert.equal(ofType(inWindow.outputs, 'instruction.dropped'), []);
  assert.equal(
    inWindow.snap.context.queue.map((q) => q.id),
    ['a'],
  );
});

test('a start moment of a live session changes nothing but delivering what waits', () => {
  const { snap, outputs } = run([instruct('i1', 'one'), startMoment('h-start', 2000)]);
  assert.equal(types(outputs), ['control.accepted', 'journal.inflight', 'reply.context']);
  assert.is(snap.value, 'idle');
});

test('D10: with a TTL, instructions older than it are dropped expired', () => {
  const { snap, outputs } = run([
    instruct('old', 'one', 1000),
    instruct('new', 'two', 5000),
    { type: 'ttl.tick', at: 7000, ttlMs: 5000 },
  ]);
  assert.equal(
    ofType(outputs, 'instruction.dropped').map((o) => [o.cause, o.reason]),
    [['old', 'expired']],
  );
  assert.equal(
    snap.context.queue.map((q) => q.id),
    ['new'],
  );
});

test('D10: a reply that fails after the end drops its instructions session-ended', () => {
  const { outputs } = run([instruct('i1', 'one'), moment('h1'), end('h-end'), failed('h1')]);
  assert.equal(
    ofType(outputs, 'instruction.dropped').map((o) => [o.cause, o.reason]),
    [['i1', 'session-ended']],
  );
});

test('D12: in-flight instructions are journaled before the reply; after a restart they are dropped delivery-unknown', () => {
  const { snap, outputs } = run([instruct('i1', 'one'), instruct('i2', 'two'), moment('h1')]);
  assert.equal(types(outputs).slice(2), ['journal.inflight', 'reply.context']);
  assert.equal((outputs[2] as Extract<SessionOutput, { type: 'journal.inflight' }>).ids, ['i1', 'i2']);
  const [after, out] = step(snap, { type: 'restart.recovered', at: 10_000 });
  assert.equal(
    ofType(out, 'instruction.dropped').map((o) => [o.cause, o.reason]),
    [
      ['i1', 'delivery-unknown'],
      ['i2', 'delivery-unknown'],
    ],
  );
  assert.is(after.context.inFlight.length, 0);
  assert.is(after.context.queue.length, 0, 'never re-delivered');
});

test('D13: a held hook holds; its reply carries only the decision; a parallel eligible moment still delivers', () => {
  const held = run([instruct('i1', 'steer me'), heldPermission('hp', 'req-1')]);
  assert.equal(held.snap.value, { holding: 'permission' });
  assert.equal(types(held.outputs).slice(1), ['attention.requested', 'reply.hold']);
  const parallel = run([moment('h2'), written('h2')], held.snap);
  assert.equal(
    ofType(parallel.outputs, 'reply.context').map((o) => o.text),
    ['steer me'],
  );
  assert.equal(parallel.snap.value, { holding: 'permission' });
  const answered = run([respond('a1', 'req-1', { option: 'allow' })], parallel.snap);
  const decision = ofType(answered.outputs, 'reply.decision')[0]!;
  assert.equal(decision, { type: 'reply.decision', hookId: 'hp', decision: { option: 'allow' } });
  assert.is(answered.snap.value, 'idle');
  const form = run([heldForm('he', 'req-2')]);
  assert.equal(form.snap.value, { holding: 'elicitation' });
});

test('D14: a respond answers the request: ack, answered, resolved, then the decision', () => {
  const held = run([heldPermission('hp', 'req-1', 2000)]);
  const { snap, outputs } = run([respond('a1', 'req-1', { option: 'deny' }, 2600)], held.snap);
  assert.equal(types(outputs), ['control.accepted', 'attention.answered', 'attention.resolved', 'reply.decision']);
  const answered = ofType(outputs, 'attention.answered')[0]!;
  assert.equal([answered.subject, answered.cause, answered.id], ['req-1', 'a1', 'ans-a1']);
  const resolved = ofType(outputs, 'attention.resolved')[0]!;
  assert.equal(
    [resolved.subject, resolved.cause, resolved.resolution, resolved.latencyMs],
    ['req-1', 'ans-a1', 'answered', 600],
  );
  assert.is(snap.value, 'idle');
  // A second answer to a settled request is rejected.
  const late = run([respond('a2', 'req-1', { option: 'allow' })], snap);
  assert.equal(
    rejected(late.outputs).map((o) => o.rejection.rule),
    ['not-pending'],
  );
});

test('D14: free text that is not an option word is a deny carrying the text; an option word counts as the option', () => {
  const held = run([heldPermission('hp', 'req-1')]);
  const text = run([respond('a1', 'req-1', { text: 'not now, run the tests first' })], held.snap);
  assert.equal(ofType(text.outputs, 'reply.decision')[0]!.decision, {
    option: 'deny',
    message: 'not now, run the tests first',
  });
  const word = run([respond('a2', 'req-1', { text: '  Allow ' })], held.snap);
  assert.equal(ofType(word.outputs, 'reply.decision')[0]!.decision, { option: 'allow' });
  const form = run([heldForm('he', 'req-2')]);
  const missing = run([respond('a3', 'req-2', { values: {} })], form.snap);
  assert.equal(
    rejected(missing.outputs).map((o) => o.rejection.rule),
    ['answer-invalid'],
  );
  const filled = run([respond('a4', 'req-2', { values: { name: 'x' } })], form.snap);
  assert.equal(ofType(filled.outputs, 'reply.decision')[0]!.decision, { option: 'submit', values: { name: 'x' } });
});

test('D14: no answer in time: attention.timeout and a reply with no decision', () => {
  const held = run([heldPermission('hp', 'req-1')]);
  const { snap, outputs } = run([timeout('req-1')], held.snap);
  assert.equal(outputs, [
    {
      type: 'attention.timeout',
      subject: 'req-1',
      cause: 'req-1',
      afterMs: 55_000,
      decidedBy: { identity: 'adapter', surface: 'timeout' },
    },
    { type: 'reply.decision', hookId: 'hp' },
  ]);
  assert.is(snap.value, 'idle');
  assert.equal(run([timeout('req-1')], snap).outputs, [], 'a late timer does nothing');
});

test('held requests still open at the end are dismissed before session.ended', () => {
  const { outputs } = run([heldPermission('hp', 'req-1'), end('h-end')]);
  assert.equal(types(outputs).slice(2), ['attention.resolved', 'reply.decision', 'session.ended', 'reply.neutral']);
  assert.is(ofType(outputs, 'attention.resolved')[0]!.resolution, 'dismissed');
});

test('the initial state is idle with an empty queue', () => {
  const s = start();
  assert.is(s.value, 'idle');
  assert.equal(s.context.queue, []);
});

test.run();
