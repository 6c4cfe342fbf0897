// D38 for a command that crosses nodes: the events stream takes writes while the commands
// stream cannot (here it is gone, which JetStream answers as it answers a stream without a
// leader: no responders). The sender's node keeps the command in history, cannot forward it, and
// tells the sender `store-unavailable` within 2 s, saying the command was not confirmed (a
// publish that timed out may still have been stored) and to send it again. `/healthz` says why.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { command } from '../../src/protocol/build.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor } from '../../src/streams/run.js';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { startFabricNodes, type RelayNode } from '../support/relay-node.js';
import { adapter, type TestAdapter } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { freshSession } from '../support/relay-harness.js';

const TOKEN = 'cmd-loss-secret';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: NatsServer;
let nc: NatsConnection;
let a: TestAdapter | undefined;
let c: RelayConsumer | undefined;
const nodes: RelayNode[] = [];
test.before(async () => {
  server = await startNatsServer();
  nodes.push(...(await startFabricNodes({ token: TOKEN, nats: server.url, namespace: 'cmdloss', leaseMs: 1500 })));
  nc = await connect({ servers: server.url });
});
test.after(async () => {
  await c?.close();
  await a?.handle.close();
  await nc?.close();
  await Promise.all(nodes.map((n) => n.kill()));
  await server.stop();
});

test('a command its node cannot forward is answered store-unavailable within 2 s, as not confirmed', async () => {
  const [nodeA, nodeB] = nodes as [RelayNode, RelayNode];
  const surface = fakeSurface();
  const link = connectRelay({
    url: nodeA.socketUrl,
    token: TOKEN,
    agent: surface.token,
    accepts: acceptsFor(surface, true),
  });
  a = await adapter({ surface, relay: link });
  const session = freshSession('cmdloss');
  await a.post(hookBody('SessionStart', session));
  c = await RelayConsumer.connect({ url: nodeB.socketUrl, token: TOKEN, agent: 'test-cli' });
  for (let i = 0; i < 100 && !(await c.roster()).some((e) => e.session === session); i++) await sleep(100);
  const instruct = (text: string) =>
    command({ agent: 'test-cli', host: 'h' }, session, {
      type: surface.steeringType,
      capture: 'redacted',
      data: { text },
    });

  // The path works before the fault: node B forwards to node A, the adapter acks.
  const first = await c.send(instruct('before the fault'), { timeoutMs: 5000 });
  assert.is(first.outcome, 'accepted', JSON.stringify(first));

  const jsm = await jetstreamManager(nc);
  await jsm.streams.delete('CMDLOSS_CMD');
  const cmd = instruct('while the commands stream cannot write');
  const t0 = Date.now();
  const r = await c.send(cmd, { timeoutMs: 5000 });
  const ms = Date.now() - t0;
  assert.is(r.outcome, 'refused', JSON.stringify(r));
  assert.is(r.outcome === 'refused' && r.code, 'store-unavailable');
  assert.ok(ms <= 2000, `the refusal took ${ms} ms`);
  const detail = r.outcome === 'refused' ? (r.detail ?? '') : '';
  assert.match(detail, /did not confirm the command/);
  assert.match(detail, /may still reach its target: send the same command again/);
  // History took the command all the same: the events stream was writable.
  const q = new URLSearchParams({ live: '0', filter: JSON.stringify({ session }) });
  const history = await (
    await fetch(`${nodeB.url}/stream?${q}`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).text();
  assert.ok(history.includes(cmd.id), 'the command is not in history');
  const health = await fetch(`${nodeB.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
  const body = (await health.json()) as { reason?: string };
  assert.is(health.status, 503);
  assert.match(body.reason ?? '', /forwarded command/);
  for (const n of nodes) assert.ok(n.proc.exitCode === null, `a relay node exited: ${n.output()}`);
});

test.run();
