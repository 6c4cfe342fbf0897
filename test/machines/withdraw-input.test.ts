// D32 for a send_input, through the pure session machine: where the vendor's queue gives inputs
// back, a withdraw is asked of it and its answer decides; `withdrawn` only once it is removed,
// `already-delivered` once the agent has it, and nothing changes when the queue does not answer.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cline } from '../../src/adapters/cline/table.js';
import { command } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { end, run, SESSION, step, types, VENDOR, type Snap } from '../support/session-steps.js';

/** The Cline hub's policy, whose queue gives inputs back. */
const HUB = cline.sendInput!;
const sender = (agent: string) => ({ agent, host: 'test-host' });

const opens: SessionInput = { type: 'hook.moment', at: 500, hookId: 'o0', eligible: false, turn: 'opens' };
const send = (id: string, text: string): SessionInput => ({
  type: 'command.send_input',
  at: 1000,
  gateOpen: true,
  ready: true,
  policy: HUB,
  command: command(sender('tester'), SESSION, {
    type: `x.${VENDOR}.control.send_input`,
    id,
    data: { text },
    capture: 'redacted',
  }),
});
const withdraw = (
  id: string,
  instruction: string,
  opts: { agent?: string; takesBack?: boolean } = {},
): SessionInput => ({
  type: 'command.withdraw',
  at: 1500,
  gateOpen: true,
  ...(opts.takesBack === false ? {} : { takesBackInputs: true }),
  command: command(sender(opts.agent ?? 'tester'), SESSION, {
    type: `x.${VENDOR}.control.withdraw`,
    id,
    data: { instruction },
  }),
});
const answered = (commandId: string, removed?: boolean): SessionInput => ({
  type: 'withdraw.answered',
  at: 1600,
  commandId,
  ...(removed === undefined ? { detail: 'hub_unreachable' } : { removed }),
});
const rules = (outs: readonly SessionOutput[]) =>
  outs.flatMap((o) => (o.type === 'control.rejected' ? [[o.cause, o.rejection.reason, o.rejection.rule]] : []));

/** A turn running, and input `in1` handed to the vendor's queue. */
const waiting = (): Snap =>
  run([opens, send('in1', 'take me back'), { type: 'input.sent', at: 1100, commandId: 'in1' }]).snap;

test('withdraw of a queued input asks the queue, unacked; removed: accepted and dropped withdrawn, cause-linked', () => {
  const [asked, out] = step(waiting(), withdraw('w1', 'in1'));
  assert.equal(out, [{ type: 'input.withdraw', cause: 'w1', subject: 'in1', text: 'take me back' }]);
  assert.is(asked.context.inputs.length, 1, 'still pending until the queue answers');
  const [done, settled] = step(asked, answered('w1', true));
  assert.equal(types(settled), ['control.accepted', 'instruction.dropped']);
  const drop = settled[1]!;
  assert.ok(drop.type === 'instruction.dropped');
  if (drop.type === 'instruction.dropped')
    assert.equal([drop.cause, drop.subject, drop.reason], ['w1', 'in1', 'withdrawn']);
  assert.equal(done.context.inputs, []);
  assert.equal(done.context.withdrawals, []);
  // Taken back: a consumption report of that text finds nothing, a second withdraw is refused.
  const [, late] = step(done, { type: 'input.consumed', at: 4000, text: 'take me back' });
  assert.equal(late, []);
  assert.equal(rules(step(done, withdraw('w2', 'in1'))[1]), [['w2', 'refused', 'not-waiting']]);
});

test('not in the queue any more: refused already-delivered; the input still settles by its consumption report', () => {
  const [asked] = step(waiting(), withdraw('w1', 'in1'));
  const [after, out] = step(asked, answered('w1', false));
  assert.equal(rules(out), [['w1', 'refused', 'already-delivered']]);
  assert.is(after.context.inputs.length, 1);
  const [read, consumed] = step(after, { type: 'input.consumed', at: 4000, text: 'take me back' });
  assert.equal(types(consumed), ['input.consumed']);
  // Read: a later withdraw is refused at once, without asking the queue.
  const [, again] = step(read, withdraw('w2', 'in1'));
  assert.equal(rules(again), [['w2', 'refused', 'already-delivered']]);
});

test('a queue that does not answer changes nothing: refused busy, and the withdraw can be sent again', () => {
  const [asked] = step(waiting(), withdraw('w1', 'in1'));
  const [after, out] = step(asked, answered('w1'));
  assert.equal(rules(out), [['w1', 'busy', 'transport-down']]);
  const r = out[0]!;
  if (r.type === 'control.rejected') assert.match(r.rejection.detail, 'hub_unreachable');
  assert.is(after.context.inputs.length, 1);
  assert.equal(types(step(after, withdraw('w2', 'in1'))[1]), ['input.withdraw']);
});

test('one withdraw at a time; only the sender; a vendor whose queue keeps inputs refuses it as handed over', () => {
  const [asked] = step(waiting(), withdraw('w1', 'in1'));
  assert.equal(rules(step(asked, withdraw('w2', 'in1'))[1]), [['w2', 'refused', 'not-waiting']]);
  // Its own redelivery meanwhile is the same withdraw: no second ask, no ack of its own.
  const [again, redelivered] = step(asked, withdraw('w1', 'in1'));
  assert.equal(types(redelivered), ['control.reack']);
  assert.equal(again.context.withdrawals, asked.context.withdrawals);
  assert.equal(rules(step(waiting(), withdraw('w3', 'in1', { agent: 'mallory' }))[1]), [
    ['w3', 'unauthorized', 'not-sender'],
  ]);
  const kept = step(waiting(), withdraw('w4', 'in1', { takesBack: false }))[1];
  assert.equal(rules(kept), [['w4', 'refused', 'already-delivered']]);
  // The same withdraw redelivered after its answer gets its ack again, and asks nothing more.
  const [done] = step(asked, answered('w1', true));
  assert.equal(types(step(done, withdraw('w1', 'in1'))[1]), ['control.reack']);
});

test('the session ends while the queue is asked: the input drops session-ended, the withdraw is refused not-waiting', () => {
  const [asked] = step(waiting(), withdraw('w1', 'in1'));
  const [ended, out] = step(asked, end('e1', 1550));
  assert.ok(out.some((o) => o.type === 'instruction.dropped' && o.cause === 'in1' && o.reason === 'session-ended'));
  assert.equal(rules(step(ended, answered('w1', true))[1]), [['w1', 'refused', 'not-waiting']]);
});

test('a restart with a withdraw unanswered refuses it busy: the input stays as it was', () => {
  const [asked] = step(waiting(), withdraw('w1', 'in1'));
  const [after, out] = step(asked, { type: 'restart.recovered', at: 2000 });
  assert.equal(rules(out), [['w1', 'busy', 'transport-down']]);
  assert.is(after.context.inputs.length, 1);
  assert.equal(after.context.withdrawals, []);
  assert.equal(step(after, answered('w1', true))[1], [], 'a late answer finds nothing to settle');
});

test.run();
