// send_input (D28, D29) through the pure session machine: the same gate as instruct (D2–D6),
// the vendor's policy as data, and exactly one outcome per accepted input.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { InputPolicy } from '../../src/machines/command-inputs.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { end, run, SESSION, start, types, VENDOR } from '../support/session-steps.js';

const HUB: InputPolicy = {
  deliveries: ['queue', 'steer'],
  defaultDelivery: 'queue',
  refuseIdle: true,
  reportsConsumption: true,
  mergesIdentical: true,
};
const REST: InputPolicy = { deliveries: [], refuseIdle: false, reportsConsumption: false, mergesIdentical: false };
const SENDER = { agent: 'tester', host: 'test-host' };

const sendCmd = (id: string, data: Record<string, unknown>) =>
  command(SENDER, SESSION, { type: `x.${VENDOR}.control.send_input`, id, data, capture: 'redacted' });
const send = (
  id: string,
  text: unknown,
  opts: { delivery?: unknown; policy?: InputPolicy; ready?: boolean; gateOpen?: boolean; at?: number } = {},
): SessionInput => ({
  type: 'command.send_input',
  at: opts.at ?? 1000,
  gateOpen: opts.gateOpen ?? true,
  ready: opts.ready ?? true,
  policy: opts.policy ?? HUB,
  command: sendCmd(id, opts.delivery === undefined ? { text } : { text, delivery: opts.delivery }),
});
const turn = (hookId: string, t: 'opens' | 'closes', at = 500): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible: false,
  turn: t,
});
const sent = (commandId: string, at = 1100): SessionInput => ({ type: 'input.sent', at, commandId });
const failed = (commandId: string, at = 1100): SessionInput => ({ type: 'input.failed', at, commandId });
const consumed = (text: string, at = 4000): SessionInput => ({ type: 'input.consumed', at, text });
const only = <T extends SessionOutput['type']>(outs: SessionOutput[], t: T) =>
  outs.filter((o): o is Extract<SessionOutput, { type: T }> => o.type === t);
const rules = (outs: SessionOutput[]) =>
  only(outs, 'control.rejected').map((o) => [o.cause, o.rejection.reason, o.rejection.rule]);

test('send_input: accepted while a turn runs, handed to the transport with the default delivery, sent then consumed, each cause-linked', () => {
  const { snap, outputs } = run([
    turn('h0', 'opens'),
    send('c1', 'look at the failing test'),
    sent('c1'),
    consumed('look at the failing test'),
  ]);
  assert.equal(types(outputs), ['reply.neutral', 'control.accepted', 'input.send', 'input.sent', 'input.consumed']);
  assert.equal(only(outputs, 'input.send')[0], {
    type: 'input.send',
    cause: 'c1',
    text: 'look at the failing test',
    delivery: 'queue',
  });
  assert.equal(only(outputs, 'input.sent')[0], {
    type: 'input.sent',
    eventType: `x.${VENDOR}.input.sent`,
    cause: 'c1',
    delivery: 'queue',
  });
  assert.equal(only(outputs, 'input.consumed')[0], {
    type: 'input.consumed',
    eventType: `x.${VENDOR}.input.consumed`,
    cause: 'c1',
    queuedMs: 3000,
  });
  assert.equal(snap.context.inputs, []);
});

test('send_input D28: an idle session refuses (a send would start a turn); a closed turn is idle again', () => {
  const idle = run([send('c1', 'hello')]);
  assert.equal(rules(idle.outputs), [['c1', 'refused', 'session-idle']]);
  assert.ok(
    only(idle.outputs, 'control.rejected')[0]!.rejection.detail.startsWith(
      'session idle: send_input would start a turn',
    ),
  );
  const closed = run([turn('h0', 'opens'), turn('h1', 'closes'), send('c2', 'hello')]);
  assert.equal(rules(closed.outputs), [['c2', 'refused', 'session-idle']]);
  // A vendor whose input never starts the agent (OpenHands run:false) takes it idle.
  const rest = run([send('c3', 'hello', { policy: REST })]);
  assert.equal(types(rest.outputs), ['control.accepted', 'input.send']);
  assert.equal(only(rest.outputs, 'input.send')[0], { type: 'input.send', cause: 'c3', text: 'hello' });
});

test('send_input D2/D5: text limits, delivery values, gate off and transport down, never echoing the text', () => {
  const { outputs } = run([
    turn('h0', 'opens'),
    send('e1', '  '),
    send('e2', 'x'.repeat(4001)),
    send('e3', 7),
    send('e4', 'ok', { delivery: 'immediate' }),
    send('e5', 'ok', { gateOpen: false }),
    send('e6', 'ok', { ready: false }),
    send('e7', 'ok', { policy: REST, delivery: 'steer' }),
  ]);
  assert.equal(rules(outputs), [
    ['e1', 'invalid', 'text-empty'],
    ['e2', 'invalid', 'text-too-long'],
    ['e3', 'invalid', 'text-not-string'],
    ['e4', 'invalid', 'delivery-invalid'],
    ['e5', 'unsupported', 'gate-off'],
    ['e6', 'busy', 'transport-down'],
    ['e7', 'invalid', 'delivery-invalid'],
  ]);
  assert.not.ok(JSON.stringify(outputs).includes('xxxx'));
  assert.equal(only(outputs, 'control.rejected')[3]!.rejection.detail, 'delivery must be queue or steer');
});

test('send_input D4: a redelivered command is re-acked and sent once', () => {
  const { outputs, snap } = run([
    turn('h0', 'opens'),
    send('c1', 'one', { delivery: 'steer' }),
    send('c1', 'one', { delivery: 'steer' }),
    sent('c1'),
    send('c1', 'one'),
  ]);
  assert.equal(types(outputs), [
    'reply.neutral',
    'control.accepted',
    'input.send',
    'control.reack',
    'input.sent',
    'control.reack',
  ]);
  assert.is(snap.context.inputs.length, 1);
  assert.is(snap.context.inputs[0]!.delivery, 'steer');
});

test('send_input D28: identical text from a second command is refused while the first is pending, accepted once it is consumed', () => {
  const { outputs } = run([
    turn('h0', 'opens'),
    send('c1', 'same'),
    sent('c1'),
    send('c2', 'same'),
    consumed('same'),
    send('c3', 'same'),
  ]);
  assert.equal(rules(outputs), [['c2', 'refused', 'input-pending-identical']]);
  assert.equal(
    only(outputs, 'input.consumed').map((o) => o.cause),
    ['c1'],
  );
  assert.equal(
    only(outputs, 'control.accepted').map((o) => o.cause),
    ['c1', 'c3'],
  );
  // Without merging on the vendor side the same text twice is two inputs.
  const rest = run([send('r1', 'same', { policy: REST }), send('r2', 'same', { policy: REST })]);
  assert.equal(
    only(rest.outputs, 'control.accepted').map((o) => o.cause),
    ['r1', 'r2'],
  );
});

test('send_input: consumption matches the oldest pending input with that text; a consumption before the answer proves the send', () => {
  const { outputs } = run([
    turn('h0', 'opens'),
    send('c1', 'a'),
    send('c2', 'b'),
    sent('c1'),
    consumed('b'),
    sent('c2'),
    consumed('zzz'),
  ]);
  assert.equal(types(outputs).slice(-3), ['input.sent', 'input.sent', 'input.consumed']);
  assert.equal(
    only(outputs, 'input.sent').map((o) => o.cause),
    ['c1', 'c2'],
  );
  assert.equal(
    only(outputs, 'input.consumed').map((o) => o.cause),
    ['c2'],
  );
});

test('send_input: the transport refusing drops it send-failed; without consumption reports input.sent settles it', () => {
  const f = run([turn('h0', 'opens'), send('c1', 'a'), failed('c1'), sent('c1')]);
  assert.equal(types(f.outputs), ['reply.neutral', 'control.accepted', 'input.send', 'instruction.dropped']);
  assert.equal(only(f.outputs, 'instruction.dropped')[0], {
    type: 'instruction.dropped',
    eventType: `x.${VENDOR}.instruction.dropped`,
    cause: 'c1',
    reason: 'send-failed',
  });
  const r = run([send('c2', 'a', { policy: REST }), sent('c2'), consumed('a')]);
  assert.equal(types(r.outputs), ['control.accepted', 'input.send', 'input.sent']);
  assert.equal(r.snap.context.inputs, []);
});

test('send_input D10/D6: the session ending drops every unconsumed input session-ended; after the end it is refused', () => {
  const { outputs } = run([
    turn('h0', 'opens'),
    send('c1', 'a'),
    sent('c1'),
    send('c2', 'b'),
    end('e1'),
    sent('c2'),
    send('c3', 'c'),
  ]);
  assert.equal(
    only(outputs, 'instruction.dropped').map((o) => [o.cause, o.reason]),
    [
      ['c1', 'session-ended'],
      ['c2', 'session-ended'],
    ],
  );
  assert.equal(types(outputs).indexOf('session.ended') > types(outputs).lastIndexOf('instruction.dropped'), true);
  assert.equal(
    only(outputs, 'input.sent').map((o) => o.cause),
    ['c1'],
    'a late answer for a dropped input emits nothing',
  );
  assert.equal(rules(outputs), [['c3', 'refused', 'session-ended']]);
});

test('send_input D3: at most 20 unsettled inputs per session', () => {
  const inputs = [turn('h0', 'opens'), ...Array.from({ length: 21 }, (_, i) => send(`q${i}`, `input ${i}`))];
  const { outputs } = run(inputs);
  assert.equal(rules(outputs), [['q20', 'invalid', 'queue-full']]);
});

test('send_input D12: after a restart an input with no transport answer is dropped delivery-unknown; a sent one still awaits its consumption', () => {
  const before = run([turn('h0', 'opens'), send('c1', 'a'), send('c2', 'b'), sent('c2')]);
  const after = run([{ type: 'restart.recovered', at: 5000 }, consumed('b')], before.snap);
  assert.equal(types(after.outputs), ['instruction.dropped', 'input.consumed']);
  assert.equal(only(after.outputs, 'instruction.dropped')[0]!.reason, 'delivery-unknown');
  assert.equal(start().context.inputs, []);
});

test.run();
