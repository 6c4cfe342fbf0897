// D44 on OpenHands, through a real relay and adapter against the stand-in agent server: the
// vendor keeps no queue (its append lands in the conversation at once and no route edits,
// reorders or removes it) and instruct only starts a turn, so nothing ever waits for a verb to
// change. Edit, move, promote and hold are each refused `no-queue` with a sentence that names
// what works instead, and nothing reaches the conversation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RelayConsumer } from '../../../src/consumer/connection.js';
import { sendQueueVerb } from '../../../src/consumer/queue-verbs.js';
import type { QueueVerb } from '../../../src/machines/command-inputs.js';
import { vendorTables } from '../../../src/adapters/registry.js';
import { startOpenHandsStack } from '../../support/openhands-stack.js';

const VERBS: [QueueVerb, Record<string, unknown>][] = [
  ['hold', { paused: true }],
  ['edit', { instruction: 'cmd-none', text: 'a new text' }],
  ['move', { instruction: 'cmd-none', to: 'front' }],
  ['promote', { instruction: 'cmd-none' }],
];

test('the table says why OpenHands has no queue', () => {
  const row = vendorTables.get('openhands')?.queue;
  assert.is(row?.keeps, 'none');
  assert.match(row?.calls ?? '', /no-queue/);
});

test('through the relay: every queue verb on an OpenHands session is refused no-queue, naming what works; nothing is written', async () => {
  const stack = await startOpenHandsStack({ control: true, flags: { instruct: true } });
  // An idle conversation, known to the relay before the sender connects.
  const id = stack.server.create({ message: 'hello' });
  await stack.waitFor((e) => e.session === id && e.type === 'x.openhands.session.described');
  const consumer = await RelayConsumer.connect({ url: stack.relay.socketUrl, token: stack.token, agent: 'alice' });
  try {
    const events = stack.server.conversation(id)!.events.length;
    for (const [verb, data] of VERBS) {
      const o = await sendQueueVerb(consumer, { sender: 'alice' }, { session: id, verb, data, timeoutMs: 10_000 });
      assert.is(o.outcome, 'rejected', `${verb}: ${JSON.stringify(o)}`);
      if (o.outcome !== 'rejected') return;
      assert.equal([o.reason, o.code], ['unsupported', 'no-queue'], verb);
      assert.match(o.detail ?? '', /idle "start"/);
      assert.match(o.detail ?? '', /send_input/);
    }
    assert.is(stack.server.conversation(id)!.events.length, events, 'nothing reached the conversation');
    assert.not.ok((await consumer.roster()).find((r) => r.session === id)?.paused, 'the refused hold paused nothing');
    assert.equal(stack.errors, []);
  } finally {
    await consumer.close();
    await stack.stop();
  }
});

test.run();
