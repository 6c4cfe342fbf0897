// D43 stepped through the session machine (pure): `idle` on instruct while no turn runs (refuse,
// wait, start), a start handed to the lane that can begin a turn, its receipt delivered with
// `started`, a start that found a turn begun meanwhile, and the refusals with their own codes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { LaneStarts } from '../../src/machines/command-inputs.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { run, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const NATIVE = { deliveries: ['steer'], hint: 'start it with `aep-steer run codex`' };
const STARTS: LaneStarts = { lanes: ['app-server'], hint: 'start it with `aep-steer run codex`' };
const sender = { agent: 'tester', host: 'test-host' };

const send = (
  id: string,
  data: Record<string, unknown>,
  o: { starts?: LaneStarts | undefined; at?: number; text?: string } = {},
): SessionInput => ({
  type: 'command.instruct',
  at: o.at ?? 1000,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  native: NATIVE,
  ...('starts' in o ? (o.starts === undefined ? {} : { starts: o.starts }) : { starts: STARTS }),
  command: command(sender, SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: { text: o.text ?? `text of ${id}`, ...data },
    capture: 'redacted',
  }),
});
const reach: SessionInput = { type: 'lane.reach', at: 500, lane: 'app-server', reaches: true };
const turn = (open: boolean, at: number): SessionInput =>
  open ? { type: 'lane.turn', at, open: true } : { type: 'lane.turn', at, open: false, interrupted: false };
const last = (outputs: readonly SessionOutput[]): SessionOutput => outputs.at(-1)!;
const rejection = (outputs: readonly SessionOutput[]) => {
  const o = last(outputs);
  return o.type === 'control.rejected' ? [o.rejection.reason, o.rejection.rule, o.rejection.detail] : o.type;
};

test('start on an idle session reached by a lane that can: handed to it as a start, acked at once', () => {
  const r = run([reach, send('c1', { idle: 'start' })]);
  const types = r.outputs.map((o) => o.type);
  assert.equal(types.slice(-2), ['control.accepted', 'lane.steer']);
  const out = last(r.outputs);
  assert.ok(out.type === 'lane.steer');
  assert.equal([out.lane, out.start, out.text], ['app-server', 'steer', 'text of c1']);
});

test('its receipt delivers it with started: true and the turn as ref; the started turn is no echo of a steer', () => {
  const asked = run([reach, send('c1', { idle: 'start' })]);
  const taken = run([{ type: 'lane.answered', at: 1100, commandId: 'c1', ok: true }], asked.snap);
  const got = run([{ type: 'lane.delivered', at: 1300, commandId: 'c1', ref: 'turn-9' }], taken.snap);
  const d = last(got.outputs);
  assert.ok(d.type === 'instruction.delivered');
  assert.equal([d.started, d.ref, d.lane, d.delivery], [true, 'turn-9', 'app-server', undefined]);
  assert.equal((got.snap as Snap).context.echoes ?? [], [], 'its prompt opens its own turn');
});

test('a start that found a turn begun meanwhile is delivered as what it became, started: false', () => {
  const asked = run([reach, send('c2', { idle: 'start', delivery: 'steer' })]);
  const taken = run([{ type: 'lane.answered', at: 1100, commandId: 'c2', ok: true, became: 'steer' }], asked.snap);
  const got = run([{ type: 'lane.delivered', at: 1300, commandId: 'c2', ref: 'turn-8' }], taken.snap);
  const d = last(got.outputs);
  assert.ok(d.type === 'instruction.delivered');
  assert.equal([d.started, d.delivery, d.ref], [false, 'steer', 'turn-8']);
  // The lane's own word in the receipt wins over its answer (a server that steered a busy thread).
  const server = run(
    [{ type: 'lane.delivered', at: 1300, commandId: 'c1', ref: 't', started: false }],
    run([reach, send('c1', { idle: 'start' })]).snap,
  );
  const s = last(server.outputs);
  assert.ok(s.type === 'instruction.delivered' && s.started === false && s.delivery === 'steer');
});

test('a start sent while the last turn was still ending awaits its own turn: not dropped at that end', () => {
  // The hooks said the turn closed; the lane had not seen its end yet, and took the text as is.
  const asked = run([reach, send('c9', { idle: 'start' })]);
  const taken = run([{ type: 'lane.answered', at: 1100, commandId: 'c9', ok: true }], asked.snap);
  const ended = run([turn(false, 1150)], taken.snap);
  assert.not.ok(
    ended.outputs.some((o) => o.type === 'instruction.dropped'),
    'the end of the turn before is not its end',
  );
  const got = run([{ type: 'lane.delivered', at: 1300, commandId: 'c9', ref: 's:2', started: true }], ended.snap);
  const d = last(got.outputs);
  assert.ok(d.type === 'instruction.delivered' && d.started === true && d.ref === 's:2');
});

test('while a turn runs, idle changes nothing: a start is an ordinary steer into the turn', () => {
  const r = run([reach, turn(true, 700), send('c3', { idle: 'start', delivery: 'steer' })]);
  const out = last(r.outputs);
  assert.ok(out.type === 'lane.steer');
  assert.is(out.start, undefined);
});

test('no lane that can start reaches the session: refused start-unsupported with the way that would', () => {
  const r = run([send('c4', { idle: 'start' })]);
  assert.equal(rejection(r.outputs), [
    'unsupported',
    'start-unsupported',
    'no way into this session can start a turn: start it with `aep-steer run codex`',
  ]);
  const none = run([send('c5', { idle: 'start' }, { starts: undefined })]);
  assert.equal(rejection(none.outputs), [
    'unsupported',
    'start-unsupported',
    'no way into this session can start a turn',
  ]);
});

test("the vendor's channel reaches every session: a start goes to it without a reach", () => {
  const r = run([send('c6', { idle: 'start' }, { starts: { lanes: [], channel: 'hub', hint: 'x' } })]);
  const out = last(r.outputs);
  assert.ok(out.type === 'lane.steer' && out.lane === 'hub' && out.start === 'steer');
});

test('the defaults are unchanged: a steer is refused session-idle, a queue and a moment wait', () => {
  const steer = run([reach, send('c7', { delivery: 'steer' })]);
  assert.equal(rejection(steer.outputs).slice(0, 2), ['refused', 'session-idle']);
  const queued = run([reach, send('c8', { delivery: 'queue' }), send('c9', {})]);
  assert.equal(
    queued.outputs.filter((o) => o.type === 'control.accepted').length,
    2,
    'both accepted to wait for the next turn',
  );
  assert.is((queued.snap as Snap).context.queue.length, 2);
});

test('idle wait on a steer waits in the queue for the next turn; idle refuse on a queue is refused', () => {
  const waits = run([reach, send('d1', { delivery: 'steer', idle: 'wait' })]);
  assert.is(last(waits.outputs).type, 'control.accepted');
  assert.equal(
    (waits.snap as Snap).context.queue.map((i) => i.id),
    ['d1'],
    'held for a moment of the next turn, not handed to the lane',
  );
  const refuses = run([reach, send('d2', { delivery: 'queue', idle: 'refuse' })]);
  assert.equal(rejection(refuses.outputs).slice(0, 2), ['refused', 'session-idle']);
});

test('bad input gets its own code: an unknown idle word, a start with empty text', () => {
  const word = run([reach, send('e1', { idle: 'later' })]);
  assert.equal(rejection(word.outputs), ['invalid', 'idle-invalid', 'idle must be one of refuse, wait, start']);
  const empty = run([reach, send('e2', { idle: 'start' }, { text: '' })]);
  assert.equal(rejection(empty.outputs).slice(0, 2), ['invalid', 'text-empty']);
});

test.run();
