// Cline 3.0.65's hub approvals answered with `aep-steer respond allow|deny` (D34): the words
// mean the same on every vendor and map onto Cline's own `approve`/`deny`. The request says
// what the tool will run (D35); one answered in Cline's own client first is refused "not pending"
// and nothing more is recorded as answered.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import { clineHub } from '../support/cline-hub-e2e.js';
import { e2eSuite } from '../support/e2e-stack.js';

const e2e = e2eSuite('cline', { label: 'cline respond' });
const hub = clineHub(e2e);

const answeredOf = (request: string) =>
  e2e.stack.events.filter((e) => e.type === 'attention.answered' && e.subject === request);

if (e2e.installed) {
  test('respond allow answers a hub approval as approve: the tool runs', async () => {
    const { session: s, turn, request: r } = await hub.asking('ALLOWWORD');
    assert.equal(
      (r.data as { options: { id: string }[] }).options.map((o) => o.id),
      ['approve', 'deny'],
    );
    // D35: the operator reads what the tool will run.
    assert.is(r.capture, 'redacted');
    assert.match((r.data as { prompt: string }).prompt, /run_commands: .*TOOL_RAN_/);
    const a = await e2e.respond(s, r.id, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    assert.ok((await turn).ok);
    assert.ok(
      e2e.toolOutputs('ALLOWWORD').some((t) => t.includes('TOOL_RAN_')),
      'the approved tool ran',
    );
    const answered = await e2e.stack.waitFor('attention.answered', () => answeredOf(r.id)[0]);
    assert.equal(answered.data, { answer: { option: 'approve' }, via: 'control' });
  });

  test("respond deny (no --request: the session's only one) refuses the tool", async () => {
    const { session: s, turn, request: r } = await hub.asking('DENYWORD');
    const d = await e2e.respond(s, undefined, 'deny');
    assert.is(d.code, RESPOND_EXIT.answered, d.out);
    assert.ok((await turn).ok);
    const results = e2e.toolOutputs('DENYWORD');
    assert.ok(
      results.length > 0 && results.every((t) => !t.includes('TOOL_RAN_')),
      `the denied tool did not run: ${results.join(' | ')}`,
    );
    const answered = await e2e.stack.waitFor('attention.answered', () => answeredOf(r.id)[0]);
    assert.equal(answered.data, { answer: { option: 'deny' }, via: 'control' });
  });

  test('an approval answered in Cline first: a later respond exits not pending, already answered at the agent', async () => {
    const { session: s, turn, request: r } = await hub.asking('OOBWORD');
    const approvalId = await e2e.stack.waitFor('the hub approval', () => hub.approvalIds.get(s));
    assert.ok((await hub.driver.command('approval.respond', s, { approvalId, approved: true })).ok);
    assert.ok((await turn).ok);
    await e2e.stack.waitFor('the oob answer', () => answeredOf(r.id)[0]);
    const late = await e2e.respond(s, r.id, 'deny');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'already answered at the agent');
    assert.equal(
      answeredOf(r.id).map((e) => (e.data as { via: string }).via),
      ['oob'],
      'only the answer given in Cline',
    );
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
