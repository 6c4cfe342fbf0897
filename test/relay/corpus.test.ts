// The AEP conformance corpora through the relay's real ingest path, read in place
// (AEP_CONFORMANCE_DIR, default ../shared/aep): golden events are all accepted and served back
// byte for byte in order; every envelope-level invalid event is refused with 400.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import type { RelayHandle } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { isCommandType } from '../../src/protocol/types.js';
import { aepFile, readJson } from '../support/shared-dir.js';
import { post, SseClient } from '../support/relay-harness.js';

let relay: RelayHandle;
test.before(async () => {
  relay = await testRelay({ port: 0, storePath: ':memory:' });
});

const allGolden = (): string[] =>
  readFileSync(aepFile('fixtures', 'golden', 'golden.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
const isCommandLine = (l: string): boolean => isCommandType((JSON.parse(l) as AepEvent).type);
/** The corpus without its commands: a POSTed command is routed (D17), and this relay has no token. */
const goldenLines = (): string[] => allGolden().filter((l) => !isCommandLine(l));

test('golden: every event accepted in one batch; a live subscriber gets every line byte for byte, in order', async () => {
  const all = allGolden();
  assert.is(all.length, 64);
  const lines = goldenLines();
  assert.ok(lines.length > 50 && lines.length < 64);
  const live = await SseClient.open(relay.url, {});
  assert.is((await post(relay.url, `${lines.join('\n')}\n`)).status, 202);
  await live.until((c) => c.events.length >= lines.length);
  assert.equal(
    live.messages.filter((m) => m.data).map((m) => m.data),
    lines,
  );
  live.close();
});

test('golden: each command in the corpus is refused on a tokenless relay, as over WebSocket (D17)', async () => {
  for (const l of allGolden().filter(isCommandLine)) {
    const r = await post(relay.url, `${l}\n`);
    assert.is(r.status, 403, l);
    assert.equal([r.body.code, r.body.cause], ['unauthorized', (JSON.parse(l) as AepEvent).id]);
  }
});

test("golden: replay-all serves each session's history as posted (agent-scoped events are live only)", async () => {
  const lines = goldenLines();
  const c = await SseClient.open(relay.url, { from: 'all', live: '0' });
  await c.done();
  const served = c.messages.filter((m) => m.data).map((m) => m.data!);
  const bySession = new Map<string, string[]>();
  for (const l of lines) {
    const e = JSON.parse(l) as AepEvent;
    if (e.session === undefined) continue;
    bySession.set(e.session, [...(bySession.get(e.session) ?? []), l]);
  }
  for (const [session, expected] of bySession) {
    const got = served.filter((l) => (JSON.parse(l) as AepEvent).session === session);
    assert.equal(got, expected, session);
  }
  assert.is(served.length, [...bySession.values()].flat().length);
  // Re-posting the corpus stores nothing new: admission dedupes on (source, id).
  const again = await post(relay.url, `${lines.join('\n')}\n`);
  assert.is(again.body.stored, 0);
});

test('invalid: each envelope-level case is refused 400 invalid-event and nothing is stored', async () => {
  const { cases } = readJson<{ cases: { name: string; rule: string; event?: unknown }[] }>(
    aepFile('fixtures', 'invalid', 'cases.json'),
  );
  const envelope = cases.filter((c) => c.event !== undefined && /^AEP-0001|^AEP-0004 §2|^AEP-0002 §3/.test(c.rule));
  assert.is(envelope.length, 17);
  const before = relay.stats().events;
  for (const c of envelope) {
    const res = await post(relay.url, JSON.stringify(c.event), { 'content-type': 'application/json' });
    assert.is(res.status, 400, c.name);
    assert.is(res.body.error, 'invalid-event', c.name);
  }
  assert.is(relay.stats().events, before);
});

test.after(async () => {
  await relay.close();
});

test.run();
