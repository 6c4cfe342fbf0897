// D37 liveness, through a real relay and Claude Code adapter: a session shows its working
// directory and title, a command never refreshes its last activity, an invocation that fires only
// its end moment is no session, a silent session shows `stale`, and a session whose adapter went
// away is still listed (from the relay's history) and refused with what to do.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { connectEmitter } from '../support/emitter-link.js';
import { startRelay } from '../../src/relay/server.js';
import { parseTokensFile } from '../../src/relay/acl.js';
import { SessionEmitter } from '../../src/protocol/index.js';
import { INSTRUCT_EXIT, runInstruct } from '../../src/cli/instruct-command.js';
import { runSessions, SESSIONS_EXIT } from '../../src/cli/sessions-command.js';
import type { SessionRow } from '../../src/consumer/roster.js';
import { sink, startTestStack } from './support.js';

const rowsOf = async (relay: string, token: string, all = false): Promise<SessionRow[]> => {
  const out = sink();
  assert.is(await runSessions({ relay, token, sender: 't', json: true, all }, { out: out.stream }), SESSIONS_EXIT.ok);
  return JSON.parse(out.text()) as SessionRow[];
};

test("sessions: cwd and title, last activity the agent's own, no end-only session, offline from history", async () => {
  const stack = await startTestStack();
  try {
    const s = await stack.openSession({ cwd: '/home/dev/shop', prompt: 'Fix the checkout total\nthen run the tests' });
    const flags = {
      relay: stack.relayUrl,
      token: stack.token,
      sender: 'alice',
      session: s.session,
      wait: true,
      timeout: '20000',
      ackWindow: '10000',
    };
    await stack.waitFor(
      (e) => e.session === s.session && e.type === 'x.claude-code.session.described' && e.data?.['title'] !== undefined,
    );
    const row = async () => (await rowsOf(stack.relayUrl, stack.token)).find((r) => r.session === s.session)!;
    const first = await row();
    assert.is(first.state, 'live');
    assert.is(first.cwd, '/home/dev/shop');
    assert.is(first.title, 'Fix the checkout total', 'the first line of the first prompt');

    // Commands and the adapter's answers to them are not the agent speaking.
    await new Promise((r) => setTimeout(r, 15));
    assert.is(
      await runInstruct('keep it small', { ...flags, wait: false }, { out: sink().stream, err: sink().stream }),
      INSTRUCT_EXIT.accepted,
    );
    assert.is(
      await runInstruct('  ', { ...flags, wait: false }, { out: sink().stream, err: sink().stream }),
      INSTRUCT_EXIT.rejected,
    );
    assert.is((await row()).lastEventAt, first.lastEventAt, 'an instruct and its acks leave the last activity alone');

    // `claude mcp list`: a process that fires SessionEnd and nothing else.
    const listOnly = await stack.postHook({
      session_id: 'mcp-list-1',
      hook_event_name: 'SessionEnd',
      cwd: '/home/dev',
      reason: 'other',
    });
    assert.is(listOnly.status, 200);
    assert.equal(listOnly.body, {}, 'the neutral reply');
    assert.not.ok(
      (await rowsOf(stack.relayUrl, stack.token, true)).some((r) => r.session === 'mcp-list-1'),
      'not a session',
    );
    assert.not.ok(
      stack.seen.some((e) => e.session === 'mcp-list-1'),
      'nothing emitted for it',
    );

    // --vendor that is not the session's: said with the vendor it is.
    const wrong = sink();
    assert.is(
      await runInstruct('x', { ...flags, vendor: 'codex' }, { out: wrong.stream, err: sink().stream }),
      INSTRUCT_EXIT.refused,
    );
    assert.match(wrong.text(), 'vendor-mismatch');
    assert.match(wrong.text(), `session ${s.session} is a claude-code session, not codex`);

    // The adapter goes away: the session is still known, from the relay's history.
    await stack.adapter.close();
    const deadline = Date.now() + 5000;
    while ((await rowsOf(stack.relayUrl, stack.token)).some((r) => r.session === s.session) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const plain = sink();
    assert.is(
      await runSessions({ relay: stack.relayUrl, token: stack.token, sender: 't' }, { out: plain.stream }),
      SESSIONS_EXIT.ok,
    );
    assert.match(plain.text(), /1 session whose adapter is not connected not shown \(--all shows them\)/);
    const offline = (await rowsOf(stack.relayUrl, stack.token, true)).find((r) => r.session === s.session)!;
    assert.ok(offline, '--all lists it');
    assert.is(offline.state, 'adapter offline');
    assert.is(offline.agent, 'claude-code');
    assert.is(offline.cwd, '/home/dev/shop');
    const refused = sink();
    assert.is(
      await runInstruct('are you there', { ...flags, wait: true }, { out: refused.stream, err: sink().stream }),
      INSTRUCT_EXIT.refused,
    );
    assert.match(refused.text(), 'adapter-offline');
    assert.match(
      refused.text(),
      'its adapter is not connected; start its adapter again with `aep-steer up claude-code`, then send again',
    );
    const unknown = sink();
    assert.is(
      await runInstruct('x', { ...flags, session: 'never-seen' }, { out: unknown.stream, err: sink().stream }),
      INSTRUCT_EXIT.refused,
    );
    assert.match(unknown.text(), 'no-route');
  } finally {
    await stack.stop();
  }
});

test('a live session silent past its stale window shows stale, and a late ack does not refresh it', async () => {
  const stack = await startTestStack();
  const emitter = connectEmitter({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'claude-code',
    accepts: ['x.claude-code.control.instruct'],
  });
  try {
    await emitter.ready();
    const e = new SessionEmitter({ agent: 'claude-code', session: 'killed-1', host: 'h' });
    const long = Date.now() - 10_000;
    emitter.send(e.emit({ type: 'session.started', at: long }));
    emitter.send(
      e.emit({
        type: 'x.claude-code.session.described',
        at: long,
        capture: 'redacted',
        data: { cwd: '/w', title: 'Ship it', stale_after_ms: 5_000 },
      }),
    );
    emitter.send(e.emit({ type: 'control.accepted', cause: 'c-late', at: Date.now() }));
    await stack.waitFor((x) => x.session === 'killed-1' && x.type === 'control.accepted');
    const row = (await rowsOf(stack.relayUrl, stack.token)).find((r) => r.session === 'killed-1')!;
    assert.is(row.state, 'stale', 'shown by default (it is not ended), marked stale');
    assert.is(row.lastEventAt, new Date(long).toISOString(), 'the late ack did not refresh it');

    const full = (await stack.observer.roster()).find((r) => r.session === 'killed-1')!;
    assert.is(full.title, 'Ship it');
    assert.is(full.stale, true);
  } finally {
    await emitter.close();
    await stack.stop();
  }
});

test('the roster gives a title only to a viewer whose ceiling allows redacted', async () => {
  const relay = await startRelay({
    port: 0,
    tokens: parseTokensFile(
      JSON.stringify({
        tokens: [
          { token: 'emit-tok', identity: 'claude-code', emit: ['claude-code'] },
          { token: 'meta-tok', identity: 'watcher', capture: 'metadata' },
          { token: 'red-tok', identity: 'console', capture: 'redacted' },
        ],
      }),
    ),
  });
  const emitter = connectEmitter({
    url: relay.socketUrl,
    token: 'emit-tok',
    agent: 'claude-code',
    accepts: ['x.claude-code.control.instruct'],
  });
  try {
    await emitter.ready();
    const e = new SessionEmitter({ agent: 'claude-code', session: 'titled-1', host: 'h' });
    emitter.send(e.emit({ type: 'session.started' }));
    emitter.send(
      e.emit({
        type: 'x.claude-code.session.described',
        capture: 'redacted',
        data: { cwd: '/w', title: 'Secret plan', stale_after_ms: 3_600_000 },
      }),
    );
    const entryFor = async (token: string) => {
      const c = await RelayConsumer.connect({
        url: relay.socketUrl,
        token,
        agent: token === 'meta-tok' ? 'watcher' : 'console',
      });
      try {
        const deadline = Date.now() + 5000;
        for (;;) {
          const found = (await c.roster()).find((r) => r.session === 'titled-1' && r.cwd !== undefined);
          if (found || Date.now() > deadline) return found;
          await new Promise((r) => setTimeout(r, 30));
        }
      } finally {
        await c.close();
      }
    };
    const meta = await entryFor('meta-tok');
    assert.is(meta?.cwd, '/w');
    assert.is(meta?.title, undefined, 'a metadata watcher never gets the title');
    assert.is((await entryFor('red-tok'))?.title, 'Secret plan');
  } finally {
    await emitter.close();
    await relay.close();
  }
});

test.run();
