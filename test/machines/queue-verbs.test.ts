// D44 stepped through the pure session machine: edit, move, promote and hold against every state
// an instruction can be in (waiting, in a reply not yet confirmed, handed to a lane, delivered,
// withdrawn, ended, paused), the bad input each refuses with its own code (the queue unchanged),
// a verb racing a delivery, and control.cancel keeping or clearing what waits.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import { GRANT_ATTR, WITHDRAW_GRANT } from '../../src/protocol/types.js';
import type { LaneStarts, QueueVerb } from '../../src/machines/command-inputs.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { run, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const NATIVE = { deliveries: ['steer'], hint: 'start it with `aep-steer run codex`' };
const STARTS: LaneStarts = { lanes: ['app-server'], hint: 'start it with `aep-steer run codex`' };
const who = (agent = 'tester') => ({ agent, host: 'test-host' });

const send = (id: string, text = `text of ${id}`, data: Record<string, unknown> = {}): SessionInput => ({
  type: 'command.instruct',
  at: 1000,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  command: command(who(), SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: { text, ...data },
    capture: 'redacted',
  }),
});
const verb = (
  v: QueueVerb,
  id: string,
  data: Record<string, unknown>,
  o: { agent?: string; granted?: boolean; lanes?: boolean; gateOpen?: boolean } = {},
): SessionInput => ({
  type: 'command.queue',
  verb: v,
  at: 1500,
  gateOpen: o.gateOpen ?? true,
  deliveries: ['moment', 'steer', 'queue'],
  ...(o.lanes === true ? { native: NATIVE, starts: STARTS } : {}),
  command: command(who(o.agent), SESSION, {
    type: `x.${VENDOR}.control.${v}`,
    id,
    data,
    ...(o.granted === true ? { extensions: { [GRANT_ATTR]: WITHDRAW_GRANT } } : {}),
  }),
});
const opens = (hookId: string, eligible = false): SessionInput => ({
  type: 'hook.moment',
  at: 1200,
  hookId,
  eligible,
  turn: 'opens',
});
const within = (hookId: string): SessionInput => ({
  type: 'hook.moment',
  at: 1600,
  hookId,
  eligible: true,
  turn: 'within',
});
const closes = (hookId: string): SessionInput => ({
  type: 'hook.moment',
  at: 1700,
  hookId,
  eligible: false,
  turn: 'closes',
});
const written = (hookId: string): SessionInput => ({ type: 'reply.written', at: 1800, hookId });
const reach: SessionInput = { type: 'lane.reach', at: 500, lane: 'app-server', reaches: true };

const last = (outputs: readonly SessionOutput[]): SessionOutput => outputs.at(-1)!;
const rule = (outputs: readonly SessionOutput[]): string => {
  const o = outputs.find((x) => x.type === 'control.rejected');
  return o?.type === 'control.rejected' ? o.rejection.rule : `none (${outputs.map((x) => x.type).join(', ')})`;
};
const queueOf = (s: Snap) => s.context.queue.map((i) => [i.id, i.text, i.version ?? 1, i.delivery ?? 'moment']);
const then = (snap: Snap, ...inputs: SessionInput[]) => run(inputs, snap);

/** Three waiting instructions, a turn not running. */
const three = () => run([send('a'), send('b'), send('c')]);

// Every state an instruction may be in when a verb names it, and what each verb answers there.
const STATES: Record<string, { snap: () => Snap; rule?: string }> = {
  waiting: { snap: () => run([reach, send('a'), send('b'), send('c')]).snap },
  'in a reply not yet confirmed': { snap: () => run([send('b'), opens('o1', true)]).snap, rule: 'already-delivered' },
  'handed to a lane': {
    snap: () => run([reach, opens('o0'), send('b', 'x', { delivery: 'steer' })]).snap,
    rule: 'already-delivered',
  },
  delivered: { snap: () => run([send('b'), opens('o1', true), written('o1')]).snap, rule: 'already-delivered' },
  withdrawn: {
    snap: () =>
      run([
        send('b'),
        {
          type: 'command.withdraw',
          at: 1100,
          gateOpen: true,
          command: command(who(), SESSION, {
            type: `x.${VENDOR}.control.withdraw`,
            id: 'w',
            data: { instruction: 'b' },
          }),
        },
      ]).snap,
    rule: 'not-waiting',
  },
  ended: {
    snap: () => run([send('b'), { type: 'hook.end', at: 1100, hookId: 'e1', reason: 'normal' } as SessionInput]).snap,
    rule: 'not-waiting',
  },
  'never sent': { snap: () => run([send('a')]).snap, rule: 'unknown-instruction' },
};
const ASK: Record<Exclude<QueueVerb, 'hold'>, Record<string, unknown>> = {
  edit: { instruction: 'b', text: 'new text' },
  move: { instruction: 'b', to: 'front' },
  promote: { instruction: 'b', idle: 'start' },
};

for (const [state, s] of Object.entries(STATES)) {
  for (const v of ['edit', 'move', 'promote'] as const) {
    test(`${v} of an instruction ${state}: ${s.rule ?? 'accepted'}`, () => {
      const before = s.snap();
      const r = then(before, verb(v, `${v}-1`, ASK[v], { lanes: v === 'promote' }));
      if (s.rule === undefined) {
        assert.is(r.outputs[0]?.type, 'control.accepted');
        return;
      }
      assert.is(rule(r.outputs), s.rule);
      assert.equal(queueOf(r.snap), queueOf(before), 'the queue is unchanged');
      assert.equal(r.snap.context.laned ?? [], before.context.laned ?? []);
    });
  }
}

test('edit keeps the place, raises the version, and the delivery names the version it carried', () => {
  const r = then(three().snap, verb('edit', 'e1', { instruction: 'b', text: 'second, edited' }));
  assert.equal(
    r.outputs.map((o) => o.type),
    ['control.accepted', 'queue.changed'],
  );
  const ch = last(r.outputs);
  assert.ok(ch.type === 'queue.changed');
  assert.equal(
    [ch.eventType, ch.cause, ch.subject, ch.data],
    [`x.${VENDOR}.instruction.edited`, 'e1', 'b', { version: 2 }],
  );
  assert.equal(queueOf(r.snap), [
    ['a', 'text of a', 1, 'moment'],
    ['b', 'second, edited', 2, 'moment'],
    ['c', 'text of c', 1, 'moment'],
  ]);
  const again = then(r.snap, verb('edit', 'e2', { instruction: 'b', text: 'third take' }));
  const got = then(again.snap, opens('o1', true), written('o1'));
  const ctx = got.outputs.find((o) => o.type === 'reply.context');
  assert.ok(ctx?.type === 'reply.context');
  assert.is(ctx.text, 'text of a\n\nthird take\n\ntext of c');
  const versions = got.outputs.flatMap((o) => (o.type === 'instruction.delivered' ? [[o.cause, o.version]] : []));
  assert.equal(versions, [
    ['a', undefined],
    ['b', 3],
    ['c', undefined],
  ]);
});

test('bad edits: empty, oversize, not a string; each its own code, the queue unchanged', () => {
  const before = three().snap;
  for (const [text, code] of [
    ['  ', 'text-empty'],
    ['x'.repeat(4001), 'text-too-long'],
    [7, 'text-not-string'],
  ] as const) {
    const r = then(before, verb('edit', `e-${code}`, { instruction: 'b', text }));
    assert.is(rule(r.outputs), code);
    assert.equal(queueOf(r.snap), queueOf(before));
  }
});

test('a verb from another sender is unauthorized; a withdraw grant lets one through', () => {
  const before = three().snap;
  for (const v of ['edit', 'move', 'promote'] as const) {
    const r = then(before, verb(v, `${v}-x`, ASK[v], { agent: 'mallory' }));
    assert.is(rule(r.outputs), 'not-sender');
    const rej = r.outputs[0];
    assert.ok(rej?.type === 'control.rejected' && rej.rejection.reason === 'unauthorized');
    assert.equal(queueOf(r.snap), queueOf(before));
  }
  const granted = then(before, verb('move', 'm-g', { instruction: 'c', to: 'front' }, { agent: 'ops', granted: true }));
  assert.equal(
    queueOf(granted.snap).map((i) => i[0]),
    ['c', 'a', 'b'],
  );
});

test('move to the front, to the back and before another; each says the new position', () => {
  let s = three().snap;
  const moves: [Record<string, unknown>, string[], number][] = [
    [{ instruction: 'c', to: 'front' }, ['c', 'a', 'b'], 1],
    [{ instruction: 'c', to: 'back' }, ['a', 'b', 'c'], 3],
    [{ instruction: 'c', before: 'b' }, ['a', 'c', 'b'], 2],
    [{ instruction: 'a', before: 'a' }, ['a', 'c', 'b'], 1],
  ];
  for (const [i, [data, order, position]] of moves.entries()) {
    const r = then(s, verb('move', `m${i}`, data));
    const ch = last(r.outputs);
    assert.ok(ch.type === 'queue.changed');
    assert.equal([ch.eventType, ch.data], [`x.${VENDOR}.instruction.moved`, { position }]);
    assert.equal(
      queueOf(r.snap).map((x) => x[0]),
      order,
    );
    s = r.snap;
  }
});

test('bad moves: neither or both of before and to, before an id not waiting here; the queue unchanged', () => {
  const before = three().snap;
  for (const [data, code] of [
    [{ instruction: 'b' }, 'move-invalid'],
    [{ instruction: 'b', to: 'middle' }, 'move-invalid'],
    [{ instruction: 'b', to: 'front', before: 'a' }, 'move-invalid'],
    [{ instruction: 'b', before: 'from-another-session' }, 'move-target-unknown'],
  ] as const) {
    const r = then(before, verb('move', `m-${code}-${JSON.stringify(data)}`, data));
    assert.is(rule(r.outputs), code);
    assert.equal(queueOf(r.snap), queueOf(before));
  }
});

test('hold pauses the queue: nothing leaves it at a turn moment; a steer is not held; resume delivers in order', () => {
  const paused = then(three().snap, verb('hold', 'h1', { paused: true }));
  const ch = last(paused.outputs);
  assert.ok(ch.type === 'queue.changed');
  assert.equal([ch.eventType, ch.data, ch.subject], [`x.${VENDOR}.queue.held`, { paused: true }, undefined]);
  assert.is(paused.snap.context.paused, true);
  const turn = then(paused.snap, opens('o1', true), send('s', 'steer now', { delivery: 'steer' }), within('w1'));
  const carried = turn.outputs.filter((o) => o.type === 'reply.context');
  assert.equal(
    carried.map((o) => (o.type === 'reply.context' ? o.ids : [])),
    [['s']],
    'only the steer rode a moment',
  );
  const resumed = then(
    turn.snap,
    written('w1'),
    closes('c1'),
    verb('hold', 'h2', { paused: false }),
    opens('o2', true),
  );
  const next = resumed.outputs.find((o) => o.type === 'reply.context');
  assert.ok(next?.type === 'reply.context');
  assert.equal(next.ids, ['a', 'b', 'c']);
  assert.is(resumed.snap.context.paused, undefined);
  assert.is(rule(then(three().snap, verb('hold', 'h3', { paused: 'yes' })).outputs), 'paused-invalid');
});

test('promote mid-turn on the hook lane: the front of the queue as a steer, carried by the next moment', () => {
  const queued = run(['a', 'b', 'c'].map((id) => send(id, `text of ${id}`, { delivery: 'queue' })));
  const r = then(queued.snap, opens('o1'), verb('promote', 'p1', { instruction: 'c' }), within('w1'));
  const ctx = r.outputs.find((o) => o.type === 'reply.context');
  assert.ok(ctx?.type === 'reply.context');
  assert.equal(ctx.ids, ['c'], 'the steer alone: the others wait for the next turn');
  const d = then(r.snap, written('w1')).outputs.find((o) => o.type === 'instruction.delivered');
  assert.ok(d?.type === 'instruction.delivered' && d.delivery === 'steer' && d.cause === 'c');
});

test('promote mid-turn with a lane reaching the session: handed to the lane at once', () => {
  const r = then(
    run([reach, send('a'), send('b')]).snap,
    opens('o1'),
    verb('promote', 'p1', { instruction: 'b' }, { lanes: true }),
  );
  assert.equal(
    r.outputs.slice(-3).map((o) => o.type),
    ['control.accepted', 'queue.changed', 'lane.steer'],
  );
  assert.equal(
    queueOf(r.snap).map((i) => i[0]),
    ['a'],
  );
  assert.equal(
    r.snap.context.laned?.map((i) => i.id),
    ['b'],
  );
});

test('promote while idle: refused session-idle (it stays); with idle start on a lane that starts turns, it starts one', () => {
  const before = three().snap;
  const idle = then(before, verb('promote', 'p1', { instruction: 'b' }));
  assert.is(rule(idle.outputs), 'session-idle');
  assert.equal(queueOf(idle.snap), queueOf(before));
  const none = then(before, verb('promote', 'p2', { instruction: 'b', idle: 'start' }));
  assert.is(rule(none.outputs), 'start-unsupported');
  assert.equal(queueOf(none.snap), queueOf(before));
  const started = then(
    run([reach, send('a'), send('b')]).snap,
    verb('promote', 'p3', { instruction: 'b', idle: 'start' }, { lanes: true }),
  );
  const out = last(started.outputs);
  assert.ok(out.type === 'lane.steer');
  assert.equal([out.start, out.lane, out.text], ['steer', 'app-server', 'text of b']);
});

test('promote on a session no way can steer: unsupported, it stays in place', () => {
  const moments = run([{ ...send('a'), deliveries: ['moment'] } as SessionInput, opens('o1')]).snap;
  const r = then(moments, { ...verb('promote', 'p1', { instruction: 'a' }), deliveries: ['moment'] } as SessionInput);
  assert.is(rule(r.outputs), 'delivery-unsupported');
  assert.equal(queueOf(r.snap), queueOf(moments));
});

test('a verb racing a delivery ends one way: after the moment took it, already-delivered; before, the moment carries the change', () => {
  const first = then(three().snap, opens('o1', true), verb('edit', 'e1', { instruction: 'b', text: 'late' }));
  assert.is(rule(first.outputs), 'already-delivered');
  // The reply failing puts the instructions back unedited: the edit stays refused, once.
  const back = then(first.snap, { type: 'reply.failed', at: 1900, hookId: 'o1' });
  assert.equal(queueOf(back.snap)[1], ['b', 'text of b', 1, 'moment']);
  const won = then(three().snap, verb('edit', 'e1', { instruction: 'b', text: 'early' }), opens('o1', true));
  const ctx = won.outputs.find((o) => o.type === 'reply.context');
  assert.ok(ctx?.type === 'reply.context' && ctx.text.includes('early') && !ctx.text.includes('text of b'));
});

test('a redelivered verb is re-acked, not applied twice; gate off is refused', () => {
  const once = then(three().snap, verb('move', 'm1', { instruction: 'c', to: 'front' }));
  const twice = then(once.snap, verb('move', 'm1', { instruction: 'c', to: 'front' }));
  assert.equal(
    twice.outputs.map((o) => o.type),
    ['control.reack'],
  );
  assert.equal(queueOf(twice.snap), queueOf(once.snap));
  assert.is(rule(then(three().snap, verb('hold', 'h1', { paused: true }, { gateOpen: false })).outputs), 'gate-off');
});

test('verbs on a paused queue still change it; the pause holds what they changed', () => {
  const r = then(
    three().snap,
    verb('hold', 'h1', { paused: true }),
    verb('edit', 'e1', { instruction: 'b', text: 'edited while paused' }),
    verb('move', 'm1', { instruction: 'c', to: 'front' }),
    opens('o1', true),
  );
  assert.ok(!r.outputs.some((o) => o.type === 'reply.context'));
  assert.equal(
    queueOf(r.snap).map((i) => i[0]),
    ['c', 'a', 'b'],
  );
});

const cancel = (id: string, data: Record<string, unknown>): SessionInput => ({
  type: 'command.cancel',
  at: 1500,
  gateOpen: true,
  ready: true,
  command: command(who(), SESSION, { type: 'control.cancel', id, data: { scope: 'run', ...data } }),
});

test('cancel scope run keeps the queue; with clear: true its ack withdraws each waiting instruction, caused by the cancel', () => {
  const kept = then(three().snap, opens('o1'), cancel('k1', {}), {
    type: 'cancel.answered',
    at: 1600,
    commandId: 'k1',
    ok: true,
  });
  assert.equal(queueOf(kept.snap).length, 3);
  const asked = then(three().snap, opens('o1'), cancel('k2', { clear: true }));
  // Until the answer nothing leaves the queue, so nothing is delivered that the clear then withdraws.
  const held = then(asked.snap, within('w1'));
  assert.ok(!held.outputs.some((o) => o.type === 'reply.context'));
  const cleared = then(held.snap, { type: 'cancel.answered', at: 1700, commandId: 'k2', ok: true });
  const drops = cleared.outputs.flatMap((o) =>
    o.type === 'instruction.dropped' ? [[o.cause, o.subject, o.reason]] : [],
  );
  assert.equal(drops, [
    ['k2', 'a', 'withdrawn'],
    ['k2', 'b', 'withdrawn'],
    ['k2', 'c', 'withdrawn'],
  ]);
  assert.equal(cleared.snap.context.queue, []);
  // A refused cancel clears nothing and holds the queue no longer.
  const refused = then(asked.snap, { type: 'cancel.answered', at: 1700, commandId: 'k2', ok: false });
  assert.equal(queueOf(refused.snap).length, 3);
  assert.is(refused.snap.context.cancel, undefined);
});

test.run();
