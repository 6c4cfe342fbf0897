// D31 `queue` on a session whose hook lane honours `moment` only and whose native lane's queue is
// the vendor's prompt queue (Qwen Code's `qwen serve`: a prompt sent while one runs waits for the
// next turn, one sent while none runs starts it), stepped through the session machine (pure):
// accepted with or without a running turn and handed to the lane, kept through the running turn's
// end (the lane keeps what it took), delivered `queue` through the lane on the receipt; refused
// where no lane reaches the session; and the session-idle advice names only what the session takes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { steerIdle } from '../../src/machines/gate.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import { idle, laneSteps, opened, running, LANE } from '../support/lane-steps.js';
import { run, types, VENDOR } from '../support/session-steps.js';

const NATIVE = { deliveries: ['steer', 'queue'], hint: 'host the session on a `qwen serve` daemon' };
const steps = laneSteps(NATIVE, { keepsUnread: true });
const { ended } = steps;
const send = (id: string, delivery: string, native = NATIVE) =>
  steps.send(id, { text: `text of ${id}`, delivery }, native);
const answered = (commandId: string): SessionInput => ({ type: 'lane.answered', at: 1100, commandId, ok: true });

test('queue while the lane shows a turn running goes to the lane, outlives that turn, and is delivered `queue` on the receipt', () => {
  const taken = run([send('q1', 'queue'), answered('q1')], running());
  assert.equal(types(taken.outputs), ['control.accepted', 'lane.steer']);
  assert.equal(taken.outputs[1], {
    type: 'lane.steer',
    cause: 'q1',
    text: 'text of q1',
    lane: LANE,
    delivery: 'queue',
  });
  assert.equal(taken.snap.context.queue, [], 'not in the hook queue');
  const after = run([ended()], taken.snap);
  assert.equal(types(after.outputs), [], "the running turn's end drops nothing");
  const got = run([{ type: 'lane.delivered', at: 2100, commandId: 'q1', ref: 'prompt-7' }], after.snap);
  assert.equal(got.outputs, [
    {
      type: 'instruction.delivered',
      eventType: `x.${VENDOR}.instruction.delivered`,
      cause: 'q1',
      queuedMs: 1100,
      delivery: 'queue',
      lane: LANE,
      ref: 'prompt-7',
    },
  ]);
  assert.equal(got.snap.context.laned, []);
});

test('queue with no turn running goes to the lane all the same (its prompt is the turn it starts); steer is refused', () => {
  const taken = run([send('q1', 'queue'), answered('q1')], idle());
  assert.equal(types(taken.outputs), ['control.accepted', 'lane.steer']);
  // Its start (the turn it opens) and its receipt may come in either order.
  const got = run(
    [opened, { type: 'lane.delivered', at: 1200, commandId: 'q1', ref: 'prompt-8' }, ended()],
    taken.snap,
  );
  assert.equal(types(got.outputs), ['instruction.delivered']);
  const steer = run([send('s1', 'steer')], idle());
  const r = steer.outputs[0]!;
  assert.ok(r.type === 'control.rejected' && r.rejection.rule === 'session-idle');
});

test('no lane reaching the session: queue is refused delivery-unsupported, saying how to get the lane', () => {
  const { outputs } = run([send('q1', 'queue')]);
  const r = outputs[0]!;
  assert.ok(r.type === 'control.rejected', JSON.stringify(outputs));
  assert.equal(r.rejection, {
    reason: 'unsupported',
    rule: 'delivery-unsupported',
    detail: `this session cannot take delivery "queue": it accepts moment; ${NATIVE.hint}`,
  });
});

test('a lane without a queue of its own leaves queue to the hook lane, which refuses it here', () => {
  const { outputs } = run([send('q1', 'queue', { ...NATIVE, deliveries: ['steer'] })], running());
  const r = outputs[0]!;
  assert.ok(r.type === 'control.rejected' && r.rejection.rule === 'delivery-unsupported');
});

test('session-idle advice names only the deliveries the session takes', () => {
  const detail = (honoured: string[]) => {
    const r = steerIdle(honoured);
    return [r.rule, r.detail];
  };
  const words = 'no turn is running, and a steer never starts one';
  assert.equal(detail(['moment', 'steer', 'queue']), [
    'session-idle',
    `${words}: send it with delivery queue, or as a moment`,
  ]);
  assert.equal(detail(['moment', 'steer']), ['session-idle', `${words}: send it as a moment`]);
  assert.equal(steerIdle(['steer']).detail, `${words}: send it while the agent works`);
});

test.run();
