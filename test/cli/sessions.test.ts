import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SESSIONS_EXIT, renderRows, runSessions } from '../../src/cli/sessions-command.js';
import { rowsFrom } from '../../src/consumer/roster.js';
import { plain } from '../../src/audit/paint.js';
import { sink, startTestStack } from './support.js';

test('lists live sessions with what the claimant declares; --json gives rows', async () => {
  const on = await startTestStack();
  try {
    const s = await on.openSession();
    const out = sink();
    assert.is(await runSessions({ relay: on.relayUrl, token: on.token, sender: 't' }, { out: out.stream }), SESSIONS_EXIT.ok);
    const line = out.text().split('\n').find((l) => l.startsWith(s.session))!;
    assert.ok(line, out.text());
    assert.match(line, 'claude-code');
    assert.match(line, ' instruct ');
    assert.match(line, 'x.claude-code.control.instruct');

    const json = sink();
    await runSessions({ relay: on.relayUrl, token: on.token, sender: 't', json: true }, { out: json.stream });
    const rows = JSON.parse(json.text()) as ReturnType<typeof rowsFrom>;
    const row = rows.find((r) => r.session === s.session)!;
    assert.is(row.agent, 'claude-code');
    assert.is(row.instruct, 'x.claude-code.control.instruct');
    assert.is(row.respond, true);
    assert.is(row.claimants, 1);
  } finally {
    await on.stop();
  }
});

test('a claimant with the gate off shows steering off', async () => {
  const off = await startTestStack({ instruct: false });
  try {
    const s = await off.openSession();
    const json = sink();
    await runSessions({ relay: off.relayUrl, token: off.token, sender: 't', json: true }, { out: json.stream });
    const row = (JSON.parse(json.text()) as ReturnType<typeof rowsFrom>).find((r) => r.session === s.session)!;
    assert.is(row.instruct, undefined);
    assert.equal(row.accepts, ['control.attention.respond']);
  } finally {
    await off.stop();
  }
});

test('rows mark sessions with several claimants; an empty roster says so', () => {
  const rows = rowsFrom([
    { session: 'a', agent: 'claude-code', control: { accepts: ['x.claude-code.control.instruct'] } },
    { session: 'a', agent: 'other' },
  ]);
  assert.equal(rows.map((r) => r.claimants), [2, 2]);
  assert.match(renderRows(rows, plain), 'a (2 claimants)');
  assert.match(renderRows([], plain), 'no live sessions');
});

test('an unreachable relay exits 7', async () => {
  const out = sink();
  assert.is(await runSessions({ relay: 'ws://127.0.0.1:1/socket', sender: 't' }, { out: out.stream }), SESSIONS_EXIT.unreachable);
  assert.match(out.text(), 'cannot reach relay');
});

test.run();
