// D38 and D19 across nodes: when another node's claim lapses. It lapses a lease after the claims
// bucket last took that claim's renewal, measured by the bucket's own writes as this node hears
// them (its own renewals), never by the clock alone: while the bucket has no leader (a JetStream
// election) the claims feed may still hear the server's heartbeats but no one's renewals, and a
// claim whose node could not renew it is still claimed (a command to it is not `no-route`). The
// claims feed's messages are given to the fabric as the feed would (its `heard`), on a clock
// of the test's.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { JsMsg } from '@nats-io/jetstream';
import type { Engine } from '../../src/relay/nats/engine.js';
import { Faults } from '../../src/relay/nats/faults.js';
import { NatsFabric } from '../../src/relay/nats/fabric.js';

const LEASE_MS = 1500;
let clock = 0;
Date.now = () => clock;

const claim = {
  session: 's',
  node: 'other',
  conn: '1',
  role: 'emitter',
  identity: { agent: 'test-agent' },
  owner: 'shared-token',
  bound: false,
};

function fabric() {
  const faults = new Faults(
    () => {},
    async () => {},
  );
  const f = new NatsFabric({} as Engine, 'me', LEASE_MS, () => {}, faults);
  f.attach({ fanOut: () => {}, peers: () => [], claimLeaseMs: 30_000 });
  const feed = f as unknown as { heard(m: JsMsg, key: string): void };
  const write = (key: string, text: string) =>
    feed.heard(
      { info: { timestampNanos: clock * 1e6 }, headers: undefined, string: () => text } as unknown as JsMsg,
      key,
    );
  return {
    claimed: () => [...f.remotePeers()].length === 1,
    /** This node's renewal, taken by the bucket now. */
    own: () => write('n.me', JSON.stringify({ node: 'me', at: clock })),
    /** The other node's renewal of its lease and its claim, taken by the bucket now. */
    other: () => {
      write('n.other', JSON.stringify({ node: 'other', at: clock }));
      write('c.s.other.1', JSON.stringify(claim));
    },
  };
}

test('a claim holds while the bucket takes no renewals at all (an election), and lapses a lease after it takes them again without it', () => {
  const f = fabric();
  for (clock = 0; clock <= 500; clock += 500) {
    f.own();
    f.other();
  }
  assert.ok(f.claimed());
  // No leader for the bucket: nobody's renewal is written, for well past a lease.
  clock = 3500;
  assert.ok(f.claimed(), "a claim lapsed while the bucket took no one's writes");
  // Elected: this node's renewals are taken again, the other node's not (yet).
  for (clock = 4000; clock <= 5500; clock += 500) {
    f.own();
    assert.ok(f.claimed(), `the claim lapsed ${clock - 4000} ms after the bucket took writes again`);
  }
  clock = 6000;
  f.own();
  assert.not.ok(f.claimed(), 'a claim its node never renewed after the election still counts');
});

test('a claim its node stops renewing lapses a lease after its last renewal, while the bucket takes the others', () => {
  const f = fabric();
  for (clock = 0; clock <= 500; clock += 500) {
    f.own();
    f.other();
  }
  for (clock = 1000; clock <= 2000; clock += 500) {
    f.own();
    assert.ok(f.claimed(), `lapsed at ${clock}`);
  }
  clock = 2500;
  f.own();
  assert.not.ok(f.claimed(), 'a claim not renewed for more than a lease still counts');
});

test('a claim renewed through the election holds throughout', () => {
  const f = fabric();
  for (clock = 0; clock <= 500; clock += 500) {
    f.own();
    f.other();
  }
  clock = 3500;
  assert.ok(f.claimed());
  for (clock = 4000; clock <= 8000; clock += 500) {
    f.own();
    f.other();
    assert.ok(f.claimed(), `lapsed at ${clock}`);
  }
});

test.run();
