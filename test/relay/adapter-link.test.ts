// The relay link under the real session runtime: a consumer's instruct crosses the relay to an
// adapter (startAdapter), is acked, rides the next eligible hook reply, and the delivered event
// comes back through the relay cause-linked to the command (D4, D8, D9, D17).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { testRelay } from '../support/relay-store.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor } from '../../src/streams/run.js';
import { adapter } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { freshSession } from '../support/relay-harness.js';

test('instruct through the relay: accepted, delivered in the hook reply, delivered event cause-linked', async () => {
  const relay = await testRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const surface = fakeSurface();
  const link = connectRelay({
    url: relay.socketUrl,
    token: 'tok',
    agent: surface.token,
    accepts: acceptsFor(surface, true),
  });
  const a = await adapter({ surface, relay: link });
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'test-cli' });
  const s = freshSession();
  const seen: AepEvent[] = [];
  let delivered!: (e: AepEvent) => void;
  const deliveredP = new Promise<AepEvent>((r) => (delivered = r));
  await c.subscribe(
    { filter: { session: s } },
    {
      onEvent: (e) => {
        seen.push(e);
        if (e.type === 'x.claude-code.instruction.delivered') delivered(e);
      },
    },
  );
  await a.post(hookBody('SessionStart', s));
  // The adapter's session.started reaching the relay is its claim on the session.
  let entries = await c.roster();
  for (let i = 0; i < 200 && !entries.some((e) => e.session === s); i++) entries = await c.roster();
  const cmd = command({ agent: 'test-cli', host: 'h' }, s, {
    type: surface.steeringType,
    capture: 'redacted',
    data: { text: 'use the staging database' },
  });
  const r = await c.send(cmd, { timeoutMs: 5000 });
  assert.is(r.outcome, 'accepted');
  const reply = await a.post(hookBody('UserPromptSubmit', s));
  assert.match(reply.text, /use the staging database/);
  const d = await deliveredP;
  assert.is(d.cause, cmd.id);
  assert.ok(
    seen.some((e) => e.type === surface.steeringType && e.id === cmd.id),
    'the command is in the stream',
  );
  await c.close();
  await a.handle.close();
  await relay.close();
});

test('D23: a restarted adapter re-claims every session of its log, ended ones included, so their commands route to it again', async () => {
  const relay = await testRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const surface = fakeSurface();
  const link = () =>
    connectRelay({ url: relay.socketUrl, token: 'tok', agent: surface.token, accepts: acceptsFor(surface, true) });
  const first = await adapter({ surface, relay: link() });
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'test-cli' });
  const live = freshSession();
  const ended = freshSession();
  await first.post(hookBody('SessionStart', live));
  await first.post(hookBody('SessionStart', ended));
  await first.post(hookBody('SessionEnd', ended));
  let entries = await c.roster();
  for (let i = 0; i < 200 && !entries.some((e) => e.session === ended); i++) entries = await c.roster();
  await first.handle.close();
  // With the first adapter gone nobody claims the sessions.
  const before = await c.send(
    command({ agent: 'test-cli', host: 'h' }, live, {
      type: surface.steeringType,
      capture: 'redacted',
      data: { text: 'one' },
    }),
    { timeoutMs: 5000 },
  );
  assert.is(before.outcome, 'refused');

  const second = await adapter({ surface, relay: link(), logPath: first.logPath });
  const cmd = command({ agent: 'test-cli', host: 'h' }, live, {
    type: surface.steeringType,
    capture: 'redacted',
    data: { text: 'run the linter' },
  });
  let r = await c.send(cmd, { timeoutMs: 5000 });
  for (let i = 0; i < 100 && r.outcome === 'refused'; i++) {
    await new Promise((res) => setTimeout(res, 20));
    r = await c.send(cmd, { timeoutMs: 5000 });
  }
  assert.is(r.outcome, 'accepted', 'routed to the restarted adapter without any new hook');
  const reply = await second.post(hookBody('UserPromptSubmit', live));
  assert.match(reply.text, /run the linter/);
  // The ended session is re-claimed too: a new command gets "session ended" from the adapter (D6), not no-route.
  const gone = await c.send(
    command({ agent: 'test-cli', host: 'h' }, ended, {
      type: surface.steeringType,
      capture: 'redacted',
      data: { text: 'x' },
    }),
    { timeoutMs: 5000 },
  );
  assert.is(gone.outcome, 'rejected');
  assert.match((gone as { detail?: string }).detail ?? '', /session ended/);
  await c.close();
  await second.handle.close();
  await relay.close();
});

test.run();
