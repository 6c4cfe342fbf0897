// Commands carried out on a vendor's API (OpenHands pause, resume, interrupt, respond) through the
// pure session machine: one decision per command, taken when the vendor answers; a redelivery
// while it waits adds nothing, after it gets the recorded ack; refusals never reach the vendor.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command, type Rejection } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { end, run, SESSION, types } from '../support/session-steps.js';

const SENDER = { agent: 'tester', host: 'test-host' };
const opened: SessionInput = { type: 'hook.moment', at: 100, hookId: 'h0', eligible: false };
const pauseCmd = (id: string) => command(SENDER, SESSION, { type: 'control.pause', id, data: {} });
const forward = (id: string, opts: { gateOpen?: boolean; refusal?: Rejection; at?: number } = {}): SessionInput => ({
  type: 'command.forward',
  at: opts.at ?? 1000,
  command: pauseCmd(id),
  gateOpen: opts.gateOpen ?? true,
  ...(opts.refusal ? { refusal: opts.refusal } : {}),
});
const settled = (commandId: string, rejection?: Rejection, at = 1100): SessionInput => ({
  type: 'forward.settled',
  at,
  commandId,
  ...(rejection ? { rejection } : {}),
});
const acks = (outs: SessionOutput[]) =>
  outs
    .filter((o) => o.type === 'control.accepted' || o.type === 'control.rejected' || o.type === 'control.reack')
    .map((o) => [o.type, o.cause]);

const GUARD: Rejection = {
  reason: 'refused',
  rule: 'status-guard',
  detail: 'forwarded only while the conversation runs; it is idle',
};
const HTTP: Rejection = { reason: 'refused', rule: 'vendor-refused', detail: 'the agent server answered 400' };

test('a forwarded command waits for the vendor: no ack until it answers, then exactly one', () => {
  const { snap, outputs } = run([opened, forward('c1'), settled('c1')]);
  assert.equal(types(outputs), ['reply.neutral', 'control.forward', 'control.accepted']);
  assert.equal(snap.context.forwards, []);
});

test('a redelivery while the vendor has it adds nothing; after the answer it gets the recorded ack', () => {
  const { outputs } = run([opened, forward('c1'), forward('c1'), settled('c1'), forward('c1')]);
  assert.equal(types(outputs), ['reply.neutral', 'control.forward', 'control.accepted', 'control.reack']);
});

test('the vendor saying no is the decision: control.rejected with its detail, recorded for redeliveries', () => {
  const { outputs } = run([opened, forward('c1'), settled('c1', HTTP), forward('c1')]);
  assert.equal(acks(outputs), [
    ['control.rejected', 'c1'],
    ['control.reack', 'c1'],
  ]);
  assert.equal(
    outputs.find((o) => o.type === 'control.rejected'),
    {
      type: 'control.rejected',
      cause: 'c1',
      key: outputs.find((o) => o.type === 'control.rejected')!.key,
      rejection: HTTP,
    },
  );
});

test('gate off, the guard, and an ended session refuse at once and nothing is forwarded', () => {
  const off = run([opened, forward('c1', { gateOpen: false })]);
  assert.equal(types(off.outputs), ['reply.neutral', 'control.rejected']);
  assert.is((off.outputs[1] as Extract<SessionOutput, { type: 'control.rejected' }>).rejection.rule, 'gate-off');
  const guarded = run([opened, forward('c2', { refusal: GUARD })]);
  assert.equal((guarded.outputs[1] as Extract<SessionOutput, { type: 'control.rejected' }>).rejection, GUARD);
  const ended = run([opened, end('h9', 500), forward('c3')]);
  const last = ended.outputs.at(-1) as Extract<SessionOutput, { type: 'control.rejected' }>;
  assert.equal([last.type, last.rejection.rule], ['control.rejected', 'session-ended']);
  for (const r of [off, guarded, ended]) assert.not.ok(r.outputs.some((o) => o.type === 'control.forward'));
});

test('a command still with the vendor at a restart is accepted as will-try, once', () => {
  const { outputs, snap } = run([opened, forward('c1'), { type: 'restart.recovered', at: 5000 }, settled('c1')]);
  assert.equal(acks(outputs), [['control.accepted', 'c1']]);
  assert.equal(snap.context.forwards, []);
});

test.run();
