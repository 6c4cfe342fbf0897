// D39 on a real relay with real sockets and a real tokens file: a token removed from the file, or
// narrowed, loses its open connections within a second and is refused on new sockets and over
// HTTP; SIGHUP reads the file again; a file that turns bad keeps the last good one and says so
// once. Before D39 a removed token went on working until the relay restarted.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdtempSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle, type RelayOptions } from '../../src/relay/server.js';
import { freshSession, post, SseClient, WsPeer } from '../support/relay-harness.js';
import { startTestTarget } from '../support/relay-target.js';
import { startRelayNode } from '../support/relay-node.js';
import { instruct, INSTRUCT, TOKENS, TOKENS_FILE } from '../security/fixture.js';

const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Entry = { identity: string } & Record<string, unknown>;

function tokensFile(entries: readonly Entry[] = TOKENS_FILE.tokens): string {
  const file = join(mkdtempSync(join(tmpdir(), 'aep-revoke-')), 'tokens.json');
  writeFileSync(file, JSON.stringify({ tokens: entries }), { mode: 0o600 });
  return file;
}

const rewrite = (file: string, entries: readonly Entry[]) => writeFileSync(file, JSON.stringify({ tokens: entries }));
const without = (identity: string): Entry[] => TOKENS_FILE.tokens.filter((e) => e.identity !== identity);

async function relayOn(
  file: string,
  extra: Partial<RelayOptions> = {},
): Promise<{ relay: RelayHandle; logs: string[] }> {
  const logs: string[] = [];
  const relay = await startRelay({
    port: 0,
    storePath: ':memory:',
    tokensFile: file,
    log: (l) => logs.push(l),
    ...extra,
  });
  return { relay, logs };
}

/** Resolves with the close code, or rejects when the socket is still open after `ms`. */
function closedWithin(p: WsPeer, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const tick = () => {
      if (p.closeCode !== undefined) return resolve(p.closeCode);
      if (Date.now() - t0 > ms) return reject(new Error(`socket still open ${ms} ms after the change`));
      setTimeout(tick, 5);
    };
    tick();
  });
}

const refusedUpgrade = (relay: RelayHandle, token: string) =>
  WsPeer.open(relay.socketUrl, token).then(
    (p) => {
      p.close();
      return 'opened';
    },
    (err: Error) => err.message,
  );

/** The adapter side: claims `s`, acks every instruct. */
const target = (relay: RelayHandle, s: string) =>
  startTestTarget({
    url: relay.socketUrl,
    token: TOKENS.adapter,
    agent: 'claude-code',
    accepts: [INSTRUCT],
    sessions: [s],
  });

test('a removed token: its open socket and SSE stream close within 1 s, a new socket and a POST are refused', async () => {
  const file = tokensFile();
  const { relay, logs } = await relayOn(file);
  const s = freshSession('revoke');
  const cc = await target(relay, s);
  const alice = await WsPeer.greet(relay.socketUrl, { role: 'consumer', identity: { agent: 'alice' } }, TOKENS.alice);
  const watcher = await WsPeer.greet(
    relay.socketUrl,
    { role: 'consumer', identity: { agent: 'watcher' } },
    TOKENS.watcher,
  );
  const sse = await SseClient.open(relay.url, {}, bearer(TOKENS.alice));
  assert.is(sse.status, 200);
  const before = await post(relay.url, JSON.stringify(instruct(s, 'allowed before')), bearer(TOKENS.alice));
  assert.is(before.status, 202, 'alice may steer before the change');

  rewrite(file, without('alice'));
  assert.is(await closedWithin(alice, 1000), 1008);
  const closing = alice.frames.map((f) => f.json).find((f) => f?.type === 'closing');
  assert.is(closing?.reason, 'revoked');
  assert.match(closing.detail, /alice was revoked/);
  await sse.until((c) => c.ended);
  assert.ok(
    sse.comments.some((c) => c.startsWith('revoked')),
    JSON.stringify(sse.comments),
  );

  assert.is(await refusedUpgrade(relay, TOKENS.alice), 'HTTP 401');
  const after = await post(relay.url, JSON.stringify(instruct(s, 'refused after')), bearer(TOKENS.alice));
  assert.is(after.status, 401);
  assert.equal(
    cc.received.map((c) => c.data),
    [{ text: 'allowed before' }],
    'nothing sent after revocation reached the adapter',
  );

  // Entries the change left alone keep their connections.
  assert.is(watcher.closeCode, undefined);
  assert.ok(
    logs.some((l) => /tokens file re-read \(file changed\): 4 entries/.test(l)),
    logs.join('\n'),
  );
  watcher.close();
  await cc.close();
  await relay.close();
});

test('a narrowed token: its socket closes, a new one is served without the dropped right (WS and HTTP)', async () => {
  const file = tokensFile();
  const { relay } = await relayOn(file);
  const s = freshSession('narrow');
  const cc = await target(relay, s);
  const alice = await WsPeer.greet(relay.socketUrl, { role: 'consumer', identity: { agent: 'alice' } }, TOKENS.alice);

  rewrite(
    file,
    TOKENS_FILE.tokens.map((e) => (e.identity === 'alice' ? { ...e, commands: ['control.attention.respond'] } : e)),
  );
  assert.is(await closedWithin(alice, 1000), 1008);
  assert.match(alice.frames.map((f) => f.json).find((f) => f?.type === 'closing').detail, /rights of alice changed/);

  const again = await WsPeer.greet(relay.socketUrl, { role: 'consumer', identity: { agent: 'alice' } }, TOKENS.alice);
  const cmd = instruct(s, 'no longer allowed');
  again.send(cmd);
  const refusal = await again.next((f) => f.type === 'error' && f.cause === cmd.id);
  assert.is(refusal.code, 'unauthorized');
  assert.match(refusal.detail, /alice may not send x\.claude-code\.control\.instruct/);
  const http = await post(relay.url, JSON.stringify(instruct(s, 'nor over HTTP')), bearer(TOKENS.alice));
  assert.is(http.status, 403);
  assert.is(http.body.code, 'unauthorized');
  assert.equal(cc.received, [], 'the adapter received none of it');
  again.close();
  await cc.close();
  await relay.close();
});

test("an editor's save (a new file renamed over the old one) is noticed as well", async () => {
  const file = tokensFile();
  const { relay } = await relayOn(file);
  const alice = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKENS.alice);
  const next = `${file}.new`;
  writeFileSync(next, JSON.stringify({ tokens: without('alice') }), { mode: 0o600 });
  renameSync(next, file);
  assert.is(await closedWithin(alice, 1000), 1008);
  assert.is(await refusedUpgrade(relay, TOKENS.alice), 'HTTP 401');
  await relay.close();
});

test('SIGHUP reads the tokens file again (with watching off, only the signal notices the change)', async () => {
  const file = tokensFile();
  const { relay, logs } = await relayOn(file, { watchTokens: false, reloadSignal: 'SIGHUP' });
  const alice = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKENS.alice);
  rewrite(file, without('alice'));
  await sleep(300);
  assert.is(alice.closeCode, undefined, 'unwatched: the change is not seen yet');
  assert.is(await refusedUpgrade(relay, TOKENS.alice), 'opened');

  process.kill(process.pid, 'SIGHUP');
  assert.is(await closedWithin(alice, 1000), 1008);
  assert.is(await refusedUpgrade(relay, TOKENS.alice), 'HTTP 401');
  assert.ok(
    logs.some((l) => /re-read \(SIGHUP\)/.test(l)),
    logs.join('\n'),
  );
  await relay.close();
  assert.is(process.listenerCount('SIGHUP'), 0, 'a closed relay leaves the signal alone');
});

test('a tokens file that turns bad keeps the last good one, says why once, and refuses nothing it allowed', async () => {
  const file = tokensFile();
  const { relay, logs } = await relayOn(file, { tokensPollMs: 20 });
  const s = freshSession('bad-file');
  const cc = await target(relay, s);
  const alice = await WsPeer.greet(relay.socketUrl, { role: 'consumer', identity: { agent: 'alice' } }, TOKENS.alice);
  const notApplied = () => logs.filter((l) => /tokens file not applied/.test(l));

  writeFileSync(file, '{"tokens": [ {"token": "half-written');
  for (let i = 0; i < 100 && notApplied().length === 0; i++) await sleep(10);
  // The file stays bad through several polls and another touch: still one message.
  await sleep(150);
  utimesSync(file, new Date(), new Date(Date.now() + 5000));
  await sleep(150);
  assert.is(notApplied().length, 1, logs.join('\n'));
  assert.match(notApplied()[0]!, /not JSON/);
  assert.match(notApplied()[0]!, /the last good one \(5 entries\) stays in force/);

  // Everything the last good file allowed still works: the open socket, new sockets, HTTP.
  assert.is(alice.closeCode, undefined);
  const fresh = await WsPeer.greet(relay.socketUrl, { role: 'consumer', identity: { agent: 'alice' } }, TOKENS.alice);
  const r = await post(relay.url, JSON.stringify(instruct(s, 'still allowed')), bearer(TOKENS.alice));
  assert.is(r.status, 202);

  // Readable by others is bad too (a new reason, said once); the last good one still holds.
  rewrite(file, without('alice'));
  chmodSync(file, 0o644);
  for (let i = 0; i < 100 && notApplied().length < 2; i++) await sleep(10);
  await sleep(100);
  assert.is(notApplied().length, 2, logs.join('\n'));
  assert.match(notApplied()[1]!, /chmod 600/);
  assert.is(alice.closeCode, undefined);

  // Fixed: the file as it now stands is applied (alice removed).
  chmodSync(file, 0o600);
  assert.is(await closedWithin(alice, 1000), 1008);
  assert.ok(
    logs.some((l) => /is valid again/.test(l)),
    logs.join('\n'),
  );
  fresh.close();
  await cc.close();
  await relay.close();
});

test('a tokens file emptied of every entry refuses everyone rather than serving anonymous', async () => {
  const file = tokensFile();
  const { relay } = await relayOn(file);
  const watcher = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKENS.watcher);
  rewrite(file, []);
  assert.is(await closedWithin(watcher, 1000), 1008);
  assert.is(await refusedUpgrade(relay, TOKENS.watcher), 'HTTP 401');
  const anonymous = await fetch(`${relay.url}/events`);
  assert.is(anonymous.status, 401);
  await relay.close();
});

test('`aep-steer relay --tokens` as a process: a removed token is cut off, and SIGHUP re-reads instead of exiting', async () => {
  const file = tokensFile();
  const state = mkdtempSync(join(tmpdir(), 'aep-revoke-state-'));
  const node = await startRelayNode(['--memory', '--tokens', file], { HOME: state, AEP_STATE_DIR: state });
  try {
    const alice = await WsPeer.greet(node.socketUrl, { role: 'consumer' }, TOKENS.alice);
    rewrite(file, without('alice'));
    assert.is(await closedWithin(alice, 1000), 1008);
    const refused = await fetch(`${node.url}/events`, { headers: { authorization: `Bearer ${TOKENS.alice}` } });
    assert.is(refused.status, 401);

    // The watch may see this change before the signal does: either way it is read, once.
    rewrite(
      file,
      without('alice').filter((e) => e.identity !== 'watcher'),
    );
    node.proc.kill('SIGHUP');
    const third = /re-read \((SIGHUP|file changed)\): 3 entries/;
    for (let i = 0; i < 300 && !third.test(node.output()); i++) await sleep(10);
    assert.ok(third.test(node.output()), node.output());
    await sleep(200);
    assert.is(node.proc.exitCode, null, 'SIGHUP did not stop the relay');
    assert.is(node.proc.signalCode, null);
    const alive = await fetch(`${node.url}/events`, { headers: { authorization: `Bearer ${TOKENS.alice}` } });
    assert.is(alive.status, 401, 'the relay still answers, alice still refused');
    const watcher = await fetch(`${node.url}/events`, { headers: { authorization: `Bearer ${TOKENS.watcher}` } });
    assert.is(watcher.status, 401, 'the second change is in force');
  } finally {
    await node.stop();
  }
});

test.run();
