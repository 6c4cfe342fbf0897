// D19 attacks on the relay in tokens-file mode: a rival claim, forged outcome events over
// WebSocket and HTTP ingest, a hijack while the adapter is down, and a spoofed sender. Each test
// failed on the relay before claims, session events and senders were bound to tokens.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionEmitter } from '../../src/protocol/build.js';
import { INSTRUCT_EXIT, runInstruct } from '../../src/cli/instruct-command.js';
import { sendInstruction } from '../../src/consumer/instruct.js';
import { runRespond } from '../../src/cli/respond-command.js';
import { startTestTarget } from '../support/relay-target.js';
import type { RelayHandle } from '../../src/relay/server.js';
import { freshSession, ndjson, post, SseClient } from '../support/relay-harness.js';
import { sink } from '../cli/support.js';
import { adapter, AGENT, claimed, consumer, instruct, peer, sleep, TOKENS, tokensRelay } from './fixture.js';

let relay: RelayHandle;
test.before(async () => {
  relay = await tokensRelay();
});
test.after(async () => {
  await relay.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** What the relay holds for a session (as the operator's full-rights view would replay it). */
async function history(session: string, token: string = TOKENS.alice): Promise<string[]> {
  const c = await SseClient.open(relay.url, { from: JSON.stringify([{ session }]), live: '0' }, bearer(token));
  await c.done();
  return c.events.map((e) => e.type);
}

test('rival claim: a watch-only token cannot claim a live session, so steering still reaches the adapter', async () => {
  const s = freshSession('rival');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(alice, s);
  const watcher = await peer(relay, TOKENS.watcher, 'emitter');
  const claim = new SessionEmitter({ agent: AGENT, session: s, host: 'attacker' }).emit({ type: 'session.started' });
  watcher.send(claim);
  const refused = await watcher.next((f) => f.type === 'error' && f.cause === claim.id);
  assert.is(refused.code, 'unauthorized');
  assert.match(refused.detail, /watcher may not publish events/);
  // A second identity with emit rights for the same agent is refused too: the live claim owns it.
  const rogue = await peer(relay, TOKENS.rogue, 'emitter');
  const rogueClaim = new SessionEmitter({ agent: AGENT, session: s, host: 'rogue' }).emit({ type: 'session.started' });
  rogue.send(rogueClaim);
  assert.match(
    (await rogue.next((f) => f.type === 'error' && f.cause === rogueClaim.id)).detail,
    /claimed by another live connection/,
  );
  assert.is((await alice.roster()).filter((e) => e.session === s).length, 1);
  const r = await alice.send(instruct(s, 'keep going'), { timeoutMs: 5000 });
  assert.is(r.outcome, 'accepted');
  assert.is(cc.received.length, 1);
  assert.not.ok((await history(s)).filter((t) => t === 'session.started').length > 1);
  watcher.close();
  rogue.close();
  await alice.close();
  await cc.close();
});

test("forged outcome over WebSocket: a watcher's delivered is refused, so instruct never reports delivery", async () => {
  const s = freshSession('forge-ws');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(alice, s);
  // The watcher sees the command's id on the stream and answers it with a forged delivered.
  const watcher = await peer(relay, TOKENS.watcher, 'both');
  watcher.send({ type: 'subscribe', id: 'w', filter: { session: s, type: INSTRUCT_TYPES } });
  await watcher.next((f) => f.type === 'subscribed');
  const forger = new SessionEmitter({ agent: AGENT, session: s, host: 'attacker', epoch: 7 });
  const forged: string[] = [];
  void watcher
    .next((f) => f.type === `x.${AGENT}.control.instruct`)
    .then((cmd) => {
      const e = forger.emit({ type: `x.${AGENT}.instruction.delivered`, cause: cmd.id, data: { queued_ms: 1 } });
      forged.push(e.id);
      watcher.send(e);
    });
  const o = await sendInstruction(alice, { sender: 'alice' }, { session: s, text: 'run the tests', timeoutMs: 1500 });
  assert.is(o.outcome, 'timeout');
  assert.is(o.outcome === 'timeout' && o.stage, 'delivery');
  assert.is((await watcher.next((f) => f.type === 'error' && f.cause === forged[0])).code, 'unauthorized');
  assert.not.ok((await history(s)).includes(`x.${AGENT}.instruction.delivered`));
  watcher.close();
  await alice.close();
  await cc.close();
});
const INSTRUCT_TYPES = [`x.${AGENT}.control.instruct`];

test('forged outcome over HTTP ingest: 403 with the rule, nothing stored or fanned out', async () => {
  const s = freshSession('forge-http');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(alice, s);
  const seen = await SseClient.open(relay.url, { filter: JSON.stringify({ session: s }) }, bearer(TOKENS.alice));
  const cmd = instruct(s, 'ship it');
  assert.is((await alice.send(cmd, { timeoutMs: 5000 })).outcome, 'accepted');
  const forge = (host: string) =>
    new SessionEmitter({ agent: AGENT, session: s, host, epoch: 9 }).emit({
      type: `x.${AGENT}.instruction.delivered`,
      cause: cmd.id,
      data: { queued_ms: 3 },
    });
  const byWatcher = await post(relay.url, ndjson([forge('watcher')]), bearer(TOKENS.watcher));
  assert.is(byWatcher.status, 403);
  assert.equal([byWatcher.body.code, byWatcher.body.line], ['unauthorized', 0]);
  assert.match(byWatcher.body.detail, /watcher may not publish events/);
  assert.is(byWatcher.body.retry, false, 'no emit right: sending it again cannot help, as on the socket');
  // Emit rights for the agent are not enough: the session belongs to the live claimant.
  const byRogue = await post(relay.url, ndjson([forge('rogue')]), bearer(TOKENS.rogue));
  assert.is(byRogue.status, 403);
  assert.match(byRogue.body.detail, /owned by another identity's claim/);
  assert.is(byRogue.body.retry, undefined, 'a claim lapses with its lease: this refusal may change');
  // A forged ack for a command the adapter never saw is refused the same way.
  const ack = new SessionEmitter({ agent: AGENT, session: s, host: 'rogue', epoch: 9 }).emit({
    type: 'control.accepted',
    cause: 'made-up',
  });
  assert.is(
    (await post(relay.url, JSON.stringify(ack), { ...bearer(TOKENS.rogue), 'content-type': 'application/json' }))
      .status,
    403,
  );
  await sleep(100);
  assert.not.ok(seen.events.some((e) => e.type.endsWith('.delivered') || e.cause === 'made-up'));
  assert.not.ok((await history(s)).includes(`x.${AGENT}.instruction.delivered`));
  seen.close();
  await alice.close();
  await cc.close();
});

test('hijack while the adapter is down: the claim keeps other identities out for the lease stated in discovery', async () => {
  const discovery = (await (await fetch(`${relay.url}/events`, { headers: bearer(TOKENS.watcher) })).json()) as {
    capabilities: { claims: { lease_ms: number } };
  };
  assert.is(discovery.capabilities.claims.lease_ms, 30_000);
  const s = freshSession('hijack');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(alice, s);
  await cc.close();
  // The adapter is restarting. A watcher and a second emitter identity both try to take over.
  for (const token of [TOKENS.watcher, TOKENS.rogue]) {
    const p = await peer(relay, token, 'emitter');
    const e = new SessionEmitter({ agent: AGENT, session: s, host: 'attacker', epoch: 3 }).emit({
      type: 'session.started',
    });
    p.send(e);
    assert.is((await p.next((f) => f.type === 'error' && f.cause === e.id)).code, 'unauthorized');
    p.close();
  }
  const rogue = await adapter(relay, [], TOKENS.rogue);
  rogue.claim(s);
  await sleep(100);
  const r = await alice.send(instruct(s, 'the secret plan'), { timeoutMs: 2000 });
  assert.equal(r.outcome === 'refused' && r.code, 'no-route');
  assert.is(rogue.received.length, 0);
  // The adapter's own identity takes its session back at once and gets the instruction.
  const back = await adapter(relay, [s]);
  await claimed(alice, s);
  assert.is((await alice.send(instruct(s, 'the secret plan'), { timeoutMs: 5000 })).outcome, 'accepted');
  assert.equal(
    back.received.map((c) => (c.data as { text: string }).text),
    ['the secret plan'],
  );
  assert.is(rogue.received.length, 0);
  await rogue.close();
  await back.close();
  await alice.close();
});

test('the lease ends: after it another identity with emit rights may claim a session whose adapter never came back', async () => {
  const short = await tokensRelay({ claimLeaseMs: 150 });
  const s = freshSession('lease');
  const cc = await adapter(short, [s]);
  const alice = await consumer(short, TOKENS.alice, 'alice');
  await claimed(alice, s);
  await cc.close();
  await sleep(250);
  const next = await adapter(short, [s], TOKENS.rogue);
  await claimed(alice, s);
  assert.is((await alice.send(instruct(s, 'x'), { timeoutMs: 5000 })).outcome, 'accepted');
  assert.is(next.received.length, 1);
  await next.close();
  await alice.close();
  await short.close();
});

test("spoofed sender: a command naming another sender is refused; aep-steer instruct sends as the token's identity", async () => {
  const s = freshSession('spoof');
  const cc = await adapter(relay, [s]);
  const alice = await consumer(relay, TOKENS.alice, 'admin');
  await claimed(alice, s);
  assert.equal(alice.principal, { identity: 'alice', bound: true });
  const r = await alice.send(instruct(s, 'rm -rf /', { agent: 'admin' }), { timeoutMs: 5000 });
  assert.equal(r.outcome === 'refused' && r.code, 'unauthorized');
  assert.match(
    r.outcome === 'refused' ? (r.detail ?? '') : '',
    /names "admin" as its sender; this token's identity is "alice"/,
  );
  assert.is(cc.received.length, 0);
  await alice.close();
  // The CLI, told --sender admin, still sends as alice: the audit names who really sent it.
  const out = sink();
  const code = await runInstruct(
    'run the tests',
    {
      relay: relay.socketUrl,
      token: TOKENS.alice,
      sender: 'admin',
      session: s,
      wait: false,
      timeout: '5000',
      ackWindow: '5000',
    },
    { out: out.stream, err: sink().stream },
  );
  assert.is(code, INSTRUCT_EXIT.accepted, out.text());
  assert.equal(
    cc.received.map((c) => c.agent),
    ['alice'],
  );
  await cc.close();
  // `aep-steer respond` the same way, to an adapter whose held loop takes answers.
  const s2 = freshSession('spoof-respond');
  const held = await startTestTarget({
    url: relay.socketUrl,
    token: TOKENS.adapter,
    agent: AGENT,
    accepts: ['control.attention.respond'],
    sessions: [s2],
  });
  const looking = await consumer(relay, TOKENS.alice, 'alice');
  await claimed(looking, s2);
  await looking.close();
  await runRespond(
    'allow',
    {
      relay: relay.socketUrl,
      token: TOKENS.alice,
      sender: 'admin',
      session: s2,
      request: 'req-1',
      timeout: '300',
    },
    { out: sink().stream, err: sink().stream },
  );
  assert.equal(
    held.received.map((c) => [c.type, c.agent]),
    [['control.attention.respond', 'alice']],
  );
  await held.close();
});

test.run();
