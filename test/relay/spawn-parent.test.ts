// D45: the parent of a spawned session is the relay's word. A spawn from a connection that claims
// one session is forwarded (and kept) with `spawnparent` set to it; a sender may name one of its
// own verified sessions; a value naming a session it does not claim, whoever else does, is refused
// `unauthorized` and nothing reaches the adapter; a sender claiming nothing gets no parent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import { SPAWN_PARENT_ATTR } from '../../src/protocol/types.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { startRelay } from '../../src/relay/server.js';
import { emitterFor, freshSession, post, SseClient, WsPeer } from '../support/relay-harness.js';

const HOME = 'aep-home-codex-test-host';
const SPAWN = 'x.codex.control.spawn';
let relay: RelayHandle;
let home: WsPeer;

test.before(async () => {
  relay = await startRelay({
    port: 0,
    storePath: ':memory:',
    tokens: [
      { token: 'adapter-t', identity: 'codex-adapter', emit: [{ agents: ['codex'], sessions: ['*'] }] },
      {
        token: 'orch-t',
        identity: 'orch',
        commands: ['*'],
        spawn: true,
        emit: [{ agents: ['claude-code'], sessions: ['*'] }],
      },
      { token: 'other-t', identity: 'other', emit: [{ agents: ['claude-code'], sessions: ['*'] }] },
      { token: 'boss-t', identity: 'boss', commands: ['*'], spawn: true },
      { token: 'watch-t', identity: 'watch', capture: 'full' },
    ],
  });
  home = await WsPeer.target(relay.socketUrl, 'codex', [SPAWN], 'adapter-t');
  await claim(home, HOME, 'codex');
});

test.after(async () => {
  home.close();
  await relay.close();
});

/** `peer` claims `session`: done once its event is served to a watcher. */
async function claim(peer: WsPeer, session: string, agent: string): Promise<void> {
  const watch = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, 'watch-t');
  watch.send({ type: 'subscribe', id: 'w', filter: { session } });
  await watch.next((f) => f.type === 'subscribed');
  peer.send(emitterFor(session, agent).emit({ type: 'session.started' }));
  await watch.next((f) => f.type === 'session.started' && f.session === session);
  watch.close();
}

const spawnFrom = (agent: string, extra: Record<string, unknown> = {}) => ({
  ...command({ agent, host: 'h' }, HOME, { type: SPAWN, data: { prompt: 'go', cwd: '/w' } }),
  ...extra,
});

/** The frame the home adapter got for command `id`, or undefined when none came. */
const forwarded = (id: string) => home.frames.find((f) => f.json?.id === id)?.json as Record<string, unknown>;

test('a spawn from a connection claiming one session is forwarded with that session as its parent, and kept so', async () => {
  const orch = await WsPeer.greet(relay.socketUrl, { role: 'both', identity: { agent: 'claude-code' } }, 'orch-t');
  const mine = freshSession('lead');
  await claim(orch, mine, 'claude-code');
  const cmd = spawnFrom('orch');
  orch.send(cmd);
  const got = await home.next((f) => f.id === cmd.id);
  assert.is(got[SPAWN_PARENT_ATTR], mine);
  // History keeps what was forwarded: the parent is on the record.
  const h = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session: HOME }]), live: '0' },
    { authorization: 'Bearer watch-t' },
  );
  await h.done();
  assert.is(h.events.find((e) => e.id === cmd.id)?.[SPAWN_PARENT_ATTR], mine);
  orch.close();
});

test('a sender naming a session another identity claims is refused unauthorized, and nothing is forwarded', async () => {
  const other = await WsPeer.greet(relay.socketUrl, { role: 'emitter', identity: { agent: 'claude-code' } }, 'other-t');
  const theirs = freshSession('victim');
  await claim(other, theirs, 'claude-code');
  const orch = await WsPeer.greet(relay.socketUrl, { role: 'both', identity: { agent: 'claude-code' } }, 'orch-t');
  const mine = freshSession('lead');
  await claim(orch, mine, 'claude-code');
  for (const forged of [theirs, 'nobody-claims-this', HOME, 7]) {
    const cmd = spawnFrom('orch', { [SPAWN_PARENT_ATTR]: forged });
    orch.send(cmd);
    const err = await orch.next((f) => f.type === 'error' && f.cause === cmd.id);
    assert.is(err.code, 'unauthorized');
    assert.match(err.detail, /which orch does not claim; leave it out/);
    assert.is(forwarded(cmd.id), undefined, `${String(forged)} not forwarded`);
  }
  // Its own session, named by itself, passes as verified.
  const ok = spawnFrom('orch', { [SPAWN_PARENT_ATTR]: mine });
  orch.send(ok);
  assert.is((await home.next((f) => f.id === ok.id))[SPAWN_PARENT_ATTR], mine);
  orch.close();
  other.close();
});

test('a sender that claims no session gets no parent; over HTTP a bound identity may name only its own', async () => {
  const boss = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, 'boss-t');
  const plain = spawnFrom('boss');
  boss.send(plain);
  const got = await home.next((f) => f.id === plain.id);
  assert.not.ok(SPAWN_PARENT_ATTR in got);
  boss.close();

  const orch = await WsPeer.greet(relay.socketUrl, { role: 'both', identity: { agent: 'claude-code' } }, 'orch-t');
  const mine = freshSession('lead');
  await claim(orch, mine, 'claude-code');
  const viaHttp = spawnFrom('orch', { [SPAWN_PARENT_ATTR]: mine });
  const r = await post(relay.url, `${JSON.stringify(viaHttp)}\n`, { authorization: 'Bearer orch-t' });
  assert.is(r.status, 202, JSON.stringify(r.body));
  assert.is((await home.next((f) => f.id === viaHttp.id))[SPAWN_PARENT_ATTR], mine);
  const bossForged = spawnFrom('boss', { [SPAWN_PARENT_ATTR]: mine });
  const refused = await post(relay.url, `${JSON.stringify(bossForged)}\n`, { authorization: 'Bearer boss-t' });
  assert.is(refused.status, 403, JSON.stringify(refused.body));
  assert.match(JSON.stringify(refused.body), /does not claim/);
  assert.is(forwarded(bossForged.id), undefined);
  orch.close();
});

test.run();
