// The outcome fields every verb builds the same way from its settlement: the CLI prints outcomes
// as JSON, so the field order is part of what it shows.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ackRejected, deliveryTimeout, relayRefused } from '../../src/consumer/verb.js';

const base = { command: 'c1', session: 's1' };
const json = (o: unknown) => JSON.stringify(o);

test('a relay refusal names its code and the relay, with its detail only when it gave one', () => {
  assert.is(
    json({ ...base, ...relayRefused({ code: 'no-route', detail: 'no claimant' }) }),
    '{"command":"c1","session":"s1","outcome":"refused","code":"no-route","by":"relay","detail":"no claimant"}',
  );
  assert.equal(relayRefused({ code: 'no-route', detail: '' }), { outcome: 'refused', code: 'no-route', by: 'relay' });
});

test("an adapter's rejection carries its ack id and reason, then code and detail when sent", () => {
  const ack = { id: 'a1' };
  assert.is(
    json(ackRejected({ ack, reason: 'invalid', code: 'text-empty', detail: 'text is empty' })),
    '{"outcome":"rejected","ack":"a1","reason":"invalid","code":"text-empty","detail":"text is empty"}',
  );
  assert.equal(ackRejected({ ack, reason: 'refused' }), { outcome: 'rejected', ack: 'a1', reason: 'refused' });
});

test("a delivery-stage timeout keeps the ids first, the verb's own fields next, then stage, ack and one send", () => {
  const o = { ...base, vendor: 'codex', ack: 'a1' };
  assert.is(
    json(deliveryTimeout(o, { instruction: 'i1' })),
    '{"outcome":"timeout","command":"c1","session":"s1","vendor":"codex","instruction":"i1","stage":"delivery","ack":"a1","sent":1}',
  );
  assert.equal(Object.keys(deliveryTimeout(o, {})), [
    'outcome',
    'command',
    'session',
    'vendor',
    'stage',
    'ack',
    'sent',
  ]);
});

test.run();
