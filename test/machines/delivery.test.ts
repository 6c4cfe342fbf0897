// D31 (the sender chooses the delivery) and D32 (withdrawal), stepped through the session machine:
// every delivery against every state, every withdraw against every state, and a withdraw racing
// the delivery of the same instruction.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import {
  end,
  heldPermission,
  run,
  start,
  step,
  written,
  SESSION,
  VENDOR,
  type Snap,
} from '../support/session-steps.js';

const ALL = ['moment', 'steer', 'queue'];
const sender = (agent: string) => ({ agent, host: 'test-host' });

const send = (
  id: string,
  delivery?: string,
  opts: { honours?: string[]; agent?: string; at?: number } = {},
): SessionInput => ({
  type: 'command.instruct',
  at: opts.at ?? 1000,
  gateOpen: true,
  deliveries: opts.honours ?? ALL,
  command: command(sender(opts.agent ?? 'tester'), SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: delivery === undefined ? { text: `text of ${id}` } : { text: `text of ${id}`, delivery },
    capture: 'redacted',
  }),
});
const withdraw = (id: string, instruction: unknown, agent = 'tester', at = 1500): SessionInput => ({
  type: 'command.withdraw',
  at,
  gateOpen: true,
  command: command(sender(agent), SESSION, { type: `x.${VENDOR}.control.withdraw`, id, data: { instruction } }),
});
const opens = (hookId: string, at = 2000): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible: true,
  turn: 'opens',
  moment: 'UserPromptSubmit',
});
const inside = (hookId: string, at = 2000): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible: true,
  moment: 'PreToolUse',
});
const closes = (hookId: string, at = 2000, eligible = false): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible,
  turn: 'closes',
  moment: 'Stop',
});

const rejection = (outputs: readonly SessionOutput[]) => {
  const r = outputs.find((o) => o.type === 'control.rejected');
  return r?.type === 'control.rejected' ? r.rejection : undefined;
};
const accepted = (outputs: readonly SessionOutput[], id: string) =>
  outputs.some((o) => o.type === 'control.accepted' && o.cause === id);
const contexts = (outputs: readonly SessionOutput[]) =>
  outputs.flatMap((o) => (o.type === 'reply.context' ? [o.ids] : []));

/** The states a delivery can meet, each built from the inputs that reach it. */
const STATES: Record<string, SessionInput[]> = {
  idle: [],
  'in a turn': [opens('o0', 500)],
  holding: [opens('o0', 500), heldPermission('hp0', 'r0', 600)],
  ended: [end('e0', 700)],
  'within a resume window': [{ type: 'hook.end', at: 700, hookId: 'e0', reason: 'normal', windowMs: 60_000 }],
};

/** What each delivery gets in each state: accepted, or the rule it is refused by. */
const EXPECTED: Record<string, Record<string, string>> = {
  idle: { moment: 'accepted', steer: 'session-idle', queue: 'accepted' },
  'in a turn': { moment: 'accepted', steer: 'accepted', queue: 'accepted' },
  holding: { moment: 'accepted', steer: 'accepted', queue: 'accepted' },
  ended: { moment: 'session-ended', steer: 'session-ended', queue: 'session-ended' },
  'within a resume window': { moment: 'accepted', steer: 'session-idle', queue: 'accepted' },
};

test('every delivery × state gives the documented outcome (D31)', () => {
  for (const [state, inputs] of Object.entries(STATES)) {
    const from = run(inputs).snap;
    for (const delivery of ALL) {
      const [, out] = step(from, send('c1', delivery));
      const got = accepted(out, 'c1') ? 'accepted' : rejection(out)?.rule;
      assert.is(got, EXPECTED[state]![delivery], `${delivery} in ${state}`);
    }
  }
});

test('a delivery the lane cannot honour is refused unsupported, naming what it accepts; an unknown word is invalid with the list', () => {
  const from = run(STATES['in a turn']!).snap;
  const [s1, out] = step(from, send('c1', 'steer', { honours: ['moment'] }));
  assert.equal(rejection(out), {
    reason: 'unsupported',
    rule: 'delivery-unsupported',
    detail: 'this session cannot take delivery "steer": it accepts moment',
  });
  assert.equal(s1.context.queue, []);
  const [s2, bad] = step(from, send('c2', 'now'));
  assert.equal(rejection(bad), {
    reason: 'invalid',
    rule: 'delivery-invalid',
    detail: 'delivery must be one of moment, steer, queue',
  });
  assert.equal(s2.context.queue, []);
  // A table that declares nothing honours `moment` only, and an explicit moment is the default.
  const plain: SessionInput = { ...send('c3', 'queue'), deliveries: undefined } as SessionInput;
  assert.is(rejection(step(from, plain)[1])?.rule, 'delivery-unsupported');
  assert.ok(accepted(step(from, { ...send('c4', 'moment'), deliveries: undefined } as SessionInput)[1], 'c4'));
});

test('idle refusal says what to do next', () => {
  const [, out] = step(start(), send('c1', 'steer'));
  assert.equal(rejection(out), {
    reason: 'refused',
    rule: 'session-idle',
    detail: 'no turn is running, and a steer never starts one: send it with delivery queue, or as a moment',
  });
});

test("queue waits for the next turn's first moment, never mid-turn; moment rides the next eligible moment", () => {
  const { snap, outputs } = run([
    opens('o0', 500),
    send('q1', 'queue'),
    send('m1'),
    inside('h1'),
    written('h1', 2100),
    closes('s1', 2200),
    opens('o1', 3000),
  ]);
  assert.equal(
    contexts(outputs),
    [['m1'], ['q1']],
    "the moment rode the in-turn moment, the queued one the next turn's first",
  );
  const delivered = outputs.filter((o) => o.type === 'instruction.delivered');
  assert.equal(
    delivered.map((o) => o.type === 'instruction.delivered' && [o.cause, o.delivery, o.moment]),
    [['m1', 'moment', 'PreToolUse']],
  );
  const [, last] = step(snap, written('o1', 3100));
  assert.equal(
    last.map((o) => o.type === 'instruction.delivered' && [o.cause, o.delivery, o.moment]),
    [['q1', 'queue', 'UserPromptSubmit']],
  );
});

test('steer rides a moment inside the running turn; one the turn ends before is dropped turn-ended, never queued', () => {
  const a = run([opens('o0', 500), send('s1', 'steer'), opens('o1', 600)]);
  assert.equal(contexts(a.outputs), [], 'a steer never rides the first moment of a turn');
  const b = run([inside('h1')], a.snap);
  assert.equal(contexts(b.outputs), [['s1']]);
  const c = run([opens('o0', 500), send('s2', 'steer'), closes('stop', 2000)]);
  assert.equal(
    c.outputs.filter((o) => o.type === 'instruction.dropped'),
    [{ type: 'instruction.dropped', eventType: `x.${VENDOR}.instruction.dropped`, cause: 's2', reason: 'turn-ended' }],
  );
  assert.equal(c.snap.context.queue, []);
  assert.is(c.snap.context.turnOpen, false);
  // A closing moment that carries the steer (Claude Code Stop) keeps the turn running.
  const d = run([opens('o0', 500), send('s3', 'steer'), closes('stop', 2000, true)]);
  assert.equal(contexts(d.outputs), [['s3']]);
  assert.is(d.snap.context.turnOpen, true);
  // Within a resume window a steer is dropped at the end; a queued one waits for the resumed run.
  const e = run([
    opens('o0', 500),
    send('s4', 'steer'),
    send('q4', 'queue'),
    { type: 'hook.end', at: 700, hookId: 'e0', reason: 'normal', windowMs: 60_000 },
  ]);
  assert.ok(e.outputs.some((o) => o.type === 'instruction.dropped' && o.cause === 's4' && o.reason === 'turn-ended'));
  assert.equal(
    e.snap.context.queue.map((i) => i.id),
    ['q4'],
  );
});

const waitingFrom = (inputs: SessionInput[]): Snap => run([...inputs, send('c1', 'queue')]).snap;

test('withdraw × every state: a waiting instruction is dropped withdrawn, caused by the withdraw (D32)', () => {
  for (const [state, inputs] of Object.entries(STATES)) {
    if (state === 'ended') continue;
    const from = waitingFrom(inputs);
    const [next, out] = step(from, withdraw('w1', 'c1'));
    assert.ok(accepted(out, 'w1'), state);
    assert.equal(
      out.filter((o) => o.type === 'instruction.dropped'),
      [
        {
          type: 'instruction.dropped',
          eventType: `x.${VENDOR}.instruction.dropped`,
          cause: 'w1',
          reason: 'withdrawn',
          subject: 'c1',
          decidedBy: { identity: 'tester', surface: 'cli' },
        },
      ],
      state,
    );
    assert.equal(next.context.queue, [], state);
    // A second withdraw is told it is gone already; a redelivered one gets its ack again.
    assert.is(rejection(step(next, withdraw('w2', 'c1'))[1])?.rule, 'not-waiting', state);
    assert.equal(
      step(next, withdraw('w1', 'c1'))[1].map((o) => o.type),
      ['control.reack'],
      state,
    );
  }
  // Ended with no window: the queue dropped at the end, so the id is no longer waiting.
  const ended = run([send('c1'), end('e0', 700)]).snap;
  assert.is(rejection(step(ended, withdraw('w1', 'c1', 'tester', 800))[1])?.rule, 'not-waiting');
});

test('withdraw refusals: another sender, delivered, in flight, unknown id; each its own code and nothing changes', () => {
  const from = waitingFrom(STATES['in a turn']!);
  const cases: [SessionInput, Snap, string, string][] = [
    [withdraw('w1', 'c1', 'mallory'), from, 'unauthorized', 'not-sender'],
    [withdraw('w2', 'nope'), from, 'invalid', 'unknown-instruction'],
    [withdraw('w3', 42), from, 'invalid', 'unknown-instruction'],
  ];
  const flying = run([send('m1'), inside('h1')], from).snap;
  cases.push([withdraw('w4', 'm1'), flying, 'refused', 'already-delivered']);
  const done = run([written('h1', 2100)], flying).snap;
  cases.push([withdraw('w5', 'm1'), done, 'refused', 'already-delivered']);
  for (const [input, snap, reason, rule] of cases) {
    const [next, out] = step(snap, input);
    const r = rejection(out);
    assert.is(r?.reason, reason, rule);
    assert.is(r?.rule, rule);
    assert.ok((r?.detail ?? '').length > 20, 'the refusal says what happened');
    assert.equal(next.context.queue, snap.context.queue, `${rule}: the queue is unchanged`);
    assert.equal(next.context.inFlight, snap.context.inFlight, `${rule}: nothing in flight changed`);
  }
  assert.is(new Set(cases.map((c) => c[3])).size, 3, 'three distinct codes');
  // A send_input already handed to the vendor's own queue cannot be taken back by this lane.
  const handed = {
    ...from,
    context: {
      ...from.context,
      inputs: [{ id: 'in1', key: 'k', text: 't', acceptedAt: 1, phase: 'sent' as const, awaitsConsumption: true }],
    },
  } as Snap;
  const r = rejection(step(handed, withdraw('w6', 'in1'))[1]);
  assert.equal([r?.reason, r?.rule], ['refused', 'already-delivered']);
});

test('a withdraw racing a delivery ends with exactly one terminal for the instruction', () => {
  const terminals = (outputs: readonly SessionOutput[]) =>
    outputs.filter(
      (o) =>
        (o.type === 'instruction.delivered' && o.cause === 'c1') ||
        (o.type === 'instruction.dropped' && (o.subject ?? o.cause) === 'c1'),
    );
  const base = [opens('o0', 500), send('c1')];
  // The withdraw first: the moment then has nothing to carry.
  const first = run([...base, withdraw('w1', 'c1'), inside('h1'), written('h1', 2100)]);
  assert.equal(
    terminals(first.outputs).map((o) => o.type),
    ['instruction.dropped'],
  );
  assert.equal(contexts(first.outputs), []);
  // The moment first: the withdraw is refused, before and after the reply is confirmed.
  for (const order of [
    [inside('h1'), withdraw('w1', 'c1'), written('h1', 2100)],
    [inside('h1'), written('h1', 2100), withdraw('w1', 'c1', 'tester', 2200)],
  ]) {
    const r = run([...base, ...order]);
    assert.equal(
      terminals(r.outputs).map((o) => o.type),
      ['instruction.delivered'],
    );
    assert.ok(
      r.outputs.some(
        (o) => o.type === 'control.rejected' && o.cause === 'w1' && o.rejection.rule === 'already-delivered',
      ),
    );
  }
  // A failed reply puts the instruction back; a withdraw then takes it, and it never rides a reply again.
  const back = run([
    ...base,
    inside('h1'),
    { type: 'reply.failed', at: 2100, hookId: 'h1' },
    withdraw('w1', 'c1', 'tester', 2200),
    inside('h2', 2300),
  ]);
  assert.equal(
    terminals(back.outputs).map((o) => o.type),
    ['instruction.dropped'],
  );
  assert.equal(contexts(back.outputs), [['c1']]);
});

test.run();
