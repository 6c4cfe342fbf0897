// Events the relay refuses (tokens-file mode, D19): a refusal that resending cannot change (the
// adapter's token has no emit right for the session) settles the events as refused: said once,
// never resent (not after a reconnect, not after a restart), and no longer holding back the
// relay position or the compaction of the log. A refusal for now (a rival claim, until its lease
// lapses) is sent again on the same link. Real relay, real tokens file, real adapter and link.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SessionEmitter, type AepEvent } from '../../src/protocol/index.js';
import { loadTokensFile } from '../../src/relay/acl.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { acceptsFor } from '../../src/streams/run.js';
import { parseLog, readEventLog, segmentPath } from '../../src/streams/log.js';
import { adapter, tempLog } from '../support/adapter.js';
import { until, wait } from '../support/until.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { WsPeer } from '../support/relay-harness.js';
import { testRelay } from '../support/relay-store.js';

const TOKENS = {
  adapter: 'adapter-token-0123456789',
  rogue: 'rogue-token-0123456789',
  alice: 'alice-token-0123456789',
};

/** The adapter may publish `ok-*` sessions only: a narrowed emit right, as an operator writes it. */
function tokensFile(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'aep-refused-')), 'tokens.json');
  writeFileSync(
    file,
    JSON.stringify({
      tokens: [
        { token: TOKENS.adapter, identity: 'cc-adapter', emit: [{ agents: ['claude-code'], sessions: ['ok-*'] }] },
        { token: TOKENS.rogue, identity: 'rogue', emit: ['claude-code'] },
        { token: TOKENS.alice, identity: 'alice', commands: ['x.*.control.instruct'], capture: 'full' },
      ],
    }),
    { mode: 0o600 },
  );
  return file;
}

const positioned = (path: string): AepEvent[] =>
  readEventLog(path).records.flatMap((r) => (r.k === 'ev' && r.e.seq !== undefined ? [r.e] : []));
const relayState = (logPath: string) =>
  JSON.parse(readFileSync(`${logPath}.relay`, 'utf8')) as {
    confirmed: { gen: number; offset: number };
    refused?: Record<string, unknown>;
  };
/** The recorded relay position is the end of the active log: nothing is owed to the relay. */
const caughtUp = (logPath: string): boolean => {
  if (!existsSync(`${logPath}.relay`)) return false;
  const c = relayState(logPath).confirmed;
  return c.gen === parseLog(readFileSync(logPath)).generation && c.offset === readFileSync(logPath).length;
};

async function held(relay: RelayHandle, sessions: string[]): Promise<Set<string>> {
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: TOKENS.alice, agent: 'alice' });
  const ids = new Set<string>();
  await c.subscribe({ filter: {}, from: sessions.map((session) => ({ session })) }, { onEvent: (e) => ids.add(e.id) });
  await wait(100);
  await c.close();
  return ids;
}

test('a session the token may not publish: its events are settled as refused, said once, never resent, and compaction goes on', async () => {
  const tokens = loadTokensFile(tokensFile());
  const storePath = join(dirname(tempLog()), 'relay.db');
  let relay = await testRelay({ port: 0, storePath, tokens });
  const port = relay.port;
  const surface = fakeSurface();
  const logPath = tempLog();
  const link = () =>
    connectRelay({
      url: `ws://127.0.0.1:${port}/socket`,
      token: TOKENS.adapter,
      agent: surface.token,
      accepts: acceptsFor(surface, true),
      backoffInitialMs: 20,
      backoffMaxMs: 50,
    });
  const first = await adapter({ surface, relay: link(), logPath, segmentBytes: 4096, keepSegments: 0 });
  let second: Awaited<ReturnType<typeof adapter>> | undefined;
  try {
    for (const s of ['ok-1', 'no-1']) await first.post(hookBody('SessionStart', s));
    for (let i = 0; i < 30; i += 1) for (const s of ['ok-1', 'no-1']) await first.post(hookBody('PreToolUse', s));
    await until(() => caughtUp(logPath), 'the relay position covers the whole log despite the refused session', 15_000);
    const refusedHere = first.errors.filter((e) => e.code === 'RELAY_REFUSED');
    assert.is(refusedHere.length, 1, refusedHere.map((e) => e.message).join('\n'));
    assert.match(
      refusedHere[0]!.message,
      /session no-1 \(unauthorized: cc-adapter may not publish events of claude-code for session no-1\)/,
    );
    assert.match(
      refusedHere[0]!.message,
      /not sent again\. Give this adapter's token emit rights for claude-code in the relay's tokens file/,
    );
    assert.not.ok(
      first.errors.some((e) => e.code === 'RELAY_PROTOCOL'),
      'no per-event protocol noise',
    );
    const all = positioned(logPath);
    // The log only holds the active segment's share now; count what the relay refused instead.
    assert.is(first.handle.outboxCounters().refused, relay.stats().refused, 'every refusal is counted as settled');
    assert.ok(relay.stats().refused >= 31, `the refused session's events were refused (${relay.stats().refused})`);
    assert.ok(relayState(logPath).refused?.['no-1'] !== undefined, 'the refusal is recorded in the relay state file');
    // Compaction goes on: the next rotation removes the segments the relay no longer needs.
    const gen = parseLog(readFileSync(logPath)).generation;
    assert.ok(gen >= 2, 'the log rotated');
    for (let i = 0; parseLog(readFileSync(logPath)).generation === gen; i += 1) {
      assert.ok(i < 200, 'the log rotates again');
      await first.post(hookBody('PreToolUse', 'ok-1'));
    }
    assert.not.ok(existsSync(segmentPath(logPath, 0)), 'generation 0 was compacted away');
    const okIds = all.filter((e) => e.session === 'ok-1').map((e) => e.id);
    const relayHas = await held(relay, ['ok-1', 'no-1']);
    assert.ok(
      okIds.every((id) => relayHas.has(id)),
      'the permitted session reached the relay',
    );
    assert.not.ok(all.some((e) => e.session === 'no-1' && relayHas.has(e.id)));

    // A reconnect (the relay restarts): nothing of no-1 is sent again, not even as a claim.
    await relay.close();
    relay = await testRelay({ port, storePath, tokens });
    const alice = await RelayConsumer.connect({ url: relay.socketUrl, token: TOKENS.alice, agent: 'alice' });
    await until(async () => (await alice.roster()).some((e) => e.session === 'ok-1'), 'ok-1 claimed again');
    await wait(200);
    assert.is(relay.stats().refused, 0, 'the reconnect resent nothing the relay refused');
    // A restart of the adapter: still nothing resent, nothing said again.
    await first.handle.close();
    second = await adapter({ surface, relay: link(), logPath, segmentBytes: 4096, keepSegments: 0 });
    await until(
      async () => (await alice.roster()).some((e) => e.session === 'ok-1'),
      'ok-1 claimed by the restarted adapter',
    );
    await wait(300);
    assert.is(relay.stats().refused, 0, 'the restart resent nothing the relay refused');
    assert.equal(
      second.errors.filter((e) => e.code === 'RELAY_REFUSED').map((e) => e.message),
      [],
    );
    await alice.close();
  } finally {
    await (second ?? first).handle.close();
    await relay.close();
  }
});

test('a rival claim refuses for now: the adapter keeps the events and sends them again on the same link once the claim lapses', async () => {
  const relay = await testRelay({
    port: 0,
    storePath: join(dirname(tempLog()), 'relay.db'),
    tokens: loadTokensFile(tokensFile()),
    claimLeaseMs: 100,
  });
  const surface = fakeSurface();
  const link = connectRelay({
    url: relay.socketUrl,
    token: TOKENS.adapter,
    agent: surface.token,
    accepts: acceptsFor(surface, true),
    backoffInitialMs: 20,
    backoffMaxMs: 50,
  });
  const a = await adapter({ surface, relay: link });
  try {
    await until(() => link.connected, 'link up');
    const rogue = await WsPeer.greet(
      relay.socketUrl,
      { role: 'emitter', identity: { agent: 'claude-code' } },
      TOKENS.rogue,
    );
    const claim = new SessionEmitter({ agent: 'claude-code', session: 'ok-rival', host: 'rogue' }).emit({
      type: 'session.started',
    });
    rogue.send(claim);
    const alice = await RelayConsumer.connect({ url: relay.socketUrl, token: TOKENS.alice, agent: 'alice' });
    await until(async () => (await alice.roster()).some((e) => e.session === 'ok-rival'), 'the rival claim in place');
    await alice.close();
    await a.post(hookBody('SessionStart', 'ok-rival'));
    await a.post(hookBody('PreToolUse', 'ok-rival'));
    await until(() => a.errors.some((e) => e.code === 'RELAY_REFUSED'), 'the refusal is said');
    const said = a.errors.filter((e) => e.code === 'RELAY_REFUSED');
    assert.is(said.length, 1);
    assert.match(
      said[0]!.message,
      /refused events of session ok-rival for now \(unauthorized: .*\); the adapter keeps them and sends them again/,
    );
    rogue.close();
    await until(() => caughtUp(a.logPath), 'the adapter resent them once the rival claim lapsed', 15_000);
    const relayHas = await held(relay, ['ok-rival']);
    assert.ok(
      positioned(a.logPath).every((e) => relayHas.has(e.id)),
      'the relay holds every event of the session',
    );
    assert.is(a.handle.outboxCounters().refused, 0, 'nothing settled as refused');
  } finally {
    await a.handle.close();
    await relay.close();
  }
});

test.run();
