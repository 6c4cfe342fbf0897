// D31 `queue` on a native lane with a next-turn queue of its own (the Claude Code stream-json
// lane), stepped through the session machine (pure): it goes to the lane, outlives the running
// turn's end, is delivered `queue` on the receipt, and is no echo; where the lanes have no queue
// (Codex's app-server) it stays with the hook lane.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import { run, types, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const LANE = 'stream-json';
const sender = { agent: 'tester', host: 'test-host' };
const send = (id: string, delivery: string, deliveries: string[]): SessionInput => ({
  type: 'command.instruct',
  at: 1000,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  native: { deliveries, hint: 'run it headless with `aep-steer run claude -p`' },
  command: command(sender, SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: { text: `text of ${id}`, delivery },
    capture: 'redacted',
  }),
});
const running = (): Snap =>
  run([
    { type: 'hook.moment', at: 600, hookId: 'h-open', eligible: true, turn: 'opens', moment: 'UserPromptSubmit' },
    { type: 'lane.reach', at: 500, lane: LANE, reaches: true },
  ]).snap;

test('queue goes to a lane that has a next-turn queue; it outlives the turn and is delivered `queue`', () => {
  const taken = run(
    [send('q1', 'queue', ['steer', 'queue']), { type: 'lane.answered', at: 1100, commandId: 'q1', ok: true }],
    running(),
  );
  assert.equal(types(taken.outputs), ['control.accepted', 'lane.steer']);
  assert.equal(taken.outputs[1], {
    type: 'lane.steer',
    cause: 'q1',
    text: 'text of q1',
    lane: LANE,
    delivery: 'queue',
  });
  assert.equal(taken.snap.context.queue, [], 'not also in the hook queue');
  assert.equal(taken.snap.context.echoes ?? [], [], 'its prompt opens a turn of its own: no echo');
  const ended = run([{ type: 'lane.turn', at: 2000, open: false, interrupted: false }], taken.snap);
  assert.equal(types(ended.outputs), [], 'the running turn ending does not drop it');
  const next = run([{ type: 'lane.delivered', at: 2500, commandId: 'q1', ref: 'uuid-q1' }], ended.snap);
  assert.equal(next.outputs[0], {
    type: 'instruction.delivered',
    eventType: `x.${VENDOR}.instruction.delivered`,
    cause: 'q1',
    queuedMs: 1500,
    delivery: 'queue',
    lane: LANE,
    ref: 'uuid-q1',
  });
  assert.equal(next.snap.context.laned, []);
});

test('a steer taken and unread when the turn ends is still dropped turn-ended beside a waiting queue', () => {
  const { outputs } = run(
    [
      send('s1', 'steer', ['steer', 'queue']),
      send('q1', 'queue', ['steer', 'queue']),
      { type: 'lane.answered', at: 1100, commandId: 's1', ok: true },
      { type: 'lane.answered', at: 1100, commandId: 'q1', ok: true },
      { type: 'lane.turn', at: 2000, open: false, interrupted: false },
    ],
    running(),
  );
  const drops = outputs.filter((o) => o.type === 'instruction.dropped');
  assert.equal(
    drops.map((o) => ('cause' in o ? o.cause : '')),
    ['s1'],
  );
});

test('where the lanes have no queue of their own, a queue stays with the hook lane', () => {
  const { snap, outputs } = run([send('q1', 'queue', ['steer'])], running());
  assert.equal(types(outputs), ['control.accepted']);
  assert.equal(
    snap.context.queue.map((i) => i.id),
    ['q1'],
  );
});

const withdraw = (id: string, instruction: string, agent = sender.agent): SessionInput => ({
  type: 'command.withdraw',
  at: 1500,
  gateOpen: true,
  laneWithdraws: [LANE],
  command: command({ ...sender, agent }, SESSION, {
    type: `x.${VENDOR}.control.withdraw`,
    id,
    data: { instruction },
  }),
});
const queued = (): Snap =>
  run(
    [send('q1', 'queue', ['steer', 'queue']), { type: 'lane.answered', at: 1100, commandId: 'q1', ok: true }],
    running(),
  ).snap;

test('withdraw of a queue the lane holds is asked of the lane; removed: accepted, and the drop names it', () => {
  const asked = run([withdraw('w1', 'q1'), withdraw('w1', 'q1')], queued());
  // No ack before the answer; the resend asks nothing more (its re-ack has no recorded ack to send yet).
  assert.equal(types(asked.outputs), ['lane.withdraw', 'control.reack']);
  const w = asked.outputs[0]!;
  assert.ok(w.type === 'lane.withdraw' && w.instruction === 'q1' && w.lane === LANE && w.cause === 'w1');
  const done = run([{ type: 'lane.withdrawn', at: 1600, commandId: 'w1', removed: true }], asked.snap);
  assert.equal(types(done.outputs), ['control.accepted', 'instruction.dropped']);
  assert.equal(done.outputs[1], {
    type: 'instruction.dropped',
    eventType: `x.${VENDOR}.instruction.dropped`,
    cause: 'w1',
    reason: 'withdrawn',
    subject: 'q1',
    decidedBy: { identity: 'tester', surface: 'cli' },
  });
  assert.equal(done.snap.context.laned, []);
  assert.equal(types(run([{ type: 'lane.delivered', at: 2000, commandId: 'q1', ref: 'u' }], done.snap).outputs), []);
});

test('withdraw the lane could not take back: refused already-delivered, the instruction keeps its course', () => {
  for (const removed of [false, undefined]) {
    const asked = run([withdraw('w1', 'q1')], queued());
    assert.equal(types(asked.outputs), ['lane.withdraw']);
    const answer: SessionInput = {
      type: 'lane.withdrawn',
      at: 1600,
      commandId: 'w1',
      ...(removed === undefined ? {} : { removed }),
    };
    const done = run([answer], asked.snap);
    assert.equal(types(done.outputs), ['control.rejected']);
    const r = done.outputs[0]!;
    // Read already: already-delivered; no answer: busy, send the withdraw again.
    assert.is(
      r.type === 'control.rejected' && r.rejection.rule,
      removed === false ? 'already-delivered' : 'transport-down',
    );
    assert.equal(
      done.snap.context.laned?.map((i) => [i.id, i.withdrawing]),
      [['q1', undefined]],
    );
    const later = run([{ type: 'lane.delivered', at: 2000, commandId: 'q1', ref: 'u' }], done.snap);
    assert.equal(types(later.outputs), ['instruction.delivered']);
  }
});

test('only the sender withdraws a queue the lane holds', () => {
  const { outputs } = run([withdraw('w1', 'q1', 'someone-else')], queued());
  assert.equal(types(outputs), ['control.rejected']);
  const r = outputs[0]!;
  assert.is(r.type === 'control.rejected' && r.rejection.rule, 'not-sender');
});

test('a cancel through the lane drops what it held for the next turn turn-ended (the lane took it back first)', () => {
  const cancel: SessionInput = {
    type: 'command.cancel',
    at: 1200,
    gateOpen: true,
    ready: true,
    lane: LANE,
    command: command(sender, SESSION, { type: 'control.cancel', id: 'x1', data: { scope: 'run' } }),
  };
  const { outputs, snap } = run(
    [
      cancel,
      { type: 'cancel.answered', at: 1300, commandId: 'x1', ok: true },
      { type: 'lane.turn', at: 1400, open: false, interrupted: true },
    ],
    queued(),
  );
  const drop = outputs.find((o) => o.type === 'instruction.dropped');
  assert.ok(drop?.type === 'instruction.dropped' && drop.cause === 'q1' && drop.reason === 'turn-ended');
  assert.ok(outputs.some((o) => o.type === 'run.cancelled'));
  assert.equal(snap.context.laned, []);
});

test.run();
