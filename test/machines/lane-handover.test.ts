// D44 on a lane that takes a queued instruction only as a turn of its own (hand-over row `take: "one", as: "start"`, the
// Copilot server lane), stepped through the session machine (pure): what waits stays in the
// adapter's queue, and the first waiting one goes over as a start when a turn ends; nothing else
// leaves the queue at the started turn's opening moment until its receipt; a pause or a cancel's
// interrupted end hands nothing over. D50: a receipt that moved a shell command to the background
// says so on instruction.delivered.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import { run, types, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const LANE = 'server';
const sender = { agent: 'tester', host: 'test-host' };
const queued = (id: string): SessionInput => ({
  type: 'command.instruct',
  at: 1000,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  native: { deliveries: ['steer'], hint: 'host it with `aep-steer run copilot`' },
  command: command(sender, SESSION, {
    type: `x.${VENDOR}.control.instruct`,
    id,
    data: { text: `text of ${id}`, delivery: 'queue' },
    capture: 'redacted',
  }),
});
const hold = (paused: boolean): SessionInput => ({
  type: 'command.queue',
  at: 1200,
  verb: 'hold',
  gateOpen: true,
  command: command(sender, SESSION, {
    type: `x.${VENDOR}.control.hold`,
    id: `hold-${paused}`,
    data: { paused },
    capture: 'metadata',
  }),
});
const turnEnd = (interrupted = false): SessionInput => ({
  type: 'lane.turn',
  at: 2000,
  open: false,
  interrupted,
  handover: { take: 'one', as: 'start' },
});
const twoWaiting = (): Snap =>
  run([
    { type: 'lane.reach', at: 500, lane: LANE, reaches: true },
    { type: 'lane.turn', at: 600, open: true },
    queued('q1'),
    queued('q2'),
  ]).snap;

test('at a turn end the first waiting goes over as a start; the turn it opens takes nothing else before its receipt', () => {
  const ended = run([turnEnd()], twoWaiting());
  const steer = ended.outputs.find((o) => o.type === 'lane.steer');
  assert.equal(steer, { type: 'lane.steer', cause: 'q1', text: 'text of q1', lane: LANE, start: 'queue' });
  assert.equal(
    ended.snap.context.queue.map((i) => i.id),
    ['q2'],
    'the rest waits with the adapter',
  );
  const opening = run(
    [{ type: 'hook.moment', at: 2100, hookId: 'h-open', eligible: true, turn: 'opens', moment: 'userPromptSubmitted' }],
    ended.snap,
  );
  assert.equal(types(opening.outputs), ['reply.neutral'], 'q2 does not overtake q1');
  const got = run(
    [
      { type: 'lane.answered', at: 2050, commandId: 'q1', ok: true },
      {
        type: 'lane.delivered',
        at: 2200,
        commandId: 'q1',
        ref: 's:2',
        started: true,
        backgrounded: { command: 'sleep 9' },
      },
    ],
    opening.snap,
  );
  const delivered = got.outputs.find((o) => o.type === 'instruction.delivered');
  assert.ok(delivered !== undefined && delivered.type === 'instruction.delivered');
  assert.equal([delivered.cause, delivered.started, delivered.backgrounded], ['q1', true, { command: 'sleep 9' }]);
  const next = run([{ type: 'lane.turn', at: 2300, open: true }, turnEnd()], got.snap);
  assert.equal(
    next.outputs.filter((o) => o.type === 'lane.steer').map((o) => (o.type === 'lane.steer' ? o.cause : '')),
    ['q2'],
    'the next turn end hands over the next one',
  );
});

test('paused, or at the end of an interrupted turn, nothing is handed over', () => {
  const paused = run([hold(true), turnEnd()], twoWaiting());
  assert.not.ok(paused.outputs.some((o) => o.type === 'lane.steer'));
  assert.equal(paused.snap.context.queue.length, 2);
  const stopped = run([turnEnd(true)], twoWaiting());
  assert.not.ok(stopped.outputs.some((o) => o.type === 'lane.steer'));
  assert.equal(stopped.snap.context.queue.length, 2, 'a cancel keeps the queue');
});

test.run();
