// D20 attacks: reading instruction text with a `metadata` subscription or a watch-only token,
// on every path the relay serves (live WebSocket fan-out, WebSocket replay, SSE live and replay,
// the roster). Instruction text is redacted-class whatever the command declares; before the
// relay applied that floor, a command declared `metadata` (or with no capture) carried its text
// to every `metadata` subscriber, and a watch-only token read every instruction.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { CaptureLevel } from '../../src/protocol/envelope.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { freshSession, SseClient, type WsPeer } from '../support/relay-harness.js';
import { adapter, claimed, consumer, INSTRUCT, instruct, peer, TOKENS, tokensRelay } from './fixture.js';

let relay: RelayHandle;
test.before(async () => {
  relay = await tokensRelay();
});
test.after(async () => {
  await relay.close();
});

const CANARY = 'CANARY-instruction-text-7f3a';
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Subscribes on a raw socket and resolves once `subscribed` came back. */
async function watch(p: WsPeer, id: string, session: string, extra: Record<string, unknown> = {}): Promise<void> {
  p.send({ type: 'subscribe', id, filter: { session, type: INSTRUCT }, ...extra });
  await p.next((f) => f.type === 'subscribed' && f.id === id);
}

/** Sends one instruct per declared level through the real adapter link; returns the session. */
async function steered(
  declared: (CaptureLevel | null)[],
  before?: (session: string) => Promise<void>,
): Promise<string> {
  const s = freshSession('capture');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(alice, s);
  await before?.(s);
  for (const capture of declared) {
    const r = await alice.send(instruct(s, `${CANARY} (${capture ?? 'no capture'})`, { capture }), { timeoutMs: 5000 });
    assert.is(r.outcome, 'accepted');
  }
  // The adapter got the text itself: the floor is about who else reads it.
  assert.ok(cc.received.every((c) => (c.data as { text: string }).text.startsWith(CANARY)));
  await alice.close();
  await cc.close();
  return s;
}

const commandsIn = (p: WsPeer) => p.frames.filter((f) => f.json?.type === INSTRUCT);

test('a metadata subscriber never sees instruction text, whether the command says metadata, nothing, or redacted', async () => {
  const declared: (CaptureLevel | null)[] = ['metadata', null, 'redacted'];
  let live!: WsPeer;
  let sse!: SseClient;
  const s = await steered(declared, async (session) => {
    live = await peer(relay, TOKENS.alice, 'consumer');
    await watch(live, 'live', session, { capture: 'metadata' });
    sse = await SseClient.open(
      relay.url,
      { filter: JSON.stringify({ session }), capture: 'metadata' },
      bearer(TOKENS.alice),
    );
  });
  await live.next(() => commandsIn(live).length === 3);
  await sse.until((c) => c.events.filter((e) => e.type === INSTRUCT).length === 3);
  // Replay on both bindings, long after the fact.
  const replayWs = await peer(relay, TOKENS.alice, 'consumer');
  await watch(replayWs, 'replay', s, { capture: 'metadata', from: [{ session: s }] });
  await replayWs.next(() => commandsIn(replayWs).length === 3);
  const replaySse = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session: s }]), capture: 'metadata', live: '0' },
    bearer(TOKENS.alice),
  );
  await replaySse.done();
  const served = [
    ...commandsIn(live).map((f) => f.text),
    ...commandsIn(replayWs).map((f) => f.text),
    ...sse.messages.map((m) => m.data ?? ''),
    ...replaySse.messages.map((m) => m.data ?? ''),
  ].filter((t) => t.includes(INSTRUCT));
  assert.is(served.length, 12);
  for (const text of served) {
    assert.not.match(text, CANARY);
    const e = JSON.parse(text) as { capture: string; data?: Record<string, unknown> };
    assert.is(e.capture, 'metadata');
    assert.not.ok(e.data !== undefined && 'text' in e.data);
  }
  // A subscriber that asked for nothing lower still reads it: the floor is redacted, not none.
  const full = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session: s }]), live: '0' },
    bearer(TOKENS.alice),
  );
  await full.done();
  assert.is(full.messages.filter((m) => m.data?.includes(CANARY)).length, 3);
  live.close();
  replayWs.close();
  sse.close();
});

test('a watch-only token is served at metadata on every path, even when it asks for full', async () => {
  let live!: WsPeer;
  let sse!: SseClient;
  const s = await steered(['redacted', 'full' as CaptureLevel], async (session) => {
    live = await peer(relay, TOKENS.watcher, 'consumer');
    await watch(live, 'live', session, { capture: 'full' });
    sse = await SseClient.open(relay.url, { filter: JSON.stringify({ session }) }, bearer(TOKENS.watcher));
  });
  await live.next(() => commandsIn(live).length === 2);
  await sse.until((c) => c.events.filter((e) => e.type === INSTRUCT).length === 2);
  const replay = await SseClient.open(relay.url, { from: 'all', live: '0' }, bearer(TOKENS.watcher));
  await replay.done();
  const replayWs = await peer(relay, TOKENS.watcher, 'consumer');
  await watch(replayWs, 'replay', s, { from: [{ session: s }] });
  await replayWs.next(() => commandsIn(replayWs).length === 2);
  const texts = [
    ...live.frames.map((f) => f.text),
    ...replayWs.frames.map((f) => f.text),
    ...sse.messages.map((m) => m.data ?? ''),
    ...replay.messages.map((m) => m.data ?? ''),
  ];
  assert.ok(texts.filter((t) => t.includes(INSTRUCT)).length >= 8);
  assert.not.ok(texts.some((t) => t.includes(CANARY)));
  // The roster tells a watcher who is live and what they accept, never what was said.
  const roster = await peer(relay, TOKENS.watcher, 'consumer');
  roster.send({ type: 'roster', id: 'r' });
  const entries = await roster.next((f) => f.type === 'roster');
  assert.not.match(JSON.stringify(entries), CANARY);
  for (const p of [live, replayWs, roster]) p.close();
  sse.close();
});

test('a watch-only entry with its own ceiling (redacted) reads the text it was trusted with, and no more', async () => {
  const s = await steered(['redacted']);
  const c = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session: s }]), capture: 'full', live: '0' },
    bearer(TOKENS.auditor),
  );
  await c.done();
  const cmd = c.events.find((e) => e.type === INSTRUCT)!;
  assert.is(cmd.capture, 'redacted');
  assert.match((cmd.data as { text: string }).text, CANARY);
});

test.run();
