// D44 as a property of the pure session machine: on random sequences of instruct, edit, move,
// promote, hold and hook moments, every reply carries instructions in the queue's order as it
// stood at that moment, each at the newest text an accepted edit gave it, each delivered once,
// and nothing but a steer leaves a paused queue.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { command } from '../../src/protocol/index.js';
import type { QueueVerb } from '../../src/machines/command-inputs.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import { SESSION, start, step, VENDOR, type Snap } from '../support/session-steps.js';

const who = { agent: 'tester', host: 'test-host' };
const IDS = ['i0', 'i1', 'i2', 'i3', 'i4', 'i5'];

type Op =
  | { op: 'instruct'; n: number; delivery: 'moment' | 'queue' | 'steer' }
  | { op: 'edit'; n: number; text: string }
  | { op: 'move'; n: number; m: number; to?: 'front' | 'back' }
  | { op: 'promote'; n: number }
  | { op: 'hold'; paused: boolean }
  | { op: 'moment'; turn: 'opens' | 'within' | 'closes' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('instruct' as const),
    n: fc.nat(IDS.length - 1),
    delivery: fc.constantFrom('moment' as const, 'queue' as const, 'steer' as const),
  }),
  fc.record({
    op: fc.constant('edit' as const),
    n: fc.nat(IDS.length - 1),
    text: fc.constantFrom('alpha', 'beta', 'gamma'),
  }),
  fc.record(
    {
      op: fc.constant('move' as const),
      n: fc.nat(IDS.length - 1),
      m: fc.nat(IDS.length - 1),
      to: fc.constantFrom('front' as const, 'back' as const),
    },
    { requiredKeys: ['op', 'n', 'm'] },
  ),
  fc.record({ op: fc.constant('promote' as const), n: fc.nat(IDS.length - 1) }),
  fc.record({ op: fc.constant('hold' as const), paused: fc.boolean() }),
  fc.record({
    op: fc.constant('moment' as const),
    turn: fc.constantFrom('opens' as const, 'within' as const, 'closes' as const),
  }),
);

const cmd = (v: QueueVerb, id: string, data: Record<string, unknown>, at: number): SessionInput => ({
  type: 'command.queue',
  verb: v,
  at,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  command: command(who, SESSION, { type: `x.${VENDOR}.control.${v}`, id, data }),
});

function inputOf(o: Op, k: number, at: number): SessionInput {
  switch (o.op) {
    case 'instruct':
      return {
        type: 'command.instruct',
        at,
        gateOpen: true,
        deliveries: ['moment', 'steer', 'queue'],
        command: command(who, SESSION, {
          type: `x.${VENDOR}.control.instruct`,
          id: IDS[o.n]!,
          data: { text: `first ${IDS[o.n]!}`, ...(o.delivery === 'moment' ? {} : { delivery: o.delivery }) },
          capture: 'redacted',
        }),
      };
    case 'edit':
      return cmd('edit', `v${k}`, { instruction: IDS[o.n]!, text: `${o.text} ${k}` }, at);
    case 'move':
      return cmd('move', `v${k}`, { instruction: IDS[o.n]!, ...(o.to ? { to: o.to } : { before: IDS[o.m]! }) }, at);
    case 'promote':
      return cmd('promote', `v${k}`, { instruction: IDS[o.n]! }, at);
    case 'hold':
      return cmd('hold', `v${k}`, { paused: o.paused }, at);
    case 'moment':
      return { type: 'hook.moment', at, hookId: `h${k}`, eligible: true, turn: o.turn };
  }
}

test('random sequences: delivered in the queue order, at the newest version, once each; a paused queue lets only steers out', () => {
  fc.assert(
    fc.property(fc.array(opArb, { maxLength: 40 }), (ops) => {
      let snap: Snap = start();
      const newest = new Map<string, string>();
      const delivered = new Set<string>();
      let paused = false;
      ops.forEach((o, k) => {
        const at = 1000 + k * 10;
        const input = inputOf(o, k, at);
        const before = snap.context;
        const [next, outputs] = step(snap, input);
        snap = next;
        const acked = outputs.some((x) => x.type === 'control.accepted');
        if (acked && o.op === 'instruct') newest.set(IDS[o.n]!, `first ${IDS[o.n]!}`);
        if (acked && o.op === 'edit') newest.set(IDS[o.n]!, `${o.text} ${k}`);
        if (acked && o.op === 'hold') paused = o.paused;
        const reply = outputs.find((x) => x.type === 'reply.context');
        if (reply?.type !== 'reply.context') return;
        // In the queue's order as it stood: a subsequence of it.
        const order = before.queue.map((i) => i.id);
        const places = reply.ids.map((id) => order.indexOf(id));
        assert.ok(
          places.every((p, i) => p >= 0 && (i === 0 || p > places[i - 1]!)),
          `order ${reply.ids} in ${order}`,
        );
        assert.is(reply.text, reply.ids.map((id) => newest.get(id)).join('\n\n'), 'the newest version of each');
        if (paused)
          assert.ok(
            reply.ids.every((id) => before.queue.find((i) => i.id === id)?.delivery === 'steer'),
            'only a steer leaves a paused queue',
          );
        const [flushed, written] = step(snap, { type: 'reply.written', at: at + 1, hookId: reply.hookId });
        snap = flushed;
        for (const w of written)
          if (w.type === 'instruction.delivered') {
            assert.not.ok(delivered.has(w.cause), `${w.cause} delivered twice`);
            delivered.add(w.cause);
          }
      });
    }),
    { numRuns: 300 },
  );
});

test.run();
