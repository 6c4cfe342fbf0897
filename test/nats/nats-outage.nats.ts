// D38 on real processes: one nats-server and two relay nodes (`aep-steer relay --nats`). Under a
// steady steering load NATS is killed with SIGKILL and started again on its store directory.
// Asserted: both relay processes live through it and answer afterwards; while NATS is down every
// command and event is refused `store-unavailable` within 2 s (never `no-route`), `/healthz`
// answers 503 with the reason, and the log gives advice for NATS, not for a SQLite file; after
// NATS returns nothing is lost or delivered twice and the relay's history equals the adapter's
// log (the adapter's resends fill it, no hole, no duplicate). The second test kills the
// adapter's relay node during the outage as well: its link moves to the other URL.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startNatsServer, type NatsServer } from '../support/nats-server.js';
import { startFabricNodes, type RelayNode } from '../support/relay-node.js';
import { emitterFor, freshSession, WsPeer } from '../support/relay-harness.js';
import { assertHistoryMatchesLog, assertSoak, closeSoaks, runSoak } from '../support/fabric-soak.js';

const TOKEN = 'outage-secret';
const LEASE_MS = 1500;
const OUTAGE_MS = 3000;
/** After NATS is back: reconnect (250 ms steps), feeds reopened, one retry of each command. */
const RECOVERY_BOUND_MS = 10_000;

let server: NatsServer;
const nodes: RelayNode[] = [];
test.before(async () => {
  server = await startNatsServer();
  nodes.push(...(await startFabricNodes({ token: TOKEN, nats: server.url, namespace: 'outage', leaseMs: LEASE_MS })));
});
test.after(async () => {
  await closeSoaks();
  await Promise.all(nodes.map((n) => n.kill()));
  await server.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const health = async (n: RelayNode) => {
  const res = await fetch(`${n.url}/healthz`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return { status: res.status, body: (await res.json()) as { ok: boolean; reason?: string } };
};
const alive = (n: RelayNode) => n.proc.exitCode === null && n.proc.signalCode === null;

interface Probe {
  how: string;
  code: unknown;
  ms: number;
}

/** An event sent to `n` over its socket and over HTTP: the refusal's code and how long it took. */
async function probeEvents(n: RelayNode): Promise<Probe[]> {
  const em = emitterFor(freshSession('probe'));
  const peer = await WsPeer.greet(n.socketUrl, { role: 'emitter' }, TOKEN);
  const e = em.emit({ type: 'progress.status', data: { phase: 'probe' } });
  let t0 = Date.now();
  peer.send(e);
  const frame = await peer.next((f) => f.type === 'error' && f.cause === e.id);
  const out: Probe[] = [{ how: 'socket', code: frame.code, ms: Date.now() - t0 }];
  peer.close();
  t0 = Date.now();
  const res = await fetch(`${n.url}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'aep-version': '0.1', authorization: `Bearer ${TOKEN}` },
    body: JSON.stringify(em.emit({ type: 'progress.status', data: { phase: 'probe' } })),
  });
  const body = (await res.json()) as { code?: string };
  out.push({ how: `HTTP ${res.status}`, code: body.code, ms: Date.now() - t0 });
  return out;
}

let probes: Probe[] = [];

/** Kills NATS, watches both nodes' `/healthz` while it is down (and probes them with events), starts it again. */
async function outage(
  watch: RelayNode[],
  meanwhile?: () => Promise<void>,
): Promise<{ status: number; reason?: string }[]> {
  await server.kill();
  probes = [];
  const seen: { status: number; reason?: string }[] = [];
  const until = Date.now() + OUTAGE_MS;
  let extra = meanwhile === undefined ? undefined : sleep(500).then(meanwhile);
  while (Date.now() < until) {
    for (const n of watch) {
      if (!alive(n)) continue;
      const h = await health(n).catch(() => undefined);
      if (h) seen.push({ status: h.status, reason: h.body.reason });
      if (probes.length === 0 && Date.now() > until - OUTAGE_MS / 2) probes.push(...(await probeEvents(n)));
    }
    await sleep(200);
  }
  await extra;
  extra = undefined;
  await server.restart();
  return seen;
}

test('NATS killed and restarted under load: the relays live, refuse store-unavailable meanwhile, and history has no hole', async () => {
  const [nodeA, nodeB] = nodes as [RelayNode, RelayNode];
  let during: { status: number; reason?: string }[] = [];
  const soak = await runSoak({
    label: 'NATS killed and restarted',
    token: TOKEN,
    // The adapter knows only node B (the node that used to exit).
    adapterRelay: nodeB.socketUrl,
    consumerRelay: nodeA.socketUrl,
    sessions: 3,
    instructions: 80,
    everyMs: 60,
    fault: {
      at: 10,
      run: async () => {
        during = await outage([nodeA, nodeB]);
      },
    },
  });
  assertSoak(soak, RECOVERY_BOUND_MS);
  const f = soak.figures;
  assert.ok((f.refused['store-unavailable'] ?? 0) > 0, 'no command was refused store-unavailable during the outage');
  assert.is(f.refused['no-route'], undefined, 'a command was refused no-route while its adapter was connected');
  assert.ok(f.slowestRefusalMs <= 2000, `a store-unavailable refusal took ${f.slowestRefusalMs} ms`);
  // Events too, on either binding, within 2 s; the adapter heard the refusal and resent.
  assert.ok(probes.length === 2, 'no event was probed during the outage');
  for (const p of probes) {
    assert.is(p.code, 'store-unavailable', `an event over ${p.how} was answered ${String(p.code)}`);
    assert.ok(p.ms <= 2000, `an event over ${p.how} was refused after ${p.ms} ms`);
  }
  assert.ok(
    probes.some((p) => p.how === 'HTTP 503'),
    `HTTP answered ${probes.map((p) => p.how).join(', ')}`,
  );
  console.log(`events during the outage: ${probes.map((p) => `${p.how} ${String(p.code)} in ${p.ms} ms`).join(', ')}`);
  assert.ok(
    soak.adapter.errors.some((e) => /store-unavailable/.test(e.message)),
    'the adapter heard no store-unavailable',
  );
  // /healthz said 503 with the reason on both nodes while NATS was down.
  const down = during.filter((h) => h.status === 503);
  assert.ok(down.length > 0, `healthz never answered 503: ${JSON.stringify(during)}`);
  for (const h of down) assert.match(h.reason ?? '', /NATS|JetStream/);
  const { events } = await assertHistoryMatchesLog(soak, nodeA.url, TOKEN);
  assert.ok(events > f.sent, `only ${events} events logged`);
  // The old crash came 8-9 s after NATS returned: both nodes still run and answer 200 after that.
  await sleep(Math.max(0, 10_000 - f.recoveryMs));
  for (const n of [nodeA, nodeB]) {
    assert.ok(alive(n), `a relay node exited: ${n.output()}`);
    assert.is((await health(n)).status, 200);
    assert.not.match(n.output(), /Free disk space|store file's permissions/);
    assert.match(n.output(), /store unavailable \(NATS/);
    assert.match(n.output(), /store available again after/);
    assert.not.match(n.output(), /Unhandled|TimeoutError:/);
  }
  await soak.close();
});

test('an adapter with two relay URLs fails over during a NATS outage: nothing lost, nothing twice', async () => {
  const [nodeA, nodeB] = nodes as [RelayNode, RelayNode];
  const soak = await runSoak({
    label: 'adapter failover during a NATS outage',
    token: TOKEN,
    adapterRelay: `${nodeB.socketUrl},${nodeA.socketUrl}`,
    consumerRelay: nodeA.socketUrl,
    sessions: 3,
    instructions: 60,
    everyMs: 60,
    // While NATS is down the adapter's node is killed: its link moves to node A, also without NATS.
    fault: { at: 10, run: async () => void (await outage([nodeA], () => nodeB.kill())) },
  });
  // Node B's claims lapse after the node lease, then one retry.
  assertSoak(soak, RECOVERY_BOUND_MS + LEASE_MS);
  assert.ok(!alive(nodeB));
  assert.ok(alive(nodeA), `node A exited: ${nodeA.output()}`);
  await assertHistoryMatchesLog(soak, nodeA.url, TOKEN);
  await soak.close();
});

test.run();
