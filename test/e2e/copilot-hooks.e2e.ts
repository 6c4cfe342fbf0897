// D50 on the hook lane of the real GitHub Copilot CLI 1.0.102 against the loopback mock Chat
// Completions API (BYOK, no GitHub login), through this project's relay and adapter, with the
// installer's `.github/hooks/aep-steer.json` in a folder the run trusts (`--trust-folder`): a steer
// sent while a slow shell call runs is delivered at postToolUse and is in the same turn's next model
// request, on that call's result; the session's stream validates against the AEP schemas and the
// audit of the adapter's log is clean. In a folder Copilot does not trust, no hook arrives at all.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditFiles } from '../../src/audit/audit.js';
import { validateEvent } from '../../src/protocol/validate.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { chatMessagesOf, chatTextOf, spawnCli } from '../support/vendor-e2e.js';

const e2e = e2eSuite('copilot', { label: 'copilot hooks' });
const INSTRUCT = 'x.copilot.control.instruct';

if (e2e.installed) {
  test("a steer sent while a slow shell call runs lands on that call's result, in the same turn's next request", async () => {
    const { session, tool, run, release } = await e2e.slowRun('cp-steer');
    const marker = `STEER-COPILOT-HOOK-${session.slice(0, 8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text: marker, delivery: 'steer' });
    assert.not.ok(e2e.stack.find(session, 'x.copilot.instruction.delivered', cmd.id), 'nothing delivered mid-call');
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await e2e.stack.delivered(session, cmd);
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['steer', 'postToolUse']);
    const completed = e2e.stack.find(session, 'tool.completed');
    assert.ok(completed && tool.seq! < completed.seq! && completed.seq! <= d.seq!, 'delivered after the running call');

    const reqs = e2e.requestsOf('cp-steer');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(JSON.stringify(reqs[0]!.body).includes(marker), 'not in the request that asked for the call');
    const carrier = chatMessagesOf(reqs[1]!.body).find((m) => m.role === 'tool' && chatTextOf(m).includes(marker));
    assert.ok(carrier, "the same turn's next request carries it on the slow call's result");
    assert.ok(chatTextOf(carrier!).includes('TOOL_RAN_'), 'the result of the call that was running');

    await e2e.stack.waitFor('session.ended', () => e2e.stack.find(session, 'session.ended'));
    const mine = e2e.stack.events.filter((e) => e.session === session);
    for (const e of mine) assert.equal(validateEvent(e), [], `${e.type} ${JSON.stringify(e).slice(0, 400)}`);
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(audit.violations, [], "aep-steer audit of the adapter's log is clean");
    assert.ok(
      audit.instructions.some((i) => i.id === cmd.id),
      'the audit follows the instruction',
    );
  });

  test('in a folder Copilot does not trust, no hook arrives', async () => {
    const ws = await e2e.workspace();
    const before = e2e.stack.events.filter((e) => e.type === 'session.started').length;
    const r = await spawnCli(
      e2e.binary,
      ['--allow-all', '-p', '[[TURN]] untrusted run one command'],
      ws.project,
      ws.env,
    ).done;
    assert.is(r.code, 0, r.stderr.slice(-2000));
    assert.ok(e2e.withText('untrusted run one command').length > 0, 'the run reached the model');
    assert.is(e2e.stack.events.filter((e) => e.type === 'session.started').length, before, 'no session began');
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(e2e.stack.errors, []);
  });
}

test.run();
