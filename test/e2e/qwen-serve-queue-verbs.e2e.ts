// D44 end to end on the real Qwen Code 0.24.4 `qwen serve` daemon (`--require-auth`) against the
// loopback mock Chat Completions API, its session's hooks posted to this project's adapter, which
// follows the daemon (`--serve URL`). The daemon cannot edit or reorder a pending prompt, so the
// adapter keeps what is queued while a turn runs and hands all of it over as one prompt at the
// turn's end (the lane's hand-over row): three queued while a slow tool runs, the second edited in
// place, the third moved to the front, the queue paused: the turn ends and the model sees none of
// them, nor does the daemon hold them. Resumed with no turn running, one prompt opens the next
// turn: its first request carries all three in the new order with the edited text, and each is
// delivered with its own receipt. A queued one promoted mid-turn
// lands in the same turn's next request; a cancel mid-turn keeps the queue, and the next turn's
// end hands it over.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { qwenServeSuite } from '../support/qwen-serve-suite.js';
import { bodyHas, chatMessagesOf, chatTextOf } from '../support/vendor-e2e.js';

const INJECTED = '[User message received during tool execution]: ';
const V = 'x.qwen-code';
const DELIVERED = `${V}.instruction.delivered`;

let session: string;
const { e2e, serve, all, slowTurn } = qwenServeSuite('qwen serve queue verbs', () => session);

const of = (type: string, cause?: string): AepEvent | undefined => e2e.stack.find(session, type, cause);
const finishedAfter = (n: number) => e2e.stack.waitFor(`turn ${n + 1} finished`, () => all('run.finished')[n]);
/** A queued prompt of its own: the mock answers it with text, no tool call. */
const prompt = (tag: string): string => `[[TURN]] [[TOOLS:0]] ${tag} say done`;
const queue = (text: string): Promise<AepCommand> =>
  e2e.stack.accepted(session, `${V}.control.instruct`, { text, delivery: 'queue' });
/** Sends a queue verb and waits for the adapter's event that settles it. */
async function settled(verb: string, data: Record<string, unknown>, change: string): Promise<AepEvent> {
  const cmd = await e2e.stack.accepted(
    session,
    `${V}.control.${verb}`,
    data,
    verb === 'edit' ? 'redacted' : 'metadata',
  );
  return e2e.stack.waitFor(change, () => of(`${V}.${change}`, cmd.id));
}
/** The daemon's pending prompts that carry `text`. */
async function pendingWith(text: string): Promise<unknown[]> {
  const r = await serve().api('GET', `/session/${session}/pending-prompts`);
  return ((r.body?.['pendingPrompts'] as { text?: string }[] | undefined) ?? []).filter((p) => p.text?.includes(text));
}
/** Where the first model request carrying `text` falls among all the mock saw (-1: none). */
const firstAt = (text: string): number => e2e.requests().findIndex((r) => bodyHas(r.body, text));

if (e2e.installed) {
  test.before(async () => {
    e2e.stack.evidence.set('qwen serve output', () => serve().output().slice(-4000));
    session = await serve().session('yolo');
    await serve().prompt(session, prompt('qv-first'));
    await finishedAfter(0);
    await e2e.stack.waitFor('the lane reaches the session', () =>
      all(`${V}.session.described`).find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('serve')),
    );
  });

  test('queue three, edit the second, move the third first, pause: nothing at the turn end; resumed, one prompt opens the next turn with all three in the new order', async () => {
    const { release, finished } = await slowTurn('qv-three');
    const tag = session.slice(0, 8);
    const tags = ['ONE', 'TWO', 'THREE'].map((t) => `QV-${t}-${tag}`);
    const editedTag = `QV-TWO-EDITED-${tag}`;
    const ids: string[] = [];
    for (const t of tags) ids.push((await queue(prompt(t))).id);
    const [one, two, three] = ids as [string, string, string];
    const e = await settled('edit', { instruction: two, text: prompt(editedTag) }, 'instruction.edited');
    assert.is(e.data?.['version'], 2);
    assert.is((await settled('move', { instruction: three, to: 'front' }, 'instruction.moved')).data?.['position'], 1);
    await settled('hold', { paused: true }, 'queue.held');
    for (const t of tags) assert.equal(await pendingWith(t), [], 'the daemon holds none of them');
    release();
    await finishedAfter(finished);
    const roster = (await e2e.stack.consumer.roster()).find((r) => r.session === session);
    assert.ok(roster?.paused, `the roster shows the pause: ${JSON.stringify(roster)}`);
    for (const id of ids) assert.not.ok(of(DELIVERED, id), 'nothing is delivered while paused');
    for (const t of [...tags, editedTag]) assert.is(firstAt(t), -1, `no request carries ${t}`);

    const resumed = await settled('hold', { paused: false }, 'queue.held');
    const got = await Promise.all(ids.map((id) => e2e.stack.waitFor(`${id} delivered`, () => of(DELIVERED, id))));
    for (const d of got) {
      assert.ok(d.seq! > resumed.seq!, 'nothing was handed over before the resume');
      assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'serve']);
    }
    assert.is(got[1]!.data?.['version'], 2, 'the edited text went');
    assert.ok(got[2]!.seq! < got[0]!.seq! && got[0]!.seq! < got[1]!.seq!, 'delivered in the moved order');
    assert.ok(
      got.every((d) => d.data?.['ref'] === got[0]!.data?.['ref']),
      `one prompt carried them (${got.map((d) => String(d.data?.['ref'])).join(', ')})`,
    );
    await finishedAfter(finished + 1);
    const order = [tags[2]!, tags[0]!, editedTag];
    const at = order.map(firstAt);
    assert.ok(at[0]! >= 0 && at.every((a) => a === at[0]), `one request carries all three (${at.join(', ')})`);
    const text = chatTextOf(chatMessagesOf(e2e.requests()[at[0]!]!.body).at(-1)!);
    const where = order.map((t) => text.indexOf(t));
    assert.ok(where[0]! >= 0 && where[0]! < where[1]! && where[1]! < where[2]!, `in the new order: ${text}`);
    assert.is(all('run.finished').length, finished + 2, 'one turn for the three');
    assert.is(firstAt(tags[1]!), -1, 'the replaced text never reaches the model');
    assert.ok(of(DELIVERED, one) && of(DELIVERED, three));
  });

  test("a queued one promoted while the slow tool runs lands in the same turn's next request", async () => {
    const { release, finished } = await slowTurn('qv-promote');
    const text = `QV-PROMOTED-${session.slice(0, 8)}`;
    const cmd = await queue(text);
    const p = await settled('promote', { instruction: cmd.id }, 'instruction.promoted');
    assert.is(p.data?.['lane'], 'serve');
    release();
    const d = await e2e.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'serve']);
    const end = await finishedAfter(finished);
    assert.ok(d.seq! < end.seq!, 'within the turn');
    const reqs = e2e.requestsOf('qv-promote');
    assert.ok(reqs.length >= 2, `a tool round (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.ok(bodyHas(reqs[1]!.body, `${INJECTED}${text}`), "the same turn's next request carries it");
  });

  test("a cancel mid-turn stops the turn and keeps the queue; the next turn's end hands it over", async () => {
    const { finished } = await slowTurn('qv-cancel');
    const tag = `QV-KEPT-${session.slice(0, 8)}`;
    const cmd = await queue(prompt(tag));
    const cancel = await e2e.stack.accepted(session, 'control.cancel', { scope: 'run' }, 'metadata');
    await e2e.stack.waitFor('run.cancelled', () => of('run.cancelled', cancel.id));
    assert.not.ok(of(`${V}.instruction.dropped`, cmd.id), 'the cancel kept it');
    assert.not.ok(of(DELIVERED, cmd.id));
    assert.equal(await pendingWith(tag), [], 'still with the adapter');
    // The person's next turn; at its end the kept one goes over and opens the turn after.
    const turns = all('run.finished').length;
    await serve().prompt(session, prompt('qv-after-cancel'));
    const d = await e2e.stack.waitFor('the kept one delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'serve']);
    await finishedAfter(turns + 1);
    assert.ok(firstAt(tag) > firstAt('qv-after-cancel'), 'after the next turn');
    assert.ok(all('run.finished').length > finished);
  });

  test('the audit of the adapter log finds no violation', async () => {
    await e2e.auditClean();
  });
}

test.run();
