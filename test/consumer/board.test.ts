// The consumer board (inspect page, console, MCP list_sessions) never leaves out a session the
// relay's roster lists: the roster and the stream come apart (the stream lags a roster read, a
// relay drops events to a slow subscriber, history evicted while the claim lives), and a
// session the relay routes to must still be on the board. Real relay, real claims.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { Board } from '../../src/consumer/board.js';
import { testRelay } from '../support/relay-store.js';
import { startTestTarget } from '../support/relay-target.js';
import { freshSession } from '../support/relay-harness.js';

const INSTRUCT = 'x.claude-code.control.instruct';

test('a session the roster lists and the stream has not shown yet is on the board, as the roster describes it', async () => {
  const relay = await testRelay({ port: 0, token: 'tok' });
  const s = freshSession('board');
  const target = await startTestTarget({
    url: relay.socketUrl,
    token: 'tok',
    agent: 'claude-code',
    accepts: [INSTRUCT, 'control.attention.respond'],
    sessions: [s],
  });
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'board-test' });
  try {
    let roster = await c.roster();
    for (let i = 0; i < 200 && !roster.some((r) => r.session === s); i += 1) roster = await c.roster();
    const board = new Board(relay.url);
    board.setRoster(roster);
    // No event folded: the session is known from the roster only.
    const row = board.snapshot().sessions.find((x) => x.session === s);
    assert.ok(row, 'the rostered session is on the board');
    assert.is(row.agent, 'claude-code');
    assert.is(row.claimants, 1);
    assert.is(row.state, 'idle');
    assert.is(row.relayQueued, 0);
    assert.equal(row.accepts, [INSTRUCT, 'control.attention.respond']);
    assert.type(row.updatedAt, 'string');
    assert.ok(row.updatedAt.length > 0, 'last activity from the roster');
    // Once its events are folded, the stream's view describes it (and no second row appears).
    const started = target.emitter(s).emit({ type: 'run.started', run: 'r1' });
    board.apply(started);
    const rows = board.snapshot().sessions.filter((x) => x.session === s);
    assert.is(rows.length, 1);
    assert.is(rows[0]!.relayQueued, undefined);
    assert.is(rows[0]!.events, 1);
  } finally {
    await c.close();
    await target.close();
    await relay.close();
  }
});

test.run();
