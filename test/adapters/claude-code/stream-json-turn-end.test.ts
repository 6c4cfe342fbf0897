// A plain steer racing the end of a `claude -p` turn (D31, D43) on the stream-json lane's real
// socket, this test as the run: the turn ended without reading it, and a user message left
// unread would begin the run's next turn, one nobody asked for. The lane takes it back before it
// says the turn ended: taken back, it is dropped `turn-ended` with the turn (true: it never runs);
// not given back, the CLI runs it, so it is kept and its read delivers it. Then the same through
// the session machine: a kept steer survives the turn's end and is delivered on its receipt.
// D44: the queue handed over whole at a turn's end goes to the idle run as one message.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LaneFact, SteeringLane } from '../../../src/streams/lane.js';
import { streamJsonLane } from '../../../src/adapters/claude-code/stream-json/lane.js';
import { lineReader, uuidFor, type Line } from '../../../src/adapters/claude-code/stream-json/stream.js';
import { command } from '../../../src/protocol/index.js';
import type { SessionInput } from '../../../src/machines/session-input.js';
import { run as steps, SESSION, VENDOR } from '../../support/session-steps.js';
import { until } from '../../support/until.js';

/** The lane on a fresh socket, one run joined on it, and every fact the lane said. */
async function joined(
  fn: (t: { lane: SteeringLane; facts: LaneFact[]; got: Line[]; print: (l: Line) => void }) => Promise<void>,
) {
  const dir = mkdtempSync(join(tmpdir(), 'aep-sj-end-'));
  const lane = streamJsonLane({ socketPath: join(dir, 'lane.sock'), answerMs: 2000 });
  const facts: LaneFact[] = [];
  lane.facts$.subscribe((f) => facts.push(f));
  try {
    await lane.open!();
    const sock = connect(join(dir, 'lane.sock'));
    await new Promise((r) => sock.once('connect', r));
    const got: Line[] = [];
    sock.on(
      'data',
      lineReader((l) => got.push(l)),
    );
    const print = (l: Line) => sock.write(`${JSON.stringify(l)}\n`);
    print({ type: 'system', subtype: 'init', session_id: 's1' });
    await until(() => facts.some((f) => f.kind === 'turn.started'), 'the turn seen');
    await fn({ lane, facts, got, print });
    sock.end();
  } finally {
    await lane.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
const answer = (print: (l: Line) => void, req: Line, cancelled: boolean) =>
  print({
    type: 'control_response',
    response: { subtype: 'success', request_id: req.request_id, response: { cancelled } },
  });
const ends = (facts: LaneFact[]) =>
  facts.filter((f): f is Extract<LaneFact, { kind: 'turn.ended' }> => f.kind === 'turn.ended');

test('a steer the turn ended without reading is taken back before the end is said: nothing kept, so dropped turn-ended is true', async () => {
  await joined(async ({ lane, facts, got, print }) => {
    assert.ok((await lane.steer({ session: 's1', commandId: 'c1', text: 'LATE STEER' })).ok);
    print({ type: 'result', subtype: 'success', session_id: 's1', terminal_reason: 'completed' });
    await until(() => got.length === 2, 'the lane asks for it back');
    assert.equal(got[1]!.request, { subtype: 'cancel_async_message', message_uuid: uuidFor('c1') });
    assert.is(ends(facts).length, 0, 'the end waits for the answer');
    answer(print, got[1]!, true);
    await until(() => ends(facts).length === 1, 'the turn end');
    assert.is(ends(facts)[0]!.kept, undefined);
  });
});

test('one the CLI would not give back is kept at the end, and its read in the next turn delivers it', async () => {
  await joined(async ({ lane, facts, got, print }) => {
    assert.ok((await lane.steer({ session: 's1', commandId: 'c2', text: 'RUNS NEXT' })).ok);
    print({ type: 'result', subtype: 'success', session_id: 's1', terminal_reason: 'completed' });
    await until(() => got.length === 2, 'the lane asks for it back');
    answer(print, got[1]!, false);
    // The CLI begins its next turn with it; what it prints then comes after the end, in order.
    print({ type: 'system', subtype: 'init', session_id: 's1' });
    print({ type: 'command_lifecycle', command_uuid: uuidFor('c2'), state: 'started' });
    await until(() => facts.some((f) => f.kind === 'delivered'), 'its receipt');
    const kinds = facts.map((f) => f.kind).slice(-3);
    assert.equal(kinds, ['turn.ended', 'turn.started', 'delivered']);
    assert.equal(ends(facts)[0]!.kept, ['c2']);
  });
});

test('a steer already read before the end is not asked for back', async () => {
  await joined(async ({ lane, facts, got, print }) => {
    assert.ok((await lane.steer({ session: 's1', commandId: 'c3', text: 'READ IN TIME' })).ok);
    print({ type: 'command_lifecycle', command_uuid: uuidFor('c3'), state: 'started' });
    print({ type: 'result', subtype: 'success', session_id: 's1', terminal_reason: 'completed' });
    await until(() => ends(facts).length === 1, 'the turn end');
    assert.is(got.length, 1, 'only the steer was written');
  });
});

test('the session machine: a kept steer outlives its turn and is delivered on its receipt; one not kept is dropped turn-ended', () => {
  const send = (id: string): SessionInput => ({
    type: 'command.instruct',
    at: 1000,
    gateOpen: true,
    deliveries: ['moment'],
    native: { deliveries: ['steer'], hint: 'run it headless' },
    command: command({ agent: 'tester' }, SESSION, {
      type: `x.${VENDOR}.control.instruct`,
      id,
      data: { text: `text of ${id}`, delivery: 'steer' },
      capture: 'redacted',
    }),
  });
  const before: SessionInput[] = [
    { type: 'lane.reach', at: 500, lane: 'stream-json', reaches: true },
    { type: 'lane.turn', at: 600, open: true },
    send('k1'),
    send('k2'),
    { type: 'lane.answered', at: 1100, commandId: 'k1', ok: true },
    { type: 'lane.answered', at: 1100, commandId: 'k2', ok: true },
  ];
  const ended = steps([...before, { type: 'lane.turn', at: 2000, open: false, interrupted: false, kept: ['k1'] }]);
  const dropped = ended.outputs.filter((o) => o.type === 'instruction.dropped');
  assert.equal(
    dropped.map((o) => (o.type === 'instruction.dropped' ? [o.cause, o.reason] : [])),
    [['k2', 'turn-ended']],
  );
  const got = steps([{ type: 'lane.delivered', at: 2500, commandId: 'k1', ref: uuidFor('k1') }], ended.snap);
  const d = got.outputs.find((o) => o.type === 'instruction.delivered');
  assert.ok(d?.type === 'instruction.delivered');
  assert.equal([d.cause, d.ref, d.lane], ['k1', uuidFor('k1'), 'stream-json']);
});

test('starts asked together after the turn ended go as one message; its read delivers each of them as the turn it began (D44)', async () => {
  await joined(async ({ lane, facts, got, print }) => {
    print({ type: 'result', subtype: 'success', session_id: 's1', terminal_reason: 'completed' });
    await until(() => ends(facts).length === 1, 'the turn ended');
    const asked = ['q3', 'q1', 'q2'].map((id) =>
      lane.startTurn!({ session: 's1', commandId: id, text: `text of ${id}`, otherwise: 'queue' }),
    );
    const answers = await Promise.all(asked);
    assert.equal(
      answers.map((a) => (a.ok ? a.ref : a.reason)),
      ['s1:2', 's1:2', 's1:2'],
    );
    await until(() => got.length === 1, 'one message written');
    const m = got[0]!;
    assert.equal(
      [m.uuid, (m.message as { content?: string }).content],
      [uuidFor('q3'), 'text of q3\n\ntext of q1\n\ntext of q2'],
    );
    print({ type: 'system', subtype: 'init', session_id: 's1' });
    print({ type: 'user', uuid: uuidFor('q3'), isReplay: true });
    await until(() => facts.filter((f) => f.kind === 'delivered').length === 3, 'three receipts');
    const receipts = facts.filter((f): f is Extract<LaneFact, { kind: 'delivered' }> => f.kind === 'delivered');
    assert.equal(
      receipts.map((f) => [f.commandId, f.ref, f.started]),
      [
        ['q3', 's1:2', true],
        ['q1', 's1:2', true],
        ['q2', 's1:2', true],
      ],
    );
  });
});

test.run();
