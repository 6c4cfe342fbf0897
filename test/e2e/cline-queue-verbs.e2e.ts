// D44 end to end on Cline 3.0.65's real hub against the loopback mock Chat Completions API (the
// adapter keeps what waits, on the hook lane): three sent while a slow tool runs, the second edited
// in place, the third moved to the front, the queue paused: none reaches the turn. Resumed, the
// next turn's first request carries all three in the new order with the edited text. One promoted
// while the queue is paused still goes into the running turn (a steer is not held).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditFiles } from '../../src/audit/audit.js';
import { clineHub } from '../support/cline-hub-e2e.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { bodyHas } from '../support/vendor-e2e.js';

const e2e = e2eSuite('cline', { label: 'cline queue verbs' });
const hub = clineHub(e2e);

const find = (session: string, type: string, cause?: string) => e2e.stack.find(session, type, cause);
/** Sends a queue verb and waits for the adapter's event that settles it. */
async function settled(session: string, verb: string, data: Record<string, unknown>, change: string) {
  const cmd = await e2e.stack.accepted(
    session,
    `x.cline.control.${verb}`,
    data,
    verb === 'edit' ? 'redacted' : 'metadata',
  );
  return e2e.stack.waitFor(change, () => find(session, `x.cline.${change}`, cmd.id));
}

if (e2e.installed) {
  test('three waiting, the second edited, the third moved first, paused: the turn has none; resumed, the next turn has all three in the new order', async () => {
    const { session, release, turn } = await hub.slowTurn('CQPAUSED');
    const tag = session.slice(-8);
    const texts = ['ONE', 'TWO', 'THREE'].map((t) => `CQ-${t}-${tag}`);
    const edited = `CQ-TWO-EDITED-${tag}`;
    const ids: string[] = [];
    for (const text of texts) ids.push((await e2e.stack.accepted(session, 'x.cline.control.instruct', { text })).id);
    const [one, two, three] = ids as [string, string, string];
    assert.is(
      (await settled(session, 'edit', { instruction: two, text: edited }, 'instruction.edited')).data?.['version'],
      2,
    );
    await settled(session, 'move', { instruction: three, to: 'front' }, 'instruction.moved');
    await settled(session, 'hold', { paused: true }, 'queue.held');
    release();
    const done = await turn;
    assert.ok(done.ok, JSON.stringify(done));
    await e2e.stack.waitFor('the turn end', () => find(session, 'run.finished'));
    for (const t of [...texts, edited]) assert.is(e2e.withText(t).length, 0, 'nothing reached the paused turn');

    await settled(session, 'hold', { paused: false }, 'queue.held');
    const next = await hub.startTurn(session, '[[TURN]] CQRESUMED one quick command');
    assert.ok(next.ok, JSON.stringify(next));
    const d2 = await e2e.stack.waitFor('delivered', () => find(session, 'x.cline.instruction.delivered', two));
    assert.is(d2.data?.['version'], 2);
    assert.ok(
      find(session, 'x.cline.instruction.delivered', one) && find(session, 'x.cline.instruction.delivered', three),
    );
    const first = e2e.mock.modelRequests().find((r) => bodyHas(r.body, 'CQRESUMED') && bodyHas(r.body, edited));
    assert.ok(first, 'a request of the resumed turn carries them');
    const body = JSON.stringify(first.body);
    const at = [texts[2]!, texts[0]!, edited].map((t) => body.indexOf(t));
    assert.ok(at[0]! >= 0 && at[0]! < at[1]! && at[1]! < at[2]!, `in the moved order (${at.join(', ')})`);
    assert.is(e2e.withText(texts[1]!).length, 0, 'the replaced text never reaches the model');
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(
      audit.violations.filter((v) => ids.some((id) => v.message.includes(id))),
      [],
    );
  });

  test('promoted while the queue is paused, an instruction still goes into the running turn', async () => {
    const { session, release, turn } = await hub.slowTurn('CQPROMOTE');
    await settled(session, 'hold', { paused: true }, 'queue.held');
    const text = `CQ-PROMOTED-${session.slice(-8)}`;
    const waits = `CQ-WAITS-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.cline.control.instruct', { text });
    const other = await e2e.stack.accepted(session, 'x.cline.control.instruct', { text: waits });
    await settled(session, 'promote', { instruction: cmd.id }, 'instruction.promoted');
    release();
    const done = await turn;
    assert.ok(done.ok, JSON.stringify(done));
    const d = await e2e.stack.delivered(session, cmd);
    assert.is(d.data?.['delivery'], 'steer');
    const carried = e2e.withText(text);
    assert.ok(carried.length > 0 && bodyHas(carried[0]!.body, 'CQPROMOTE'), 'in the same turn');
    assert.is(e2e.withText(waits).length, 0, 'the one not promoted stays held');
    assert.not.ok(find(session, 'x.cline.instruction.delivered', other.id));
  });
}

test.run();
