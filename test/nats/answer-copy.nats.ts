// A sender on one node hears its command's answer as a sender on the target's node does. On one
// relay, fan-out never waits for the store; across nodes the answer crosses at once as a copy,
// beside its history write, rather than only once stored. Shown with the events stream gone
// after the command was kept and forwarded: the target's node cannot store the answer (its
// sender is told `store-unavailable` and resends it later from its log, D23), yet the consumers
// on both nodes have it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { command } from '../../src/protocol/build.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { startFabricNodes, type RelayNode } from '../support/relay-node.js';
import { emitterFor, freshSession, WsPeer } from '../support/relay-harness.js';

const TOKEN = 'answer-copy-secret';
const TYPE = 'x.copy-target.control.instruct';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: NatsServer;
let nc: NatsConnection;
const nodes: RelayNode[] = [];
const peers: WsPeer[] = [];
test.before(async () => {
  server = await startNatsServer();
  nodes.push(...(await startFabricNodes({ token: TOKEN, nats: server.url, namespace: 'anscopy', leaseMs: 1500 })));
  nc = await connect({ servers: server.url });
});
test.after(async () => {
  for (const p of peers) p.close();
  await nc?.close();
  await Promise.all(nodes.map((n) => n.kill()));
  await server.stop();
});

const watcher = async (url: string, session: string): Promise<WsPeer> => {
  const p = await WsPeer.greet(url, { role: 'consumer' }, TOKEN);
  peers.push(p);
  p.send({ type: 'subscribe', id: 'w', filter: { session } });
  await p.next((f) => f.type === 'subscribed');
  return p;
};

test('an answer its node cannot store still reaches the sender on the other node, as it does one on its own', async () => {
  const [nodeA, nodeB] = nodes as [RelayNode, RelayNode];
  const s = freshSession('copy');
  const em = emitterFor(s, 'copy-target');
  const target = await WsPeer.target(nodeB.socketUrl, 'copy-target', [TYPE], TOKEN);
  peers.push(target);
  const onA = await watcher(nodeA.socketUrl, s);
  const onB = await watcher(nodeB.socketUrl, s);
  target.send(em.emit({ type: 'session.started' }));
  await onA.next((f) => f.type === 'session.started');
  const sender = await WsPeer.greet(nodeA.socketUrl, { role: 'consumer' }, TOKEN);
  peers.push(sender);
  const instruct = () =>
    command({ agent: 'test-cli', host: 'h' }, s, { type: TYPE, capture: 'redacted', data: { text: 'go on' } });
  // The claim crosses through the bucket: until it has, A answers no-route.
  let cmd = instruct();
  for (let i = 0; ; i++) {
    sender.send(cmd);
    const r = await Promise.race([
      target.next((f) => f.id === cmd.id).then(() => 'forwarded'),
      sender.next((f) => f.type === 'error' && f.cause === cmd.id).then((f) => f.code as string),
    ]);
    if (r === 'forwarded') break;
    assert.is(r, 'no-route');
    assert.ok(i < 50, 'the claim never crossed to node A');
    await sleep(100);
    cmd = instruct();
  }
  // Kept and forwarded: now the events stream goes, so no answer can be stored from here on.
  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete('ANSCOPY_EVENTS');
  const ack = em.emit({ type: 'control.accepted', cause: cmd.id });
  target.send(ack);
  const refused = await target.next((f) => f.type === 'error' && f.cause === ack.id);
  assert.is(refused.code, 'store-unavailable');
  for (const [where, p] of [
    ['node A', onA],
    ['node B', onB],
  ] as const) {
    const got = await p.next((f) => f.id === ack.id).catch(() => undefined);
    assert.ok(got !== undefined, `the consumer on ${where} never got the answer`);
  }
  for (const n of nodes) assert.ok(n.proc.exitCode === null, `a relay node exited: ${n.output()}`);
});

test.run();
