// D17 over HTTP ingest: a command POSTed to /events used to be stored with 202 and never routed,
// so its sender waited for an ack that could not come. It is now routed exactly as over
// WebSocket, with the same authorization, and a refusal is the HTTP response.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RelayHandle } from '../../src/relay/server.js';
import { freshSession, ndjson, post, SseClient } from '../support/relay-harness.js';
import { command } from '../../src/protocol/build.js';
import { adapter, claimed, consumer, instruct, TOKENS, tokensRelay } from './fixture.js';

let relay: RelayHandle;
test.before(async () => {
  relay = await tokensRelay();
});
test.after(async () => {
  await relay.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

test("a POSTed instruct reaches the claimant byte for byte, and its ack reaches the sender's subscription", async () => {
  const s = freshSession('http-cmd');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(alice, s);
  const acks = await SseClient.open(
    relay.url,
    { filter: JSON.stringify({ session: s, type: 'control.accepted' }) },
    bearer(TOKENS.alice),
  );
  const cmd = instruct(s, 'run the linter');
  const r = await post(relay.url, JSON.stringify(cmd), { ...bearer(TOKENS.alice), 'content-type': 'application/json' });
  assert.is(r.status, 202);
  assert.equal(r.body.routed, [cmd.id]);
  await acks.until((c) => c.events.some((e) => e.cause === cmd.id));
  assert.equal(
    cc.received.map((c) => c.id),
    [cmd.id],
  );
  assert.equal(cc.received[0], cmd);
  acks.close();
  await alice.close();
  await cc.close();
});

test('refusals come back in the HTTP response with the command id as cause, and nothing is kept', async () => {
  const s = freshSession('http-refuse');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(alice, s);
  const cases: { token: string; cmd: ReturnType<typeof instruct>; status: number; code: string; detail: RegExp }[] = [
    {
      token: TOKENS.watcher,
      cmd: instruct(s, 'a', { agent: 'watcher' }),
      status: 403,
      code: 'unauthorized',
      detail: /watcher is watch-only/,
    },
    {
      token: TOKENS.alice,
      cmd: instruct(s, 'b', { agent: 'admin' }),
      status: 403,
      code: 'unauthorized',
      detail: /names "admin" as its sender/,
    },
    {
      token: TOKENS.alice,
      cmd: instruct(freshSession('nobody'), 'c'),
      status: 409,
      code: 'no-route',
      detail: /no live connection claims/,
    },
  ];
  for (const c of cases) {
    const r = await post(relay.url, ndjson([c.cmd]), bearer(c.token));
    assert.is(r.status, c.status, c.code);
    assert.equal([r.body.type, r.body.code, r.body.cause], ['error', c.code, c.cmd.id]);
    assert.match(r.body.detail, c.detail);
  }
  // Unsupported: the claimant never declared the type.
  const other = command({ agent: 'alice', host: 'h' }, s, {
    type: 'control.attention.respond',
    subject: 'req-1',
    cause: 'req-1',
    data: { answer: { option: 'allow' } },
  });
  const u = await post(relay.url, ndjson([other]), bearer(TOKENS.alice));
  assert.equal([u.status, u.body.code], [422, 'unsupported']);
  assert.is(cc.received.length, 0);
  const h = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session: s }]), live: '0' },
    bearer(TOKENS.alice),
  );
  await h.done();
  assert.equal(
    h.events.map((e) => e.type),
    ['session.started'],
  );
  await alice.close();
  await cc.close();
});

test.run();
