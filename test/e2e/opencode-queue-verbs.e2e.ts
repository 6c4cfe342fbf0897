// D44 end to end on the real opencode 1.18.33 `opencode serve` (password-protected) against the
// loopback mock Chat Completions API, followed by this project's adapter: with a slow tool call in
// flight, three queued, the second edited in place, the third moved to the front, the queue
// paused; the turn ends and nothing is handed over; resumed, the next turn's first request has
// them in the new order with the edited text; a resend of one command id is delivered once. A
// queued one promoted while a slow tool runs is a V2 steer in the same turn's next request; a
// cancel with `clear` withdraws what waits, each drop caused by the cancel.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { opencodeServeSuite } from '../support/opencode-serve-suite.js';
import { chatMessagesOf, chatTextOf } from '../support/vendor-e2e.js';
import { until } from '../support/until.js';

const DELIVERED = 'x.opencode.instruction.delivered';
const DROPPED = 'x.opencode.instruction.dropped';

const oc = opencodeServeSuite('aep-opencode-qv-', 'opencode queue verbs');
const { of, all, slowTurn, finishedAfter } = oc;

/** Instruct's text is captured as the adapter's other tests send it; a verb or cancel carries none. */
async function accepted(type: string, data: Record<string, unknown>): Promise<AepCommand> {
  const cmd = type.endsWith('.instruct')
    ? oc.stack.command(oc.session, type, data)
    : oc.stack.command(oc.session, type, data, null);
  const settled = await oc.stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}
/** Sends a queue verb and waits for the adapter's event that settles it. */
async function settled(verb: string, data: Record<string, unknown>, change: string): Promise<AepEvent> {
  const cmd = await accepted(`x.opencode.control.${verb}`, data);
  return oc.stack.waitFor(change, () => of(`x.opencode.${change}`, cmd.id));
}
const userTexts = (body: unknown): string =>
  chatMessagesOf(body)
    .filter((m) => m.role === 'user')
    .map((m) => chatTextOf(m))
    .join('\n');
const withText = (text: string) => oc.mock.modelRequests().filter((r) => userTexts(r.body).includes(text));

if (oc.installed) {
  // The first turn on a fresh server also loads its provider.
  test.before(() => oc.firstTurn('qv-first'));

  test('queue three, edit the second, move the third first, pause: the turn ends and nothing goes; resumed, the next turn has them in the new order', async () => {
    const { release, finished } = await slowTurn('qv-three');
    const tag = oc.session.slice(-8);
    const texts = ['ONE', 'TWO', 'THREE'].map((t) => `QV-${t}-${tag}`);
    const edited = `QV-TWO-EDITED-${tag}`;
    const cmds: AepCommand[] = [];
    for (const text of texts) cmds.push(await accepted('x.opencode.control.instruct', { text, delivery: 'queue' }));
    const ids = cmds.map((c) => c.id);
    const [one, two, three] = ids as [string, string, string];
    assert.is((await settled('edit', { instruction: two, text: edited }, 'instruction.edited')).data?.['version'], 2);
    assert.is((await settled('move', { instruction: three, to: 'front' }, 'instruction.moved')).data?.['position'], 1);
    await settled('hold', { paused: true }, 'queue.held');
    release();
    await finishedAfter(finished);
    const roster = (await oc.stack.consumer.roster()).find((r) => r.session === oc.session);
    assert.ok(roster?.paused, `the roster shows the pause: ${JSON.stringify(roster)}`);

    const resumed = await settled('hold', { paused: false }, 'queue.held');
    const got = await Promise.all(ids.map((id) => oc.stack.waitFor(`${id} delivered`, () => of(DELIVERED, id))));
    for (const d of got) {
      assert.ok(d.seq! > resumed.seq!, 'nothing was handed over before the resume');
      assert.is(d.data?.['delivery'], 'queue');
    }
    assert.is(got[1]!.data?.['version'], 2, 'the edited text went');
    await finishedAfter(finished + 1);
    // The receipt (`prompted`) is the server taking the prompt in; its model request follows.
    const carrying = () => oc.mock.modelRequests().find((r) => userTexts(r.body).includes(texts[2]!));
    await until(() => carrying() !== undefined, 'a model request carrying the first of them', 60_000);
    const first = carrying();
    assert.ok(first, 'a request carries the first of them');
    const body = userTexts(first!.body);
    const at = [texts[2]!, texts[0]!, edited].map((t) => body.indexOf(t));
    assert.ok(
      at.every((i) => i >= 0),
      `all three in the next turn's first request (${at.join(', ')})`,
    );
    assert.ok(at[0]! < at[1]! && at[1]! < at[2]!, `in the moved order (${at.join(', ')})`);
    assert.is(withText(texts[1]!).length, 0, 'the replaced text is never sent');
    assert.ok(of(DELIVERED, one) && of(DELIVERED, three));

    // A resend of one command id: re-acked, delivered once, once in the model's requests.
    const again = await oc.stack.send(cmds[0]!);
    assert.is(again.outcome, 'accepted', JSON.stringify(again));
    const { release: r2, finished: f2 } = await slowTurn('qv-after-resend');
    r2();
    await finishedAfter(f2);
    assert.is(all(DELIVERED).filter((e) => e.cause === one).length, 1, 'delivered once');
    const last = oc.mock.modelRequests().at(-1)!;
    assert.is(userTexts(last.body).split(texts[0]!).length - 1, 1, 'once in the conversation');
  });

  test("a queued one promoted while a slow tool runs is a V2 steer in the same turn's next request", async () => {
    const { release, finished } = await slowTurn('qv-promote');
    const text = `QV-PROMOTED-${oc.session.slice(-8)}`;
    const cmd = await accepted('x.opencode.control.instruct', { text, delivery: 'queue' });
    const p = await settled('promote', { instruction: cmd.id }, 'instruction.promoted');
    assert.is(p.data?.['lane'], 'serve');
    release();
    const d = await oc.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'serve']);
    const end = await finishedAfter(finished);
    assert.ok(d.seq! < end.seq!, 'within the turn');
    const reqs = oc.mock.modelRequests().filter((r) => userTexts(r.body).includes('qv-promote'));
    assert.ok(reqs.length >= 2, `a tool round (${reqs.length})`);
    assert.not.ok(userTexts(reqs[0]!.body).includes(text), 'not in the request that asked for the tool');
    assert.ok(userTexts(reqs[1]!.body).includes(text), "the same turn's next request carries it");
  });

  test('a cancel with clear stops the turn and withdraws what waits, each drop caused by the cancel; none reaches the model', async () => {
    const { release } = await slowTurn('qv-clear');
    const gone = [`QV-CLEARED-A-${oc.session.slice(-8)}`, `QV-CLEARED-B-${oc.session.slice(-8)}`];
    const cleared: string[] = [];
    for (const t of gone)
      cleared.push((await accepted('x.opencode.control.instruct', { text: t, delivery: 'queue' })).id);
    const clear = await accepted('control.cancel', { scope: 'run', clear: true });
    await oc.stack.waitFor('run.cancelled', () => of('run.cancelled', clear.id));
    for (const id of cleared) {
      const drop = await oc.stack.waitFor(`${id} withdrawn`, () => all(DROPPED).find((e) => e.subject === id));
      assert.equal([drop.cause, drop.data?.['reason']], [clear.id, 'withdrawn']);
    }
    release();
    const { release: r2, finished } = await slowTurn('qv-after-clear');
    r2();
    await finishedAfter(finished);
    for (const t of gone) assert.is(withText(t).length, 0, 'a cleared instruction never reaches the model');
  });

  test('the audit of the adapter log is clean', async () => {
    await oc.auditClean();
  });
}

test.run();
