// D44: one hand-over for every lane that cannot change what it holds, stepped through the session
// machine (pure). The lane's row alone decides how much goes and as what: all at once as starts
// (the Claude Code stream-json lane), the head as a next-turn queue (a row no lane has now), the head
// as a start (Copilot's server); a resume with no turn running hands over at once; a stopped turn hands
// nothing and drops nothing a row keeps.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { QueueHandover } from '../../src/machines/vendor-inputs.js';
import { run, types, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const sender = { agent: 'tester', host: 'test-host' };
const ALL_START: QueueHandover = { take: 'all', as: 'start' };
const ONE_QUEUE: QueueHandover = { take: 'one', as: 'queue' };
const ONE_START: QueueHandover = { take: 'one', as: 'start' };
const native = (row: QueueHandover, deliveries = ['steer', 'queue']) => ({
  deliveries,
  hint: 'run it on the lane',
  handover: row,
});
/** `laneQueues` false: the lane takes no `queue` of its own (Copilot's), so one sent while idle waits here too. */
const queued = (id: string, row: QueueHandover, laneQueues = true): SessionInput => ({
  type: 'command.instruct',
  at: 1000,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  native: native(row, laneQueues ? ['steer', 'queue'] : ['steer']),
  command: command(sender, SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: { text: `text of ${id}`, delivery: 'queue' },
    capture: 'redacted',
  }),
});
const hold = (paused: boolean, row: QueueHandover): SessionInput => ({
  type: 'command.queue',
  at: 1200,
  verb: 'hold',
  gateOpen: true,
  native: native(row),
  command: command(sender, SESSION, {
    type: `x.${VENDOR}.control.hold`,
    id: `hold-${paused}`,
    data: { paused },
    capture: 'metadata',
  }),
});
const turnEnd = (row: QueueHandover | undefined, interrupted = false): SessionInput => ({
  type: 'lane.turn',
  at: 2000,
  open: false,
  interrupted,
  ...(row === undefined ? {} : { handover: row }),
});
const cancelCmd = command(sender, SESSION, {
  type: 'control.cancel',
  id: 'c-1',
  data: { scope: 'run' },
  capture: 'metadata',
});

const steers = (outputs: readonly { type: string }[]) =>
  outputs
    .filter((o) => o.type === 'lane.steer')
    .map((o) => {
      const s = o as unknown as { cause: string; delivery?: string; start?: string };
      return [s.cause, s.delivery ?? s.start];
    });
const threeWaiting = (row: QueueHandover): Snap =>
  run([
    { type: 'lane.reach', at: 500, lane: 'lane', reaches: true },
    { type: 'lane.turn', at: 600, open: true },
    queued('q1', row),
    queued('q2', row),
    queued('q3', row),
  ]).snap;

test('queued while a turn runs, every item waits with the adapter whatever the row', () => {
  for (const row of [ALL_START, ONE_QUEUE, ONE_START]) {
    const snap = threeWaiting(row);
    assert.equal(
      snap.context.queue.map((i) => i.id),
      ['q1', 'q2', 'q3'],
    );
    assert.equal(snap.context.laned ?? [], []);
  }
});

test('all at once as starts: the turn end hands every one over in order; the opening moment takes nothing more', () => {
  const ended = run([turnEnd(ALL_START)], threeWaiting(ALL_START));
  assert.equal(steers(ended.outputs), [
    ['q1', 'queue'],
    ['q2', 'queue'],
    ['q3', 'queue'],
  ]);
  assert.equal(ended.snap.context.queue, []);
  const late = run([queued('q4', ALL_START, false)], ended.snap);
  assert.equal(
    late.snap.context.queue.map((i) => i.id),
    ['q4'],
  );
  const opening = run(
    [{ type: 'hook.moment', at: 2100, hookId: 'h', eligible: true, turn: 'opens', moment: 'UserPromptSubmit' }],
    late.snap,
  );
  assert.equal(types(opening.outputs), ['reply.neutral'], 'nothing overtakes what was handed over');
});

test('the head as a next-turn queue: one per turn end, the next only after the receipt and the next end', () => {
  const ended = run([turnEnd(ONE_QUEUE)], threeWaiting(ONE_QUEUE));
  assert.equal(steers(ended.outputs), [['q1', 'queue']]);
  const early = run([{ type: 'lane.turn', at: 2050, open: true }, turnEnd(ONE_QUEUE)], ended.snap);
  assert.equal(steers(early.outputs), [], 'an end before its receipt hands nothing more');
  const got = run(
    [
      { type: 'lane.answered', at: 2100, commandId: 'q1', ok: true },
      { type: 'lane.delivered', at: 2200, commandId: 'q1', ref: 'p-1' },
      { type: 'lane.turn', at: 2300, open: true },
      turnEnd(ONE_QUEUE),
    ],
    ended.snap,
  );
  assert.equal(steers(got.outputs), [['q2', 'queue']]);
  const d = got.outputs.find((o) => o.type === 'instruction.delivered') as { delivery?: string } | undefined;
  assert.is(d?.delivery, 'queue');
});

test('a resume with no turn running hands over at once (the head as a start on a one-per-turn row)', () => {
  const paused = run([hold(true, ONE_START), turnEnd(ONE_START)], threeWaiting(ONE_START));
  assert.equal(steers(paused.outputs), [], 'paused: nothing at the end');
  const resumed = run([hold(false, ONE_START)], paused.snap);
  assert.equal(steers(resumed.outputs), [['q1', 'queue']]);
  assert.equal(
    resumed.snap.context.queue.map((i) => i.id),
    ['q2', 'q3'],
  );
});

test('a stopped turn hands nothing; a queue the lane holds is kept on a lane with a row, dropped on one without', () => {
  const stopped = run([turnEnd(ALL_START, true)], threeWaiting(ALL_START));
  assert.equal(steers(stopped.outputs), []);
  assert.is(stopped.snap.context.queue.length, 3, 'a cancel keeps the queue');
  // Sent while idle, it went to the lane at once, into the vendor's own next-turn queue.
  const held = (row: QueueHandover | undefined) =>
    run(
      [
        { type: 'lane.answered', at: 700, commandId: 'q0', ok: true },
        { type: 'lane.turn', at: 800, open: true },
        { type: 'command.cancel', at: 900, gateOpen: true, ready: true, lane: 'lane', command: cancelCmd },
        {
          type: 'lane.turn',
          at: 1000,
          open: false,
          interrupted: true,
          ...(row === undefined ? {} : { handover: row }),
        },
      ],
      run([{ type: 'lane.reach', at: 500, lane: 'lane', reaches: true }, queued('q0', ALL_START)]).snap,
    );
  const kept = held(ALL_START);
  assert.not.ok(kept.outputs.some((o) => o.type === 'instruction.dropped'));
  assert.equal(
    (kept.snap.context.laned ?? []).map((i) => i.id),
    ['q0'],
  );
  const dropped = held(undefined);
  assert.ok(dropped.outputs.some((o) => o.type === 'instruction.dropped'));
});

test.run();
