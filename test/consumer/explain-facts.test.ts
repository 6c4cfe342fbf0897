// The facts beside each explained outcome, as MCP and the console show them: a refusal names who
// refused only where the verb's facts always did (instruct, cancel), and every error is an error.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { explainCancel, explainRespond, explainWithdraw } from '../../src/consumer/explain.js';
import { MCP_VOICE } from '../../src/consumer/next-step.js';

const refused = { outcome: 'refused', session: 's1', code: 'no-route', by: 'roster', detail: 'no claimant' } as const;
const unreachable = { outcome: 'unreachable', session: 's1', detail: 'connect ECONNREFUSED' } as const;
const rejected = {
  outcome: 'rejected',
  command: 'c1',
  session: 's1',
  vendor: 'codex',
  ack: 'a1',
  reason: 'refused',
  code: 'not-pending',
  detail: 'already answered',
} as const;

const facts = (x: { facts: Record<string, unknown>; isError: boolean }) => {
  assert.ok(x.isError);
  return JSON.stringify(x.facts);
};

test('refusals: cancel names who refused, withdraw and respond do not', () => {
  assert.is(
    facts(explainCancel(refused, MCP_VOICE)),
    '{"outcome":"refused","session":"s1","code":"no-route","by":"roster","detail":"no claimant"}',
  );
  assert.is(
    facts(explainWithdraw({ ...refused, instruction: 'i1' }, MCP_VOICE)),
    '{"outcome":"refused","session":"s1","instruction":"i1","code":"no-route","detail":"no claimant"}',
  );
  assert.is(
    facts(explainRespond({ ...refused, request: 'r1' }, MCP_VOICE)),
    '{"outcome":"refused","session":"s1","request":"r1","code":"no-route","detail":"no claimant"}',
  );
  assert.match(explainCancel(refused, MCP_VOICE).text, 'Refused (no-route)');
});

test('an unreachable relay: its detail among the facts and in the sentence', () => {
  for (const x of [
    explainCancel(unreachable, MCP_VOICE),
    explainWithdraw({ ...unreachable, instruction: 'i1' }, MCP_VOICE),
    explainRespond({ ...unreachable, request: 'r1' }, MCP_VOICE),
  ]) {
    assert.match(facts(x), '"detail":"connect ECONNREFUSED"}');
    assert.match(x.text, 'Relay unreachable: connect ECONNREFUSED');
  }
});

test("an adapter's rejection: ids, then reason, code and detail; a request no longer pending says so", () => {
  assert.is(
    facts(explainCancel(rejected, MCP_VOICE)),
    '{"outcome":"rejected","session":"s1","command_id":"c1","ack_id":"a1","vendor":"codex","reason":"refused","code":"not-pending","detail":"already answered"}',
  );
  const r = explainRespond({ ...rejected, request: 'r1' }, MCP_VOICE);
  assert.is(
    facts(r),
    '{"outcome":"rejected","session":"s1","request":"r1","command_id":"c1","ack_id":"a1","reason":"refused","code":"not-pending","detail":"already answered"}',
  );
  assert.match(r.text, /^Not pending: already answered;/);
  assert.match(explainWithdraw({ ...rejected, instruction: 'i1' }, MCP_VOICE).text, /^Not withdrawn \(not-pending\)/);
});

test.run();
