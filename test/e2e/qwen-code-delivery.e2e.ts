// D31, D32 end to end on the real Qwen Code 0.24.4 against the loopback mock Chat Completions API,
// through this project's relay and adapter: a `moment` sent while a slow tool runs reaches the
// request that carries that tool's result; `steer` and `queue` are refused as the vendor table
// says (it honours `moment` only) and nothing waits; a withdrawn instruction never reaches the model.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { sessionQueue } from '../../src/consumer/queue.js';
import type { AepCommand } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { bodyHas, chatMessagesOf, chatTextOf } from '../support/vendor-e2e.js';

const e2e = e2eSuite('qwen-code', { label: 'qwen-code delivery' });
const INSTRUCT = 'x.qwen-code.control.instruct';

/** What waits in the session's queue, as `aep-steer queue` reads it from the relay. */
async function waiting(session: string) {
  const c = await RelayConsumer.connect({
    url: e2e.stack.relayUrl,
    token: e2e.stack.relayToken,
    agent: e2e.stack.sender,
  });
  try {
    return await sessionQueue(c, session);
  } finally {
    await c.close();
  }
}

if (e2e.installed) {
  test("moment sent while a slow tool runs reaches the request carrying that tool's result; steer and queue are refused", async () => {
    const { session, run, tool, release } = await e2e.slowRun('q-moment');
    const marker = `STEER-QWEN-MOMENT-${session.slice(0, 8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text: marker, delivery: 'moment' });
    // The table honours moment only: steer (a turn runs now) and queue are refused, naming it.
    const refused: AepCommand[] = [];
    for (const delivery of ['steer', 'queue']) {
      const text = `STEER-QWEN-${delivery.toUpperCase()}-${session.slice(0, 8)}`;
      const c = e2e.stack.command(session, INSTRUCT, { text, delivery });
      const settled = await e2e.stack.send(c);
      assert.is(settled.outcome, 'rejected', JSON.stringify(settled));
      if (settled.outcome !== 'rejected') continue;
      assert.is(settled.code, 'delivery-unsupported');
      assert.is(settled.reason, 'unsupported');
      assert.match(settled.detail ?? '', `"${delivery}"`);
      assert.match(settled.detail ?? '', /accepts moment$/);
      assert.is(settled.ack['code'], 'delivery-unsupported', 'the code attribute on control.rejected');
      refused.push(c);
    }
    assert.equal(
      (await waiting(session)).map((w) => [w.id, w.delivery]),
      [[cmd.id, 'moment']],
      'only the moment waits',
    );
    assert.not.ok(e2e.stack.find(session, 'x.qwen-code.instruction.delivered', cmd.id), 'PreToolUse left it (D7)');
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await e2e.stack.delivered(session, cmd);
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['moment', 'PostToolUse']);
    assert.ok(
      tool.seq! < e2e.stack.find(session, 'tool.completed')!.seq! &&
        e2e.stack.find(session, 'tool.completed')!.seq! < d.seq!,
      'after the running tool',
    );
    const reqs = e2e.requestsOf('q-moment');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, marker), 'not in the request that asked for the tool');
    const carrier = chatMessagesOf(reqs[1]!.body).find((m) => m.role === 'tool' && chatTextOf(m).includes(marker));
    assert.ok(carrier, "on the tool result of the same turn's next request");
    assert.ok(chatTextOf(carrier!).includes('TOOL_RAN_'), 'the result of the tool that was running');
    for (const c of refused) {
      const text = (c.data as { text: string }).text;
      assert.is(e2e.withText(text).length, 0, `refused ${text} reached no request`);
      assert.not.ok(e2e.stack.find(session, 'x.qwen-code.instruction.delivered', c.id));
    }
    assert.equal(await waiting(session), [], 'nothing waits after the turn');
  });

  test('a withdrawn instruction never reaches the model: dropped withdrawn, cause-linked to the withdraw', async () => {
    const ws = await e2e.workspace();
    const { session, release, run } = await e2e.startHeld(ws, '[[TURN]] q-withdraw run one command', (r) =>
      e2e.turnOf(r).includes('q-withdraw'),
    );
    const text = `STEER-QWEN-WITHDRAWN-${session.slice(0, 8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text });
    const w = await e2e.stack.accepted(session, 'x.qwen-code.control.withdraw', { instruction: cmd.id }, 'metadata');
    const dropped = await e2e.stack.waitFor('dropped withdrawn', () =>
      e2e.stack.find(session, 'x.qwen-code.instruction.dropped', w.id),
    );
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    assert.equal(await waiting(session), [], 'nothing waits once withdrawn');
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    await e2e.stack.waitFor('run.finished', () => e2e.stack.find(session, 'run.finished'));
    const reqs = e2e.requestsOf('q-withdraw');
    assert.ok(reqs.length >= 2, 'PostToolUse and the refired UserPromptSubmit came and went with the queue empty');
    assert.ok(e2e.stack.find(session, 'tool.completed'), 'the tool ran');
    for (const q of reqs) assert.not.ok(bodyHas(q.body, text), 'no request carries the withdrawn text');
    assert.is(e2e.withText(text).length, 0);
    assert.not.ok(e2e.stack.find(session, 'x.qwen-code.instruction.delivered', cmd.id));
    const again = await e2e.stack.send(
      e2e.stack.command(session, 'x.qwen-code.control.withdraw', { instruction: cmd.id }, 'metadata'),
    );
    assert.equal(
      again.outcome === 'rejected' ? [again.code, again.detail] : again,
      ['not-waiting', 'already withdrawn; nothing more was done'],
      'a second withdraw finds nothing to take back',
    );
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(e2e.stack.errors, []);
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
