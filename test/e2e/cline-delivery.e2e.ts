// D31, D32 end to end on Cline 3.0.65's real hub against the loopback mock Chat Completions API:
// `x.cline.control.instruct` with delivery `steer` sent while a slow tool runs reaches a model
// request of that turn; with no turn running it is refused session-idle; `queue` is refused as the
// instruct lane's table says (it honours moment and steer); a withdrawn instruct never reaches the model;
// a queued `x.cline.control.send_input` withdrawn while the turn runs is removed from the hub's pending
// prompts and never reaches the model, and one the hub has consumed is refused `already-delivered`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditFiles } from '../../src/audit/audit.js';
import { clineHub } from '../support/cline-hub-e2e.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { bodyHas, chatMessagesOf } from '../support/vendor-e2e.js';

const e2e = e2eSuite('cline', { label: 'cline delivery' });
const hub = clineHub(e2e);
/** The adapter starts before `cline hub ensure`: it reports the missing hub once, then connects. */
let startupErrors = 0;

const find = (session: string, type: string, cause?: string) => e2e.stack.find(session, type, cause);

if (e2e.installed) {
  test.before(() => {
    startupErrors = e2e.stack.errors.length;
  });

  test('instruct steer sent while a slow tool runs reaches a model request of that turn', async () => {
    const { session, release, turn } = await hub.slowTurn('CSTEERTURN');
    const text = `CLINE-STEER-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.cline.control.instruct', { text, delivery: 'steer' });
    const before = e2e.mock.modelRequests().length;
    release();
    const done = await turn;
    assert.ok(done.ok, JSON.stringify(done));
    const d = await e2e.stack.delivered(session, cmd);
    assert.is(d.data?.['delivery'], 'steer');
    const ended = find(session, 'run.finished');
    assert.ok(ended === undefined || d.seq! < ended.seq!, 'delivered before the turn ended');
    const carried = e2e.withText(text);
    assert.ok(carried.length > 0, 'the steer reached a model request');
    assert.ok(e2e.mock.modelRequests().indexOf(carried[0]!) >= before, 'a request made after it was sent');
    assert.ok(bodyHas(carried[0]!.body, 'CSTEERTURN'), 'of the same turn');
    assert.ok(
      chatMessagesOf(carried[0]!.body).some((m) => m.role === 'tool' && bodyHas(m.content, 'TOOL_RAN_')),
      "after the slow tool's result",
    );
  });

  test('instruct steer with no turn running is refused session-idle; queue is refused delivery-unsupported', async () => {
    const session = await hub.createSession();
    const done = await hub.startTurn(session, '[[TURN]] CIDLETURN one quick command');
    assert.ok(done.ok, JSON.stringify(done));
    await e2e.stack.waitFor('the turn end', () => find(session, 'run.finished'));
    const requests = e2e.mock.modelRequests().length;
    const idle = await e2e.stack.sent(session, 'x.cline.control.instruct', {
      text: `CLINE-IDLE-${session.slice(-8)}`,
      delivery: 'steer',
    });
    assert.is(idle.settled.outcome, 'rejected', JSON.stringify(idle.settled));
    if (idle.settled.outcome === 'rejected') {
      assert.equal(
        [idle.settled.reason, idle.settled.code, idle.settled.ack['code']],
        ['refused', 'session-idle', 'session-idle'],
      );
      assert.match(idle.settled.detail ?? '', 'no turn is running');
    }
    const queued = await e2e.stack.sent(session, 'x.cline.control.instruct', {
      text: `CLINE-QUEUE-${session.slice(-8)}`,
      delivery: 'queue',
    });
    assert.is(queued.settled.outcome, 'rejected', JSON.stringify(queued.settled));
    if (queued.settled.outcome === 'rejected') {
      assert.equal(
        [queued.settled.reason, queued.settled.code, queued.settled.ack['code']],
        ['unsupported', 'delivery-unsupported', 'delivery-unsupported'],
      );
      assert.is(queued.settled.detail, 'this session cannot take delivery "queue": it accepts moment, steer');
    }
    // A later turn takes neither.
    const next = await hub.startTurn(session, '[[TURN]] CIDLENEXT one more command');
    assert.ok(next.ok, JSON.stringify(next));
    assert.ok(e2e.mock.modelRequests().length > requests, 'the later turn asked the model');
    for (const c of [idle.cmd, queued.cmd]) {
      assert.is(e2e.withText((c.data as { text: string }).text).length, 0, 'a refused instruct reaches no request');
      assert.not.ok(find(session, 'x.cline.instruction.delivered', c.id));
    }
  });

  test('a withdrawn instruct never reaches the model: dropped withdrawn, cause-linked to the withdraw', async () => {
    const { session, release, turn } = await hub.slowTurn('CWITHDRAWTURN');
    const text = `CLINE-WITHDRAWN-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.cline.control.instruct', { text });
    const w = await e2e.stack.accepted(session, 'x.cline.control.withdraw', { instruction: cmd.id }, 'metadata');
    const dropped = await e2e.stack.waitFor('dropped withdrawn', () =>
      find(session, 'x.cline.instruction.dropped', w.id),
    );
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    release();
    const done = await turn;
    assert.ok(done.ok, JSON.stringify(done));
    await e2e.stack.waitFor('the turn end', () => find(session, 'run.finished'));
    const turnRequests = e2e.mock.modelRequests().filter((r) => bodyHas(r.body, 'CWITHDRAWTURN'));
    assert.ok(
      turnRequests.some((r) => chatMessagesOf(r.body).some((m) => m.role === 'tool')),
      'the tool result went back to the model',
    );
    assert.ok(find(session, 'tool.completed'), 'PostToolUse came and went with the queue empty');
    assert.is(e2e.withText(text).length, 0, 'no request carries the withdrawn text');
    assert.not.ok(find(session, 'x.cline.instruction.delivered', cmd.id));
  });

  test('a queued send_input withdrawn while the turn runs is removed from the hub and never read; one read already is refused already-delivered', async () => {
    const { session, release, turn } = await hub.slowTurn('CWITHDRAWINPUT');
    const text = `CLINE-INPUT-WITHDRAWN-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.cline.control.send_input', { text, delivery: 'queue' });
    await e2e.stack.waitFor('input.sent', () => find(session, 'x.cline.input.sent', cmd.id));
    const pending = await hub.driver.command('session.pending_prompts', session, {});
    assert.ok(bodyHas(pending.payload, text), `the hub holds it as a pending prompt: ${JSON.stringify(pending)}`);
    const w = await e2e.stack.accepted(session, 'x.cline.control.withdraw', { instruction: cmd.id }, 'metadata');
    const dropped = await e2e.stack.waitFor('dropped withdrawn', () =>
      find(session, 'x.cline.instruction.dropped', w.id),
    );
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    const after = await hub.driver.command('session.pending_prompts', session, {});
    assert.ok(after.ok, JSON.stringify(after));
    assert.not.ok(bodyHas(after.payload, text), `the hub no longer holds it: ${JSON.stringify(after.payload)}`);
    // A second input stays queued, is read as the next turn, and then can no longer be withdrawn.
    const kept = `CLINE-INPUT-KEPT-${session.slice(-8)}`;
    const keptCmd = await e2e.stack.accepted(session, 'x.cline.control.send_input', { text: kept, delivery: 'queue' });
    await e2e.stack.waitFor('input.sent', () => find(session, 'x.cline.input.sent', keptCmd.id));
    release();
    const done = await turn;
    assert.ok(done.ok, JSON.stringify(done));
    await e2e.stack.waitFor('input.consumed', () => find(session, 'x.cline.input.consumed', keptCmd.id), 60_000);
    await e2e.stack.waitFor('a request with the kept text', () => e2e.withText(kept)[0], 60_000);
    // The turn the kept input started ends before the suite goes on (its hooks write into the state dir).
    const turnsEnded = () =>
      new Set(e2e.stack.events.filter((e) => e.session === session && e.type === 'run.finished').map((e) => e.id)).size;
    await e2e.stack.waitFor('the end of the turn the kept input started', () => turnsEnded() >= 2 || undefined, 60_000);
    const late = await e2e.stack.sent(session, 'x.cline.control.withdraw', { instruction: keptCmd.id }, 'metadata');
    assert.is(late.settled.outcome, 'rejected', JSON.stringify(late.settled));
    if (late.settled.outcome === 'rejected')
      assert.equal([late.settled.reason, late.settled.code], ['refused', 'already-delivered']);
    assert.is(e2e.withText(text).length, 0, 'no request carries the withdrawn text');
    assert.not.ok(find(session, 'x.cline.input.consumed', cmd.id), 'the hub never reported it read');
    assert.equal(
      // Each event once: the consumer may see a redelivery (same id) of an event it already has.
      [...new Map(e2e.stack.events.filter((e) => e.cause === cmd.id).map((e) => [e.id, e.type])).values()],
      ['control.accepted', 'x.cline.input.sent'],
      'its own terminal is the drop the withdraw caused',
    );
    const audit = await auditFiles([e2e.stack.logPath]);
    const rec = audit.instructions.find((i) => i.id === cmd.id);
    assert.equal([rec?.status, rec?.dropped?.reason], ['dropped', 'withdrawn']);
    assert.equal(
      audit.violations.filter((v) => v.message.includes(cmd.id) || v.message.includes(keptCmd.id)),
      [],
    );
  });

  test('the adapter reported no errors once the hub was up', () => {
    assert.equal(e2e.stack.errors.slice(startupErrors), []);
  });
}

test.run();
