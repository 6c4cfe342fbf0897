// Failover on a three-server JetStream cluster: two relay nodes (real `aep-steer relay --nats`
// processes), a real adapter linked to both (its own node first), a consumer on the other node.
// Mid-soak the adapter's node is killed with SIGKILL. The adapter moves to the surviving node and
// re-claims its sessions; the consumer retries every unsettled command with the same id.
// Asserted: no instruction lost, none delivered twice, every retry settled with the recorded ack.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { RelayConsumer, type Settlement } from '../../src/consumer/connection.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor } from '../../src/streams/run.js';
import { adapter } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { startNatsCluster, type NatsCluster } from '../support/nats-server.js';
import { startRelayNode, type RelayNode } from '../support/relay-node.js';
import { freshSession } from '../support/relay-harness.js';

const TOKEN = 'failover-secret';
const SESSIONS = 4;
const INSTRUCTIONS = 48;
const KILL_AFTER = 16;
const LEASE_MS = 1500;

let cluster: NatsCluster;
const nodes: RelayNode[] = [];
test.before(async () => {
  cluster = await startNatsCluster(3);
  const args = ['--token', TOKEN, '--memory', '--nats', cluster.urls, '--nats-replicas', '3', '--nats-lease-ms', String(LEASE_MS), '--nats-namespace', 'failover'];
  nodes.push(await startRelayNode(args));
  nodes.push(await startRelayNode(args));
});
test.after(async () => {
  await Promise.all(nodes.map((n) => n.kill()));
  await cluster.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('kill -9 of the adapter\'s relay node mid-soak: nothing lost, nothing twice, retries get the recorded ack', async () => {
  const [nodeA, nodeB] = nodes as [RelayNode, RelayNode];
  const surface = fakeSurface();
  const link = connectRelay({ url: `${nodeA.socketUrl},${nodeB.socketUrl}`, token: TOKEN, agent: surface.token, accepts: acceptsFor(surface, true), backoffInitialMs: 100, backoffMaxMs: 500 });
  const a = await adapter({ surface, relay: link });
  const sessions = Array.from({ length: SESSIONS }, () => freshSession());
  for (const s of sessions) await a.post(hookBody('SessionStart', s));

  const consumer = await RelayConsumer.connect({ url: nodeB.socketUrl, token: TOKEN, agent: 'test-cli' });
  const seen: AepEvent[] = [];
  await consumer.subscribe({ filter: { session: sessions } }, { onEvent: (e) => seen.push(e) });

  // Hooks keep coming, as an agent's would: each reply may carry queued instructions.
  const replies: string[] = [];
  let hooking = true;
  const hooks = (async () => {
    while (hooking) {
      for (const s of sessions) replies.push((await a.post(hookBody('UserPromptSubmit', s))).text);
      await sleep(20);
    }
  })();

  const texts = new Map<string, string>();
  const settled = new Map<string, Settlement>();
  const attempts = new Map<string, number>();
  let killed = false;
  const send = async (i: number) => {
    const s = sessions[i % SESSIONS]!;
    const text = `instruction ${i} for the soak`;
    const cmd = command({ agent: 'test-cli', host: 'h' }, s, { type: surface.steeringType, capture: 'redacted', data: { text } });
    texts.set(cmd.id, text);
    // The sender's retry: the same command (same id) until it settles with an ack.
    for (let n = 1; n <= 60; n++) {
      attempts.set(cmd.id, n);
      const r = await consumer.send(cmd, { timeoutMs: 700 });
      if (r.outcome === 'accepted' || r.outcome === 'rejected') {
        settled.set(cmd.id, r);
        return;
      }
      await sleep(150);
    }
    throw new Error(`instruction ${i} never settled`);
  };
  const senders: Promise<void>[] = [];
  for (let i = 0; i < INSTRUCTIONS; i++) {
    senders.push(send(i));
    if (i === KILL_AFTER) {
      await sleep(50);
      await nodeA.kill();
      killed = true;
    }
    await sleep(30);
  }
  await Promise.all(senders);
  assert.ok(killed);

  // Every accepted instruction is delivered: wait for its delivered event on the consumer's node.
  const deliveredType = 'x.claude-code.instruction.delivered';
  for (let i = 0; i < 300; i++) {
    if ([...settled.keys()].every((id) => seen.some((e) => e.type === deliveredType && e.cause === id))) break;
    await sleep(50);
  }
  hooking = false;
  await hooks;

  assert.is(settled.size, INSTRUCTIONS);
  for (const [id, r] of settled) assert.is(r.outcome, 'accepted', `${texts.get(id)} was ${r.outcome}`);
  // 0 lost, 0 twice: each instruction's text is in exactly one hook reply.
  for (const [id, text] of texts) {
    const carried = replies.reduce((n, r) => n + r.split(text).length - 1, 0);
    assert.is(carried, 1, `${text} (${id}) was carried ${carried} times`);
    assert.ok(seen.some((e) => e.type === deliveredType && e.cause === id), `the sender never saw ${text} delivered`);
  }
  // Every ack the sender settled on is the one the adapter recorded: one ack id per command,
  // byte-identical however often it was re-sent.
  const retried = [...attempts].filter(([, n]) => n > 1).map(([id]) => id);
  assert.ok(retried.length > 0, 'the kill left no command to retry');
  for (const [id, r] of settled) {
    const acks = a.events.filter((e) => e.type === 'control.accepted' && e.cause === id);
    assert.is(new Set(acks.map((e) => e.id)).size, 1, `command ${id} got ${acks.length} different acks`);
    assert.is(r.outcome === 'accepted' && r.ack.id, acks[0]!.id);
  }
  const health = (await (await fetch(`${nodeB.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as any;
  assert.is(health.store.engine, 'nats-jetstream');
  assert.is(health.store.nodes, 1);
  console.log(`failover: ${INSTRUCTIONS} instructions, ${retried.length} retried after the kill, ${replies.length} hook replies`);
  await consumer.close();
  await a.handle.close();
});

test.run();
