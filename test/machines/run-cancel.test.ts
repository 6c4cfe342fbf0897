// control.cancel through the pure session machine, for vendors whose transport aborts the active
// run: scope run only, only while a run is active, acked on the channel's answer, and the run's
// end names the command.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { end, run, SESSION, types } from '../support/session-steps.js';

const SENDER = { agent: 'tester', host: 'test-host' };
const cancel = (id: string, scope: unknown, opts: { gateOpen?: boolean; ready?: boolean } = {}): SessionInput => ({
  type: 'command.cancel',
  at: 1000,
  gateOpen: opts.gateOpen ?? true,
  ready: opts.ready ?? true,
  command: command(SENDER, SESSION, { type: 'control.cancel', id, data: { scope } }),
});
const answered = (commandId: string, ok: boolean): SessionInput => ({
  type: 'cancel.answered',
  at: 1100,
  commandId,
  ok,
});
const turn = (t: 'opens' | 'closes', hookId = `t-${t}`): SessionInput => ({
  type: 'hook.moment',
  at: 500,
  hookId,
  eligible: false,
  turn: t,
});
const rules = (outs: SessionOutput[]) =>
  outs
    .filter((o) => o.type === 'control.rejected')
    .map((o) => o.type === 'control.rejected' && [o.cause, o.rejection.reason, o.rejection.rule]);

test('cancel: forwarded while a run is active, acked once the transport answers yes; the session end names it in run.cancelled', () => {
  const { outputs, snap } = run([turn('opens'), cancel('k1', 'run'), answered('k1', true), end('e1')]);
  assert.equal(types(outputs), [
    'reply.neutral',
    'run.cancel',
    'control.accepted',
    'run.cancelled',
    'session.ended',
    'reply.neutral',
  ]);
  assert.equal(
    outputs.find((o) => o.type === 'run.cancelled'),
    { type: 'run.cancelled', cause: 'k1', decidedBy: { identity: 'tester', surface: 'cli' } },
  );
  assert.is(snap.context.cancel, undefined);
});

test('cancel: no ack before the answer; a redelivery meanwhile adds nothing; a refusal is rejected refused', () => {
  const { outputs } = run([
    turn('opens'),
    cancel('k1', 'run'),
    cancel('k1', 'run'),
    answered('k1', false),
    cancel('k1', 'run'),
  ]);
  assert.equal(types(outputs), ['reply.neutral', 'run.cancel', 'control.reack', 'control.rejected', 'control.reack']);
  assert.equal(rules(outputs), [['k1', 'refused', 'cancel-refused']]);
});

test('cancel: scope session is refused (no session stop), a bad scope invalid, no run refused, gate off unsupported, transport down busy', () => {
  const idle = run([cancel('k0', 'run')]);
  assert.equal(rules(idle.outputs), [['k0', 'refused', 'no-active-run']]);
  const { outputs } = run([
    turn('opens'),
    cancel('k1', 'session'),
    cancel('k2', 'all'),
    cancel('k3', 'run', { gateOpen: false }),
    cancel('k4', 'run', { ready: false }),
  ]);
  assert.equal(rules(outputs), [
    ['k1', 'refused', 'cancel-scope'],
    ['k2', 'invalid', 'cancel-scope'],
    ['k3', 'unsupported', 'gate-off'],
    ['k4', 'busy', 'transport-down'],
  ]);
  const closed = run([turn('opens'), cancel('k5', 'run'), answered('k5', true), turn('closes'), cancel('k6', 'run')]);
  assert.equal(rules(closed.outputs), [['k6', 'refused', 'no-active-run']]);
});

test("cancel: a command naming another run than the active one is refused; the session end's run.cancelled names the active run", () => {
  const open: SessionInput = {
    type: 'hook.moment',
    at: 500,
    hookId: 'h0',
    eligible: false,
    turn: 'opens',
    runId: 'run_a',
  };
  const other: SessionInput = {
    type: 'command.cancel',
    at: 1000,
    gateOpen: true,
    ready: true,
    command: command(SENDER, SESSION, { type: 'control.cancel', id: 'k1', run: 'run_b', data: { scope: 'run' } }),
  };
  const same: SessionInput = {
    type: 'command.cancel',
    at: 1000,
    gateOpen: true,
    ready: true,
    command: command(SENDER, SESSION, { type: 'control.cancel', id: 'k2', run: 'run_a', data: { scope: 'run' } }),
  };
  const { outputs } = run([open, other, same, answered('k2', true), end('e1')]);
  assert.equal(rules(outputs), [['k1', 'refused', 'no-active-run']]);
  assert.equal(
    outputs.find((o) => o.type === 'run.cancelled'),
    { type: 'run.cancelled', cause: 'k2', run: 'run_a', decidedBy: { identity: 'tester', surface: 'cli' } },
  );
});

test('cancel: a second cancel while one is under way is refused; a restart with no answer owes the ack and rejects it', () => {
  const { outputs } = run([turn('opens'), cancel('k1', 'run'), cancel('k2', 'run')]);
  assert.equal(rules(outputs), [['k2', 'refused', 'cancel-pending']]);
  const after = run([{ type: 'restart.recovered', at: 5000 }], run([turn('opens'), cancel('k1', 'run')]).snap);
  assert.equal(rules(after.outputs), [['k1', 'refused', 'cancel-refused']]);
});

test.run();
