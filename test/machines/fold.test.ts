// The fold (machines/fold.ts) replays the session machine without XState's interpreter; it must
// reach exactly what machine.transition() reaches (state value, context, outputs in order) for
// any input sequence, every input type and state included, and refuse machines it cannot fold.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { assign, createMachine, setup } from 'xstate';
import { compileFold, type FoldState } from '../../src/machines/fold.js';
import { sessionFold } from '../../src/machines/session.js';
import { command } from '../../src/protocol/index.js';
import type { InputPolicy } from '../../src/machines/command-inputs.js';
import type { SessionContext } from '../../src/machines/session-context.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { SESSION, start, step, VENDOR } from '../support/session-steps.js';

const SENDER = { agent: 'tester', host: 'test-host' };
const IDS = ['c0', 'c1', 'c2', 'c3'];
const HOOKS = ['h0', 'h1', 'h2'];
const TEXTS = ['steer this way', '', 'x'.repeat(4001), 'again'];
const POLICY: InputPolicy = {
  deliveries: ['queue', 'steer'],
  defaultDelivery: 'queue',
  refuseIdle: true,
  reportsConsumption: true,
  mergesIdentical: true,
};
const REQUEST = { kind: 'permission' as const, prompt: 'Run?', subject: 'Bash', respondVia: ['control', 'oob'] };
const ANSWERS = [{ option: 'allow' }, { option: 'deny', text: 'no' }, { values: { name: 'n' } }, {}];

const pick = <T>(xs: readonly T[]) => fc.nat(xs.length - 1).map((i) => xs[i]!);
const at = fc.integer({ min: 0, max: 120_000 });
const cmd = (type: string, id: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  command(SENDER, SESSION, { type, id, data, ...extra });

/** Every input type, over small id pools so inputs meet the state earlier ones made. */
const inputArb: fc.Arbitrary<SessionInput> = fc.oneof(
  fc
    .record({
      id: pick(IDS),
      text: pick(TEXTS),
      at,
      gateOpen: fc.boolean(),
      delivery: pick([undefined, 'moment', 'steer', 'queue', 'now']),
      all: fc.boolean(),
    })
    .map(
      ({ id, text, at, gateOpen, delivery, all }): SessionInput => ({
        type: 'command.instruct',
        at,
        gateOpen,
        command: cmd(`x.${VENDOR}.control.instruct`, id, delivery === undefined ? { text } : { text, delivery }),
        ...(all ? { deliveries: ['moment', 'steer', 'queue'] } : {}),
      }),
    ),
  // D32: a withdraw of any id, from the sender or from someone else.
  fc
    .record({
      id: pick(['w0', 'w1', ...IDS]),
      instruction: pick([...IDS, 'nope']),
      at,
      gateOpen: fc.boolean(),
      other: fc.boolean(),
    })
    .map(
      ({ id, instruction, at, gateOpen, other }): SessionInput => ({
        type: 'command.withdraw',
        at,
        gateOpen,
        command: cmd(`x.${VENDOR}.control.withdraw`, id, { instruction }, other ? { agent: 'someone-else' } : {}),
      }),
    ),
  fc.record({ id: pick(IDS), req: pick(['r0', 'r1']), answer: pick(ANSWERS), at }).map(
    ({ id, req, answer, at }): SessionInput => ({
      type: 'command.respond',
      at,
      answeredId: `ans-${id}`,
      command: cmd('control.attention.respond', id, { answer }, { subject: req, cause: req }),
    }),
  ),
  fc
    .record({
      hookId: pick(HOOKS),
      at,
      eligible: fc.boolean(),
      starts: fc.boolean(),
      turn: pick([undefined, 'opens', 'closes'] as const),
      moment: pick([undefined, 'UserPromptSubmit']),
    })
    .map(
      ({ hookId, at, eligible, starts, turn, moment }): SessionInput => ({
        type: 'hook.moment',
        at,
        hookId,
        eligible,
        ...(starts ? { starts } : {}),
        ...(turn ? { turn, ...(turn === 'opens' ? { runId: `run-${at}` } : {}) } : {}),
        ...(moment ? { moment } : {}),
      }),
    ),
  fc
    .record({
      hookId: pick(HOOKS),
      requestId: pick(['r0', 'r1']),
      hold: pick(['permission', 'elicitation'] as const),
      at,
    })
    .map(
      ({ hookId, requestId, hold, at }): SessionInput => ({
        type: 'hook.held',
        at,
        hookId,
        requestId,
        hold,
        request: REQUEST,
        timeoutMs: 55_000,
        causeId: `o-${at}`,
      }),
    ),
  fc.record({ hookId: pick(HOOKS), at, windowMs: pick([undefined, 30_000]) }).map(
    ({ hookId, at, windowMs }): SessionInput => ({
      type: 'hook.end',
      at,
      hookId,
      reason: 'normal',
      ...(windowMs ? { windowMs } : {}),
    }),
  ),
  fc
    .record({ hookId: pick(HOOKS), at, ok: fc.boolean() })
    .map(({ hookId, at, ok }): SessionInput => ({ type: ok ? 'reply.written' : 'reply.failed', at, hookId })),
  fc
    .record({ requestId: pick(['r0', 'r1']), at })
    .map(({ requestId, at }): SessionInput => ({ type: 'attention.timeout', at, requestId })),
  at.map((t): SessionInput => ({ type: 'ttl.tick', at: t, ttlMs: 60_000 })),
  at.map((t): SessionInput => ({ type: 'window.tick', at: t })),
  at.map((t): SessionInput => ({ type: 'restart.recovered', at: t })),
  fc.record({ id: pick(IDS), text: pick(TEXTS), at, gateOpen: fc.boolean(), ready: fc.boolean() }).map(
    ({ id, text, at, gateOpen, ready }): SessionInput => ({
      type: 'command.send_input',
      at,
      gateOpen,
      ready,
      policy: POLICY,
      command: cmd(`x.${VENDOR}.control.send_input`, id, { text }),
    }),
  ),
  fc
    .record({ id: pick(IDS), at, kind: pick(['input.sent', 'input.failed'] as const) })
    .map(({ id, at, kind }): SessionInput => ({ type: kind, at, commandId: id })),
  fc.record({ text: pick(TEXTS), at }).map(({ text, at }): SessionInput => ({ type: 'input.consumed', at, text })),
  fc.record({ id: pick(IDS), at, scope: pick(['run', 'session']), gateOpen: fc.boolean(), ready: fc.boolean() }).map(
    ({ id, at, scope, gateOpen, ready }): SessionInput => ({
      type: 'command.cancel',
      at,
      gateOpen,
      ready,
      command: cmd('control.cancel', id, { scope }),
    }),
  ),
  fc
    .record({ id: pick(IDS), at, ok: fc.boolean() })
    .map(({ id, at, ok }): SessionInput => ({ type: 'cancel.answered', at, commandId: id, ok })),
  fc.record({ a: pick(['a0', 'a1']), at }).map(
    ({ a, at }): SessionInput => ({
      type: 'approval.requested',
      at,
      requestId: `r-${a}`,
      approvalId: a,
      request: REQUEST,
    }),
  ),
  fc.record({ a: pick(['a0', 'a1']), at, approved: pick([undefined, true, false]) }).map(
    ({ a, at, approved }): SessionInput => ({
      type: 'approval.resolved',
      at,
      approvalId: a,
      answeredId: `ans-${a}-${at}`,
      ...(approved === undefined ? {} : { approved }),
    }),
  ),
  at.map((t): SessionInput => ({ type: 'transport.lost', at: t })),
  // D34: a held call the vendor reports run, and a held hook the vendor closed.
  fc.record({ hookId: pick(HOOKS), requestId: pick(['r0', 'r1']), at }).map(
    ({ hookId, requestId, at }): SessionInput => ({
      type: 'hook.held',
      at,
      hookId,
      requestId,
      hold: 'permission',
      request: REQUEST,
      timeoutMs: 55_000,
      call: 'c0',
    }),
  ),
  fc.record({ hookId: pick(HOOKS), at, eligible: fc.boolean() }).map(
    ({ hookId, at, eligible }): SessionInput => ({
      type: 'hook.moment',
      at,
      hookId,
      eligible,
      ran: { call: 'c0', answeredId: `oob-${at}` },
    }),
  ),
  fc.record({ hookId: pick(HOOKS), at }).map(({ hookId, at }): SessionInput => ({ type: 'hold.closed', at, hookId })),
  fc.record({ id: pick(IDS), at, gateOpen: fc.boolean(), refused: fc.boolean() }).map(
    ({ id, at, gateOpen, refused }): SessionInput => ({
      type: 'command.forward',
      at,
      gateOpen,
      command: cmd('control.pause', id, {}),
      ...(refused ? { refusal: { reason: 'refused', rule: 'status-guard', detail: 'idle' } } : {}),
    }),
  ),
  fc.record({ id: pick(IDS), at, refused: fc.boolean() }).map(
    ({ id, at, refused }): SessionInput => ({
      type: 'forward.settled',
      at,
      commandId: id,
      ...(refused ? { rejection: { reason: 'refused', rule: 'vendor-refused', detail: '400' } } : {}),
    }),
  ),
);

const fold = sessionFold;

test('the session machine compiles to a fold (replay would fall back to the interpreter otherwise)', () => {
  assert.type(fold, 'object', typeof fold === 'string' ? fold : '');
});

test('fold = machine.transition(): same state value, context and outputs after every input', () => {
  if (typeof fold === 'string') throw new Error(fold);
  const values = new Set<string>();
  fc.assert(
    fc.property(fc.array(inputArb, { minLength: 1, maxLength: 80 }), (inputs) => {
      let snap = start();
      const folded: FoldState<SessionContext> = fold.initial({ session: SESSION, vendor: VENDOR });
      assert.equal(folded, { value: snap.value, context: snap.context }, 'the initial state');
      for (const input of inputs) {
        const [next, outputs] = step(snap, input);
        const foldOutputs: SessionOutput[] = [];
        const before = folded.context;
        const copy = structuredClone(before);
        fold.step(folded, input, foldOutputs);
        assert.equal(before, copy, `${input.type} leaves the context it started from as it was (D22 undo keeps it)`);
        assert.equal(folded.value, next.value, `state after ${input.type}`);
        assert.equal(folded.context, next.context, `context after ${input.type}`);
        assert.equal(foldOutputs, outputs, `outputs of ${input.type}`);
        // The live host logs a timer or write result only when it changed the context (identity).
        assert.is(
          folded.context !== before,
          next.context !== snap.context,
          `${input.type} makes a new context exactly when XState does`,
        );
        values.add(JSON.stringify(next.value));
        snap = next;
      }
    }),
    { numRuns: 400 },
  );
  // The generator reaches every state, so every transition list is exercised.
  for (const v of ['"idle"', '"queued"', '{"holding":"permission"}', '{"holding":"elicitation"}', '"ended"'])
    assert.ok(values.has(v), `reached ${v}`);
});

test("fold.initial = the actor's initial snapshot, decisions seeded before the session existed (D6) included", () => {
  if (typeof fold === 'string') throw new Error(fold);
  const seeded = { 'aep://t/agent/x\u0000c1': 'rejected' as const };
  for (const seed of [{}, { decisions: seeded }]) {
    const snap = start(seed);
    assert.equal(fold.initial({ session: SESSION, vendor: VENDOR, ...seed }), {
      value: snap.value,
      context: snap.context,
    });
  }
});

test('a machine outside the folded subset compiles to the reason, so its replay keeps the interpreter', () => {
  const entry = createMachine({ initial: 'a', states: { a: { entry: assign({}) } } });
  assert.match(String(compileFold(entry)), /entry or exit/);
  const plainAction = setup({ actions: { bump: assign({}) } }).createMachine({
    initial: 'a',
    states: { a: { on: { go: { actions: 'bump' } } } },
  });
  assert.match(String(compileFold(plainAction)), /not a pure step/);
  const delayed = createMachine({ initial: 'a', states: { a: { after: { 10: 'b' } }, b: {} } });
  assert.type(compileFold(delayed), 'string');
  const parallel = createMachine({ type: 'parallel', states: { a: {}, b: {} } });
  assert.match(String(compileFold(parallel)), /parallel/);
});

test.run();
