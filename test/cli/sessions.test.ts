import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SESSIONS_EXIT, ago, renderRows, runSessions } from '../../src/cli/sessions-command.js';
import { rowsFrom } from '../../src/consumer/roster.js';
import { plain } from '../../src/audit/paint.js';
import { command } from '../../src/protocol/index.js';
import { sink, startTestStack } from './support.js';

test('lists live sessions with what the claimant declares; --json gives rows', async () => {
  const on = await startTestStack();
  try {
    const s = await on.openSession();
    const out = sink();
    assert.is(
      await runSessions({ relay: on.relayUrl, token: on.token, sender: 't' }, { out: out.stream }),
      SESSIONS_EXIT.ok,
    );
    const line = out
      .text()
      .split('\n')
      .find((l) => l.startsWith(s.session))!;
    assert.ok(line, out.text());
    assert.match(line, 'claude-code');
    assert.match(line, ' instruct ');
    assert.match(line, 'x.claude-code.control.instruct');
    assert.match(line, / live +\d+ s ago +0 /, 'state, last activity, queue');

    const json = sink();
    await runSessions({ relay: on.relayUrl, token: on.token, sender: 't', json: true }, { out: json.stream });
    const rows = JSON.parse(json.text()) as ReturnType<typeof rowsFrom>;
    const row = rows.find((r) => r.session === s.session)!;
    assert.is(row.agent, 'claude-code');
    assert.is(row.instruct, 'x.claude-code.control.instruct');
    assert.is(row.respond, true);
    assert.is(row.claimants, 1);
    assert.equal([row.state, row.queued, typeof row.lastEventAt], ['live', 0, 'string']);
  } finally {
    await on.stop();
  }
});

test('an ended session is hidden unless --all; the queue counts accepted, unsettled instructions', async () => {
  const on = await startTestStack();
  try {
    const live = await on.openSession();
    const gone = await on.openSession();
    // Two instructions wait on the live session (no moment takes them while the test runs).
    for (const text of ['one', 'two']) {
      const cmd = command({ agent: 't' }, live.session, {
        type: 'x.claude-code.control.instruct',
        data: { text },
        capture: 'redacted',
      });
      assert.is((await on.observer.send(cmd)).outcome, 'accepted');
    }
    for (const h of gone.closing) await on.postHook(h);
    await on.waitFor((e) => e.session === gone.session && e.type === 'session.ended');
    const json = sink();
    await runSessions({ relay: on.relayUrl, token: on.token, sender: 't', json: true }, { out: json.stream });
    const rows = JSON.parse(json.text()) as ReturnType<typeof rowsFrom>;
    assert.equal(
      rows.map((r) => [r.session, r.state, r.queued]),
      [[live.session, 'live', 2]],
    );
    const text = sink();
    await runSessions({ relay: on.relayUrl, token: on.token, sender: 't' }, { out: text.stream });
    assert.match(text.text(), '1 ended session not shown (--all shows them)');
    const all = sink();
    await runSessions({ relay: on.relayUrl, token: on.token, sender: 't', all: true, json: true }, { out: all.stream });
    const ended = (JSON.parse(all.text()) as ReturnType<typeof rowsFrom>).find((r) => r.session === gone.session);
    assert.is(ended?.state, 'ended');
  } finally {
    await on.stop();
  }
});

test('a refused token exits 8 with a hint; it is not reported as unreachable', async () => {
  const on = await startTestStack();
  try {
    const out = sink();
    assert.is(
      await runSessions({ relay: on.relayUrl, token: 'wrong', sender: 't' }, { out: out.stream }),
      SESSIONS_EXIT.unauthorized,
    );
    assert.match(out.text(), 'refused the token (HTTP 401)');
    assert.match(out.text(), "pass the relay's token with --token or AEP_TOKEN");
    assert.not.match(out.text(), 'cannot reach');
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
  assert.equal(
    rows.map((r) => r.claimants),
    [2, 2],
  );
  assert.match(renderRows(rows, plain), 'a (2 claimants)');
  assert.match(renderRows([], plain), 'no live sessions');
  assert.match(renderRows([], plain, { all: true }), 'no sessions on the relay');
});

test('the lanes that reach a session are listed; a session whose adapter named none shows a dash', () => {
  const rows = rowsFrom([
    { session: 'a', agent: 'codex', lanes: ['hook', 'app-server'] },
    { session: 'b', agent: 'codex' },
  ]);
  assert.equal(rows[0]!.lanes, ['hook', 'app-server']);
  assert.is(rows[1]!.lanes, undefined);
  const text = renderRows(rows, plain);
  assert.match(text, 'LANES');
  assert.match(text, /a\s.*hook, app-server/);
  assert.not.match(text, /b\s.*hook/);
});

test('START says yes only where a start would begin a turn: busy while one runs, a dash where nothing can start (D43)', () => {
  const rows = rowsFrom([
    { session: 'idle-one', agent: 'codex', lanes: ['hook', 'app-server'], startable: true },
    { session: 'busy-one', agent: 'codex', lanes: ['hook', 'app-server'], startable: true, running: true },
    { session: 'tui-one', agent: 'claude-code', lanes: ['hook'], startable: false, running: true },
  ]);
  assert.equal(
    rows.map((r) => r.running),
    [undefined, true, true],
  );
  const [head, ...body] = renderRows(rows, plain).split('\n');
  // Read the way an orchestrator's script reads it: the START column, between START and ACCEPTS.
  const column = (row: string) => row.slice(head!.indexOf('START'), head!.indexOf('ACCEPTS')).trim();
  assert.equal(body.map(column), ['yes', 'busy', '-']);
});

test('last activity reads as a short age', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  assert.equal(
    ['2026-12-01T11:59:48Z', '2026-12-01T11:56:00Z', '2026-12-01T09:00:00Z', '2026-11-25T12:00:00Z', undefined].map(
      (t) => ago(t, now),
    ),
    ['12 s ago', '4 min ago', '3 h ago', '6 d ago', '-'],
  );
});

test('an unreachable relay exits 7', async () => {
  const out = sink();
  assert.is(
    await runSessions({ relay: 'ws://127.0.0.1:1/socket', sender: 't' }, { out: out.stream }),
    SESSIONS_EXIT.unreachable,
  );
  assert.match(out.text(), 'cannot reach relay');
});

test.run();
