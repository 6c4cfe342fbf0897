// The relay link under the real session runtime: a consumer's instruct crosses the relay to an
// adapter (startAdapter), is acked, rides the next eligible hook reply, and the delivered event
// comes back through the relay cause-linked to the command (D4, D8, D9, D17).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { RelayConsumer } from '../../src/relay/consumer.js';
import { startRelay } from '../../src/relay/server.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor } from '../../src/streams/run.js';
import { adapter } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { freshSession } from '../support/relay-harness.js';

test('instruct through the relay: accepted, delivered in the hook reply, delivered event cause-linked', async () => {
  const relay = await startRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const surface = fakeSurface();
  const link = connectRelay({ url: relay.socketUrl, token: 'tok', agent: surface.token, accepts: acceptsFor(surface, true) });
  const a = await adapter({ surface, relay: link });
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'test-cli' });
  const s = freshSession();
  const seen: AepEvent[] = [];
  let delivered!: (e: AepEvent) => void;
  const deliveredP = new Promise<AepEvent>((r) => (delivered = r));
  await c.subscribe({ filter: { session: s } }, {
    onEvent: (e) => {
      seen.push(e);
      if (e.type === 'x.claude-code.instruction.delivered') delivered(e);
    },
  });
  await a.post(hookBody('SessionStart', s));
  // The adapter's session.started reaching the relay is its claim on the session.
  let entries = await c.roster();
  for (let i = 0; i < 200 && !entries.some((e) => e.session === s); i++) entries = await c.roster();
  const cmd = command({ agent: 'test-cli', host: 'h' }, s, { type: surface.steeringType, capture: 'redacted', data: { text: 'use the staging database' } });
  const r = await c.send(cmd, { timeoutMs: 5000 });
  assert.is(r.outcome, 'accepted');
  const reply = await a.post(hookBody('UserPromptSubmit', s));
  assert.match(reply.text, /use the staging database/);
  const d = await deliveredP;
  assert.is(d.cause, cmd.id);
  assert.ok(seen.some((e) => e.type === surface.steeringType && e.id === cmd.id), 'the command is in the stream');
  await c.close();
  await a.handle.close();
  await relay.close();
});

test.run();
