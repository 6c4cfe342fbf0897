// D44 on a lane that takes a `queue` only between turns (opencode's server lane, hand-over row `all` as `queue`),
// stepped through the session machine (pure): a queue sent while the lane's turn runs waits in the
// session's own queue, so edit keeps its place, move reorders and hold pauses it; a turn's normal
// end hands what waits to the lane in order with the latest text, unless paused; a resume with no
// turn running hands it over then; a stopped turn hands nothing; one sent while idle goes at once;
// a resend is re-acked and handed over once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { laneSteps, opened, reach, running, LANE } from '../support/lane-steps.js';
import { run, types } from '../support/session-steps.js';

const HANDOVER = { take: 'all', as: 'queue' } as const;
const NATIVE = { deliveries: ['steer', 'queue'], hint: 'host the session on `opencode serve`', handover: HANDOVER };
const steps = laneSteps(NATIVE, { handover: HANDOVER });
const { verb, ended } = steps;
const send = (id: string, text = `text of ${id}`) => steps.send(id, { text, delivery: 'queue' });
const handed = (outputs: readonly { type: string }[]) =>
  outputs
    .filter((o) => o.type === 'lane.steer')
    .map((o) => {
      const s = o as unknown as { cause: string; text: string; delivery?: string; lane: string };
      return [s.cause, s.text, s.delivery, s.lane];
    });

test('queued during a turn: edited in place, moved, paused; the end hands nothing; the resume hands them over in the new order', () => {
  const queued = run([send('q1'), send('q2'), send('q3')], running());
  assert.equal(types(queued.outputs), ['control.accepted', 'control.accepted', 'control.accepted']);
  assert.equal(
    queued.snap.context.queue.map((i) => i.id),
    ['q1', 'q2', 'q3'],
    'they wait in the session queue',
  );
  const changed = run(
    [
      verb('e1', 'edit', { instruction: 'q2', text: 'q2 edited' }),
      verb('m1', 'move', { instruction: 'q3', to: 'front' }),
      verb('h1', 'hold', { paused: true }),
    ],
    queued.snap,
  );
  assert.equal(
    changed.outputs.filter((o) => o.type === 'control.accepted').map((o) => (o as { cause: string }).cause),
    ['e1', 'm1', 'h1'],
  );
  assert.equal(
    changed.snap.context.queue.map((i) => [i.id, i.text]),
    [
      ['q3', 'text of q3'],
      ['q1', 'text of q1'],
      ['q2', 'q2 edited'],
    ],
  );
  const end = run([ended()], changed.snap);
  assert.equal(handed(end.outputs), [], 'paused: nothing handed over at the end');
  assert.is(end.snap.context.queue.length, 3);
  const resumed = run([verb('h2', 'hold', { paused: false })], end.snap);
  assert.equal(handed(resumed.outputs), [
    ['q3', 'text of q3', 'queue', LANE],
    ['q1', 'text of q1', 'queue', LANE],
    ['q2', 'q2 edited', 'queue', LANE],
  ]);
  assert.equal(resumed.snap.context.queue, [], 'the queue is handed over');
  const resend = run([send('q1')], resumed.snap);
  assert.equal(types(resend.outputs), ['control.reack'], 'a resend is re-acked, never handed over twice');
  const late = run([verb('e2', 'edit', { instruction: 'q1', text: 'too late' })], resumed.snap);
  assert.equal((late.outputs[0] as { rejection?: { rule: string } }).rejection?.rule, 'already-delivered');
});

test("a turn's normal end hands the queue over; a stopped one hands nothing and the next end does", () => {
  const queued = run([send('q1'), send('q2')], running());
  const stopped = run([ended(true)], queued.snap);
  assert.equal(handed(stopped.outputs), [], 'a stop leaves what waits');
  assert.equal(
    stopped.snap.context.queue.map((i) => i.id),
    ['q1', 'q2'],
  );
  const next = run([opened, ended()], stopped.snap);
  assert.equal(handed(next.outputs), [
    ['q1', 'text of q1', 'queue', LANE],
    ['q2', 'text of q2', 'queue', LANE],
  ]);
});

test('a queue sent while no turn runs goes to the lane at once; a resume while a turn runs waits for its end', () => {
  const idle = run([send('q0')], run([reach]).snap);
  assert.equal(handed(idle.outputs), [['q0', 'text of q0', 'queue', LANE]]);
  const paused = run(
    [verb('h1', 'hold', { paused: true }), send('q1'), verb('h2', 'hold', { paused: false })],
    running(),
  );
  assert.equal(handed(paused.outputs), [], 'the turn still runs');
  assert.equal(handed(run([ended()], paused.snap).outputs), [['q1', 'text of q1', 'queue', LANE]]);
});

test.run();
