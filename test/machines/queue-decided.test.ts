// D46 on the queue verbs (D44): the settled event of an edit, move, promote or hold, and each
// withdrawal a `control.cancel {clear: true}` makes, names who decided it: the relay-checked
// sender, the surface the face said, and the paired device when there is one. A verb naming a
// surface it may not is refused with the surface code and changes nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command, SessionEmitter } from '../../src/protocol/index.js';
import type { QueueVerb } from '../../src/machines/command-inputs.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { stamp, type StampSource } from '../../src/streams/stamp.js';
import { fakeSurface } from '../support/fake-surface.js';
import { run, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const who = (agent = 'alice') => ({ agent, host: 'test-host' });
const PHONE = { surface: 'console', device: 'pixel-7' };

const send = (id: string): SessionInput => ({
  type: 'command.instruct',
  at: 1000,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  command: command(who(), SESSION, { type: `x.${VENDOR}.control.instruct`, id, data: { text: `text of ${id}` } }),
});
const verb = (v: QueueVerb, id: string, data: Record<string, unknown>, agent?: string): SessionInput => ({
  type: 'command.queue',
  verb: v,
  at: 1500,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  command: command(who(agent), SESSION, { type: `x.${VENDOR}.control.${v}`, id, data }),
});
const opens: SessionInput = { type: 'hook.moment', at: 1200, hookId: 'o1', eligible: false, turn: 'opens' };
const three = (): Snap => run([send('a'), send('b'), send('c')]).snap;
const then = (snap: Snap, ...inputs: SessionInput[]) => run(inputs, snap);

const settled = (outputs: readonly SessionOutput[]) => {
  const o = outputs.find((x) => x.type === 'queue.changed');
  if (o?.type !== 'queue.changed') throw new Error(`no queue.changed in ${outputs.map((x) => x.type).join(', ')}`);
  return o;
};

test('each accepted queue verb settles with decided_by: the sender, its surface, the paired device', () => {
  const cases: [QueueVerb, Record<string, unknown>][] = [
    ['edit', { instruction: 'b', text: 'new text' }],
    ['move', { instruction: 'c', to: 'front' }],
    ['promote', { instruction: 'a' }],
    ['hold', { paused: true }],
  ];
  for (const [v, data] of cases) {
    const snap = v === 'promote' ? then(three(), opens).snap : three();
    const r = then(snap, verb(v, `v-${v}`, { ...data, ...PHONE }));
    const o = settled(r.outputs);
    assert.equal(o.decidedBy, { identity: 'alice', surface: 'console', device: 'pixel-7' }, v);
    assert.is(o.cause, `v-${v}`);
  }
  // No surface named: a command line's verb (D46's default).
  const plain = settled(then(three(), verb('move', 'm2', { instruction: 'a', to: 'back' })).outputs);
  assert.equal(plain.decidedBy, { identity: 'alice', surface: 'cli' });
});

test('a verb naming a reserved or unknown surface, or a bad device, is refused and changes nothing', () => {
  const bad: [Record<string, unknown>, string][] = [
    [{ surface: 'policy' }, 'surface-reserved'],
    [{ surface: 'timeout' }, 'surface-reserved'],
    [{ surface: 'pager' }, 'surface-invalid'],
    [{ surface: 'console', device: '' }, 'surface-invalid'],
    [{ surface: 'console', device: 'x'.repeat(65) }, 'surface-invalid'],
  ];
  for (const [claim, rule] of bad) {
    const before = three();
    const r = then(before, verb('edit', 'e1', { instruction: 'a', text: 'changed', ...claim }));
    const rejected = r.outputs.find((o) => o.type === 'control.rejected');
    assert.is(rejected?.type === 'control.rejected' ? rejected.rejection.rule : undefined, rule, JSON.stringify(claim));
    assert.not.ok(r.outputs.some((o) => o.type === 'queue.changed'));
    assert.equal(r.snap.context.queue, before.context.queue);
  }
  const held = then(three(), verb('hold', 'h1', { paused: true, surface: 'agent' }));
  assert.is(held.snap.context.paused, undefined, 'a refused hold leaves the queue running');
});

/** `agent`'s control.cancel of the running turn, answered as the lane answers it. */
function cancelled(id: string, agent: string, data: Record<string, unknown>, ok = true) {
  const asked = then(three(), opens, {
    type: 'command.cancel',
    at: 1500,
    gateOpen: true,
    ready: true,
    command: command(who(agent), SESSION, { type: 'control.cancel', id, data: { scope: 'run', ...data } }),
  });
  const answered = then(asked.snap, { type: 'cancel.answered', at: 1700, commandId: id, ok });
  return answered.outputs.flatMap((o) => (o.type === 'instruction.dropped' ? [[o.subject, o.decidedBy]] : []));
}

test('cancel {clear: true}: each withdrawal names who asked for the clear; a plain cancel withdraws nothing', () => {
  const carol = { identity: 'carol', surface: 'mcp' };
  assert.equal(cancelled('k1', 'carol', { clear: true, surface: 'mcp' }), [
    ['a', carol],
    ['b', carol],
    ['c', carol],
  ]);
  assert.equal(cancelled('k2', 'carol', { surface: 'mcp' }), []);
  assert.equal(cancelled('k3', 'carol', { clear: true }, false), [], 'a refused cancel clears nothing');
});

test('on the stream: the settled event carries decided_by in its data beside what it settled', () => {
  const emitter = new SessionEmitter({ agent: VENDOR, session: SESSION, epoch: 1, startSeq: 0 });
  const source: StampSource = { emitter: () => emitter, ack: () => undefined, hook: () => undefined };
  const s = fakeSurface();
  const surface = { contextReply: s.contextReply.bind(s), decisionReply: s.decisionReply.bind(s), notice: false };
  const r = then(three(), verb('edit', 'e1', { instruction: 'b', text: 'new', ...PHONE }));
  const out = stamp(SESSION, source, { type: 'ttl.tick', at: 2000, ttlMs: 1000 }, r.outputs, surface);
  const edited = out.events.find((e) => e.type === `x.${VENDOR}.instruction.edited`);
  assert.equal(edited?.data, {
    version: 2,
    decided_by: { identity: 'alice', surface: 'console', device: 'pixel-7' },
  });
  assert.is(edited?.subject, 'b');
});

test.run();
