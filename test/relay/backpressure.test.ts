// AEP-0003 §8.4 against a real consumer that stops reading: debug/info are dropped, notice and
// above are delivered until the relay disconnects with a reason, and never silently skipped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RelayHandle } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { emitterFor, freshSession, ndjson, post, SseClient, WsPeer } from '../support/relay-harness.js';

const PAD = 'p'.repeat(4000);

/** Posts batches (every 10th event notice, the rest info) until the relay reports a disconnect. */
async function flood(relay: RelayHandle, session: string): Promise<AepEvent[]> {
  const em = emitterFor(session);
  const notices: AepEvent[] = [];
  for (let batch = 0; batch < 400 && relay.stats().disconnected === 0; batch++) {
    const evs = Array.from({ length: 100 }, (_, i) =>
      em.emit({ type: 'progress.status', severity: i % 10 === 0 ? 'notice' : 'info', data: { phase: PAD } }),
    );
    notices.push(...evs.filter((e) => e.severity === 'notice'));
    assert.is((await post(relay.url, ndjson(evs))).status, 202);
  }
  assert.ok(relay.stats().disconnected > 0, 'the slow consumer was never disconnected');
  return notices;
}

/** The notice events received must be exactly the first N posted: nothing urgent skipped. */
function assertNoticePrefix(got: AepEvent[], posted: AepEvent[]): void {
  const ids = got.filter((e) => e.severity === 'notice').map((e) => e.id);
  assert.ok(ids.length > 0);
  assert.equal(
    ids,
    posted.slice(0, ids.length).map((e) => e.id),
  );
}

test('SSE: a stalled reader loses only info events, then the stream ends with a reason', async () => {
  const relay = await testRelay({
    port: 0,
    storePath: ':memory:',
    bufferCap: 200,
    backpressure: { soft: 64 * 1024, hard: 256 * 1024 },
  });
  const s = freshSession();
  const sse = await SseClient.open(relay.url, { filter: JSON.stringify({ session: s }) });
  const res = (sse as unknown as { req: { res: NodeJS.ReadableStream } }).req.res;
  res.pause();
  const notices = await flood(relay, s);
  assert.ok(relay.stats().dropped > 0);
  res.resume();
  await sse.done();
  assert.is(sse.comments.at(-1), 'closing backpressure');
  assertNoticePrefix(sse.events, notices);
  assert.ok(sse.events.filter((e) => e.severity === 'info').length < notices.length * 9);
  await relay.close();
});

test('WS: a stalled reader gets a closing frame with delivered positions and close 1013', async () => {
  const relay = await testRelay({
    port: 0,
    storePath: ':memory:',
    bufferCap: 200,
    backpressure: { soft: 64 * 1024, hard: 256 * 1024 },
  });
  const s = freshSession();
  const p = await WsPeer.greet(relay.socketUrl, { role: 'consumer' });
  p.send({ type: 'subscribe', id: 'slow', filter: { session: s } });
  await p.next((f) => f.type === 'subscribed');
  const socket = (p.ws as unknown as { _socket: NodeJS.ReadableStream })._socket;
  socket.pause();
  const notices = await flood(relay, s);
  socket.resume();
  assert.is(await p.closed(), 1013);
  const closing = p.frames.at(-1)!.json;
  assert.is(closing.type, 'closing');
  assert.is(closing.reason, 'backpressure');
  const events = p.events();
  const last = events.at(-1)!;
  assert.equal(closing.delivered, [{ sub: 'slow', session: s, epoch: 0, seq: last.seq }]);
  assertNoticePrefix(events, notices);
  await relay.close();
});

test.run();
