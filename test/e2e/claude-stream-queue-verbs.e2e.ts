// D44 end to end on the real Claude Code 2.1.332 headless (`aep-steer run claude -p`, the stream-json
// lane) against the loopback mock Anthropic API, through a real relay and adapter. The CLI cannot
// edit or reorder a `later` message, so the adapter keeps what is queued while a turn runs and
// hands all of it over at the turn's end as the next turn's start (the lane's hand-over row):
// three queued while a slow tool runs, the second edited in place, the third moved to the front,
// the queue paused: the turn ends and the model sees none of them. Resumed with no turn running,
// the next turn's first request carries them in the new order with the edited text. A queued one
// promoted mid-turn lands in the same turn's next request; a cancel mid-turn stops the turn and
// keeps the queue, which the start of the next turn takes along through the lane: that turn's first
// request still carries it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { uuidFor } from '../../src/adapters/claude-code/stream-json/stream.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { FOLDED, streamRuns, type StreamRun } from '../support/claude-stream-runs.js';
import { bodyHas } from '../support/vendor-e2e.js';

const V = 'x.claude-code';
const DELIVERED = `${V}.instruction.delivered`;
const e2e = e2eSuite('claude-code');
const { script, all, of, requestsOf, accepted, startRun, finish, gateLoopRuns } = streamRuns(e2e);

const queue = (run: StreamRun, text: string): Promise<AepCommand> =>
  accepted(run, `${V}.control.instruct`, { text, delivery: 'queue' });
/** Sends a queue verb and waits for the adapter's event that settles it. */
async function settled(run: StreamRun, verb: string, data: Record<string, unknown>, change: string) {
  const cmd = await e2e.stack.accepted(
    run.session,
    `${V}.control.${verb}`,
    data,
    verb === 'edit' ? 'redacted' : 'metadata',
  );
  return e2e.stack.waitFor(change, () => of(run, `${V}.${change}`, cmd.id));
}
/** The CLI never saw the message: the adapter still keeps it. */
const unseen = (run: StreamRun, id: string): boolean => !run.lines.some((l) => l.command_uuid === uuidFor(id));
const results = (run: StreamRun) => run.lines.filter((l) => l.type === 'result');

if (e2e.installed) {
  test.before(() => script());

  test('queue three, edit the second, move the third first, pause: nothing at the turn end; resumed, the next turn carries them in the new order', async () => {
    const run = await startRun('sq-three');
    const tag = run.session.slice(0, 8);
    const texts = ['ONE', 'TWO', 'THREE'].map((t) => `SQ-${t}-${tag}`);
    const edited = `SQ-TWO-EDITED-${tag}`;
    const ids = [];
    for (const t of texts) ids.push((await queue(run, t)).id);
    const [one, two, three] = ids as [string, string, string];
    assert.is(
      (await settled(run, 'edit', { instruction: two, text: edited }, 'instruction.edited')).data?.['version'],
      2,
    );
    assert.is(
      (await settled(run, 'move', { instruction: three, to: 'front' }, 'instruction.moved')).data?.['position'],
      1,
    );
    await settled(run, 'hold', { paused: true }, 'queue.held');
    writeFileSync(run.gate, '');
    await e2e.stack.waitFor('the turn ended', () => results(run)[0]);
    await e2e.stack.waitFor('the hooks saw it end', () => all(run, 'run.finished')[0]);
    const roster = (await e2e.stack.consumer.roster()).find((r) => r.session === run.session);
    assert.ok(roster?.paused, `the roster shows the pause: ${JSON.stringify(roster)}`);
    for (const id of ids) {
      assert.not.ok(of(run, DELIVERED, id), 'nothing is delivered while paused');
      assert.ok(unseen(run, id), 'the CLI was handed none of them');
    }
    for (const r of requestsOf(run)) for (const t of [...texts, edited]) assert.not.ok(bodyHas(r.body, t));

    const resumed = await settled(run, 'hold', { paused: false }, 'queue.held');
    const got = await Promise.all(ids.map((id) => e2e.stack.waitFor(`${id} delivered`, () => of(run, DELIVERED, id))));
    for (const d of got) {
      assert.ok(d.seq! > resumed.seq!, 'nothing was handed over before the resume');
      assert.equal([d.data?.['lane'], d.data?.['started']], ['stream-json', true]);
    }
    assert.is(got[1]!.data?.['version'], 2, 'the edited text went');
    await e2e.stack.waitFor('the next turn ended', () => results(run)[1]);
    const reqs = requestsOf(run);
    assert.ok(reqs.length >= 3, `the tool round, then the next turn (${reqs.length})`);
    const next = JSON.stringify(reqs[2]!.body);
    const at = [texts[2]!, texts[0]!, edited].map((t) => next.indexOf(t));
    assert.ok(
      at.every((i) => i >= 0),
      `all three in the next turn's first request (${at.join(', ')})`,
    );
    assert.ok(at[0]! < at[1]! && at[1]! < at[2]!, `in the moved order (${at.join(', ')})`);
    assert.is(e2e.withText(texts[1]!).length, 0, 'the replaced text never reaches the model');
    await finish(run);
    assert.ok(of(run, DELIVERED, one) && of(run, DELIVERED, three));
  });

  test("a queued one promoted while the slow tool runs lands in the same turn's next request", async () => {
    const run = await startRun('sq-promote');
    const text = `SQ-PROMOTED-${run.session.slice(0, 8)}`;
    const cmd = await queue(run, text);
    const p = await settled(run, 'promote', { instruction: cmd.id }, 'instruction.promoted');
    assert.is(p.data?.['lane'], 'stream-json');
    await e2e.stack.waitFor('the CLI took it', () =>
      run.lines.find((l) => l.type === 'command_lifecycle' && l.command_uuid === uuidFor(cmd.id)),
    );
    writeFileSync(run.gate, '');
    const d = await e2e.stack.waitFor('delivered', () => of(run, DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'stream-json']);
    await finish(run);
    assert.is(results(run).length, 1, 'no turn of its own');
    const reqs = requestsOf(run);
    assert.is(reqs.length, 2, 'one tool round');
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.ok(bodyHas(reqs[1]!.body, FOLDED) && bodyHas(reqs[1]!.body, text), "the same turn's next request");
  });

  test('a cancel mid-turn stops the turn and keeps the queue; the next turn still carries it', async () => {
    const run = await startRun('sq-cancel');
    const text = `SQ-KEPT-${run.session.slice(0, 8)}`;
    const cmd = await queue(run, text);
    await e2e.stack.waitFor('the Bash command runs', () => (gateLoopRuns(run) ? true : undefined));
    const cancel = await accepted(run, 'control.cancel', { scope: 'run' });
    await e2e.stack.waitFor('run.cancelled', () => of(run, 'run.cancelled', cancel.id));
    await e2e.stack.waitFor('the turn ended', () => results(run)[0]);
    await e2e.stack.waitFor('no command waits for the gate any more', () => (gateLoopRuns(run) ? undefined : true));
    assert.not.ok(of(run, `${V}.instruction.dropped`, cmd.id), 'the cancel kept it');
    assert.not.ok(of(run, DELIVERED, cmd.id));
    assert.ok(unseen(run, cmd.id), 'still with the adapter');
    assert.is(requestsOf(run).length, 1, 'no request after the stopped tool');
    // The next turn: one the sender starts; the start takes what waits along, through the lane.
    const next = `sq-cancel: NEXT-TURN-${run.session.slice(0, 8)}`;
    const start = await accepted(run, `${V}.control.instruct`, { text: next, idle: 'start' });
    const d = await e2e.stack.waitFor('the kept one delivered', () => of(run, DELIVERED, cmd.id));
    await e2e.stack.waitFor('the start delivered', () => of(run, DELIVERED, start.id));
    await e2e.stack.waitFor('the next turn ended', () => results(run)[1]);
    const first = requestsOf(run).find((r) => bodyHas(r.body, next));
    assert.ok(first, 'the next turn asked the model');
    assert.ok(bodyHas(first!.body, text), `the next turn's first request carries it (${JSON.stringify(d.data)})`);
    assert.equal(
      [d.data?.['lane'], d.data?.['moment']],
      ['stream-json', undefined],
      'the lane carried it, not the hook reply',
    );
    await finish(run);
  });

  test('the audit of the adapter log finds no violation', async () => {
    const r = await auditFiles([e2e.stack.logPath]);
    assert.equal(r.violations, [], renderText(r));
    const ev: AepEvent[] = e2e.stack.events.filter((e) => e.type === DELIVERED);
    assert.ok(ev.length >= 5, `deliveries: ${ev.length}`);
  });
}

test.run();
