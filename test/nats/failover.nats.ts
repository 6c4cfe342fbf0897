// Failover on a three-server JetStream cluster: two relay nodes (real `aep-steer relay --nats`
// processes), a real adapter linked to both (its own node first), a consumer on the other node.
// Mid-soak the adapter's node is killed with SIGKILL. The adapter moves to the surviving node and
// re-claims its sessions; the consumer retries every unsettled command with the same id.
// Asserted: no instruction lost, none delivered twice, every retry settled with the recorded ack,
// history on the survivor equal to the adapter's log, and the recovery within the node lease
// plus a retry.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startNatsCluster, type NatsCluster } from '../support/nats-server.js';
import { startFabricNodes, type RelayNode } from '../support/relay-node.js';
import { assertHistoryMatchesLog, assertSoak, closeSoaks, runSoak } from '../support/fabric-soak.js';

const TOKEN = 'failover-secret';
const LEASE_MS = 1500;

let cluster: NatsCluster;
const nodes: RelayNode[] = [];
test.before(async () => {
  cluster = await startNatsCluster(3);
  nodes.push(
    ...(await startFabricNodes({
      token: TOKEN,
      nats: cluster.urls,
      namespace: 'failover',
      leaseMs: LEASE_MS,
      replicas: 3,
    })),
  );
});
test.after(async () => {
  await closeSoaks();
  await Promise.all(nodes.map((n) => n.kill()));
  await cluster.stop();
});

test("kill -9 of the adapter's relay node mid-soak: nothing lost, nothing twice, retries get the recorded ack", async () => {
  const [nodeA, nodeB] = nodes as [RelayNode, RelayNode];
  const soak = await runSoak({
    label: 'relay node killed',
    token: TOKEN,
    adapterRelay: `${nodeA.socketUrl},${nodeB.socketUrl}`,
    consumerRelay: nodeB.socketUrl,
    sessions: 4,
    instructions: 48,
    everyMs: 30,
    fault: {
      at: 16,
      run: async () => {
        await new Promise((r) => setTimeout(r, 50));
        await nodeA.kill();
      },
    },
  });
  // The claims of the dead node lapse after its lease; then one retry.
  assertSoak(soak, LEASE_MS + 5000);
  assert.ok(soak.figures.retried > 0, 'the kill left no command to retry');
  // Every ack the sender settled on is the one the adapter recorded: one ack id per command,
  // byte-identical however often it was re-sent.
  for (const [id, r] of soak.settled) {
    const acks = soak.adapter.events.filter((e) => e.type === 'control.accepted' && e.cause === id);
    assert.is(new Set(acks.map((e) => e.id)).size, 1, `command ${id} got ${acks.length} different acks`);
    assert.is(r.outcome === 'accepted' && r.ack.id, acks[0]!.id);
  }
  await assertHistoryMatchesLog(soak, nodeB.url, TOKEN);
  const health = (await (
    await fetch(`${nodeB.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } })
  ).json()) as any;
  assert.is(health.store.engine, 'nats-jetstream');
  assert.is(health.store.nodes, 1);
  await soak.close();
});

test.run();
