// D44 hand-over cases stepped through the session machine (pure, no time), one per lane row:
// - all at once into the vendor's next-turn queue (Qwen Code serve): after an edit and a move, one
//   step hands every waiting one over in the queue's order with its newest text, and each gets a
//   delivered event of its own, caused by it, from the one prompt's receipt;
// - the head as a start (Copilot's server): a resume while the hooks say the turn ended but the
//   lane has not seen it end waits for the lane's end, so it goes as a start and is delivered
//   `started: true`, never queued into the turn the vendor is closing;
// - all at once as a start (Claude Code stream-json): what a cancel kept goes with the next start
//   through the lane, ahead of the start's text, and that turn's opening hook moment carries none.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import type { QueueHandover } from '../../src/machines/vendor-inputs.js';
import { run, types, SESSION, VENDOR, type Snap } from '../support/session-steps.js';

const LANE = 'lane';
const from = { agent: 'tester', host: 'test-host' };

/** A lane of this row reaches the session; `laneQueues`: the lane takes a `queue` of its own. */
const rowed = (row: QueueHandover, laneQueues: boolean) => ({
  native: { deliveries: laneQueues ? ['steer', 'queue'] : ['steer'], hint: 'use the lane', handover: row },
  starts: { lanes: [LANE], hint: 'use the lane' },
});
const cmd = (type: string, id: string, data: Record<string, unknown>) =>
  command(from, SESSION, { type: `x.${VENDOR}.control.${type}`, id, data, capture: 'redacted' });
const instruct = (
  row: QueueHandover,
  laneQueues: boolean,
  id: string,
  data: Record<string, unknown>,
): SessionInput => ({
  type: 'command.instruct',
  at: 1000,
  gateOpen: true,
  deliveries: ['moment', 'steer', 'queue'],
  ...rowed(row, laneQueues),
  command: cmd('instruct', id, { text: `text of ${id}`, ...data }),
});
const verb = (
  row: QueueHandover,
  v: 'edit' | 'move' | 'hold',
  id: string,
  data: Record<string, unknown>,
): SessionInput => ({
  type: 'command.queue',
  verb: v,
  at: 1100,
  gateOpen: true,
  ...rowed(row, true),
  command: cmd(v, id, data),
});
const laneTurn = (open: boolean, row: QueueHandover, interrupted = false): SessionInput => ({
  type: 'lane.turn',
  at: 1500,
  open,
  ...(open ? {} : { interrupted, handover: row }),
});
const hook = (hookId: string, turn: 'opens' | 'closes', eligible: boolean): SessionInput => ({
  type: 'hook.moment',
  at: 1600,
  hookId,
  eligible,
  turn,
  moment: turn === 'opens' ? 'UserPromptSubmit' : 'Stop',
});
/** The lane steps out of a step: [command, delivery or start, text]. */
const handed = (outputs: readonly SessionOutput[]) =>
  outputs.flatMap((o) => {
    if (o.type !== 'lane.steer') return [];
    const s = o as unknown as { cause: string; delivery?: string; start?: string; text: string };
    return [[s.cause, s.delivery ?? `start ${s.start}`, s.text]];
  });
const delivered = (outputs: readonly SessionOutput[]) =>
  outputs.filter((o) => o.type === 'instruction.delivered') as unknown as Record<string, unknown>[];
/** A turn runs on the lane and the hooks, with these queued during it. */
const during = (row: QueueHandover, laneQueues: boolean, ids: string[]): Snap =>
  run([
    { type: 'lane.reach', at: 500, lane: LANE, reaches: true },
    laneTurn(true, row),
    hook('h-open', 'opens', false),
    ...ids.map((id) => instruct(row, laneQueues, id, { delivery: 'queue' })),
  ]).snap;

test('all into the next-turn queue: one step hands the three over in the new order, edited; each has its own receipt', () => {
  const row: QueueHandover = { take: 'all', as: 'queue' };
  const changed = run(
    [
      verb(row, 'edit', 'e-1', { instruction: 'q2', text: 'q2, edited' }),
      verb(row, 'move', 'm-1', { instruction: 'q3', to: 'front' }),
    ],
    during(row, true, ['q1', 'q2', 'q3']),
  );
  const ended = run([laneTurn(false, row)], changed.snap);
  assert.equal(handed(ended.outputs), [
    ['q3', 'queue', 'text of q3'],
    ['q1', 'queue', 'text of q1'],
    ['q2', 'queue', 'q2, edited'],
  ]);
  assert.equal(ended.snap.context.queue, []);
  // The lane sends them as one prompt: each answer and receipt names that prompt.
  const got = run(
    ['q3', 'q1', 'q2'].flatMap((id): SessionInput[] => [
      { type: 'lane.answered', at: 1700, commandId: id, ok: true },
      { type: 'lane.delivered', at: 1800, commandId: id, ref: 'p-9' },
    ]),
    ended.snap,
  );
  const d = delivered(got.outputs);
  assert.equal(
    d.map((e) => [e['cause'], e['delivery'], e['lane'], e['ref']]),
    [
      ['q3', 'queue', LANE, 'p-9'],
      ['q1', 'queue', LANE, 'p-9'],
      ['q2', 'queue', LANE, 'p-9'],
    ],
  );
  assert.is(d[2]!['version'], 2, 'the edited text went');
  assert.equal(got.snap.context.laned ?? [], []);
});

test('the head as a start: a resume while the vendor still closes the turn waits for its end, then starts the next turn', () => {
  const row: QueueHandover = { take: 'one', as: 'start' };
  const closing = run(
    [verb(row, 'hold', 'hold-1', { paused: true }), hook('h-stop', 'closes', false)],
    during(row, false, ['q1']),
  );
  assert.is(closing.snap.context.turnOpen, false, 'the hooks say the turn ended');
  const resumed = run([verb(row, 'hold', 'hold-2', { paused: false })], closing.snap);
  assert.ok(types(resumed.outputs).includes('control.accepted'));
  assert.equal(handed(resumed.outputs), [], 'nothing goes into a turn the vendor is still closing');
  const ended = run([laneTurn(false, row)], resumed.snap);
  assert.equal(handed(ended.outputs), [['q1', 'start queue', 'text of q1']]);
  const got = run(
    [
      { type: 'lane.answered', at: 1700, commandId: 'q1', ok: true },
      { type: 'lane.delivered', at: 1800, commandId: 'q1', ref: 'turn-2', started: true },
    ],
    ended.snap,
  );
  const d = delivered(got.outputs);
  assert.equal(
    d.map((e) => [e['cause'], e['started'], e['delivery']]),
    [['q1', true, undefined]],
  );
  // Once the lane saw the turn end, a resume hands over at once.
  const late = run(
    [
      verb(row, 'hold', 'hold-3', { paused: true }),
      laneTurn(false, row),
      verb(row, 'hold', 'hold-4', { paused: false }),
    ],
    closing.snap,
  );
  assert.equal(handed(late.outputs), [['q1', 'start queue', 'text of q1']]);
});

test('all as a start: what a cancel kept goes with the next start through the lane; the opening moment carries nothing', () => {
  const row: QueueHandover = { take: 'all', as: 'start' };
  const stopped = run([laneTurn(false, row, true), hook('h-stop', 'closes', false)], during(row, true, ['q1']));
  assert.equal(
    stopped.snap.context.queue.map((i) => i.id),
    ['q1'],
    'the cancel kept it',
  );
  const started = run([instruct(row, true, 's1', { idle: 'start' })], stopped.snap);
  assert.equal(handed(started.outputs), [
    ['q1', 'start queue', 'text of q1'],
    ['s1', 'start steer', 'text of s1'],
  ]);
  assert.equal(started.snap.context.queue, []);
  const opening = run([hook('h-next', 'opens', true)], started.snap);
  assert.equal(types(opening.outputs), ['reply.neutral'], 'the hook reply carries none of it');
  // A row that hands over one at a time leaves what waits to its own course.
  const one: QueueHandover = { take: 'one', as: 'start' };
  const alone = run([instruct(one, true, 's1', { idle: 'start' })], stopped.snap);
  assert.equal(
    handed(alone.outputs).map((h) => h[0]),
    ['s1'],
  );
});

test.run();
