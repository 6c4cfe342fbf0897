// A feed that stops hearing its server is reopened by the relay itself, however the client
// library is stuck: a reopen whose request is never answered (a cluster electing a leader) is
// given up and made again, and a consumer that goes silent without the library reporting
// anything (the library resuming a durable consumer after a reconnect watches nothing until its
// own request is answered) is reopened. Both hung for good before: commands to that node were
// then neither refused nor delivered. The consumers here are stand-ins with the library's shape.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Consumer, JsMsg } from '@nats-io/jetstream';
import { ClaimLeases, CLAIMS_SILENT_MS } from '../../src/relay/nats/claim-leases.js';
import type { Engine } from '../../src/relay/nats/engine.js';
import type { Faults } from '../../src/relay/nats/faults.js';
import { Feed, OPEN_DEADLINE_MS, STUCK_MS } from '../../src/relay/nats/feed.js';
import { names } from '../../src/relay/nats/subjects.js';

/** An async iterable that yields what is pushed until it is stopped. */
function channel<T>() {
  const queue: T[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  return {
    push(v: T) {
      queue.push(v);
      wake?.();
    },
    stop() {
      done = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length > 0) yield queue.shift()!;
        if (done) return;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    },
  };
}

/** A consumer whose pull hears nothing at all (no message, no heartbeat, no status). */
function silentConsumer(consumed: () => void) {
  const stopped: boolean[] = [];
  const consumer = {
    consume: async () => {
      consumed();
      const msgs = channel<JsMsg>();
      const status = channel<{ type: string }>();
      const end = msgs.stop;
      return Object.assign(msgs, {
        status: () => status,
        stop: () => {
          stopped.push(true);
          end();
          status.stop();
        },
      });
    },
    delete: async () => true,
  };
  return { consumer: consumer as unknown as Consumer, stopped };
}

/** Resolves when `f` first returns true, polled on each event loop turn; fails past `ms`. */
async function until(f: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!f()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

test('a reopen whose request the cluster never answers is given up and made again', async () => {
  const lines: string[] = [];
  let opens = 0;
  let consumed = 0;
  const feed = new Feed(
    {
      what: 'the test feed',
      lastSeq: async () => 0,
      onMessage: () => {},
      open: (): Promise<Consumer> => {
        opens += 1;
        // The second open is the reopen: its request is never answered.
        if (opens === 2) return new Promise<Consumer>(() => {});
        return Promise.resolve(silentConsumer(() => (consumed += 1)).consumer);
      },
    },
    (l) => lines.push(l),
  );
  try {
    await feed.start();
    feed.restart('the test lost its consumer');
    await until(() => consumed >= 2, OPEN_DEADLINE_MS + STUCK_MS + 5000, 'the feed never reopened');
    assert.ok(opens >= 3, `opened ${opens} times`);
    assert.ok(
      lines.some((l) => /the test feed resumed after/.test(l)),
      lines.join('\n'),
    );
  } finally {
    feed.stop();
  }
});

test('a consumer that goes silent with the client library saying nothing is noticed and reopened', async () => {
  const lines: string[] = [];
  let opens = 0;
  const consumers: ReturnType<typeof silentConsumer>[] = [];
  const feed = new Feed(
    {
      what: 'the durable test feed',
      durable: true,
      lastSeq: async () => 0,
      onMessage: () => {},
      open: async () => {
        opens += 1;
        const c = silentConsumer(() => {});
        consumers.push(c);
        return c.consumer;
      },
    },
    (l) => lines.push(l),
  );
  try {
    await feed.start();
    await until(() => opens >= 2, STUCK_MS * 3, 'the silent feed was never reopened');
    assert.is(consumers[0]!.stopped.length, 1, 'the silent consumer was not stopped');
    assert.ok(
      lines.some((l) => /the durable test feed went quiet \(silent for \d/.test(l)),
      lines.join('\n'),
    );
  } finally {
    feed.stop();
  }
});

test('a feed that hears its heartbeats is left alone', async () => {
  let opens = 0;
  let status: ReturnType<typeof channel<{ type: string }>> | undefined;
  const feed = new Feed(
    {
      what: 'the heard feed',
      lastSeq: async () => 0,
      onMessage: () => {},
      open: async () => {
        opens += 1;
        const msgs = channel<JsMsg>();
        status = channel<{ type: string }>();
        const s = status;
        const end = msgs.stop;
        const stop = () => {
          end();
          s.stop();
        };
        return {
          consume: async () => Object.assign(msgs, { status: () => s, stop }),
          delete: async () => true,
        } as unknown as Consumer;
      },
    },
    () => {},
  );
  try {
    await feed.start();
    // Heartbeats every quarter of the stuck bound, for twice that bound.
    for (let i = 0; i < 8; i++) {
      status!.push({ type: 'heartbeat' });
      await new Promise((r) => setTimeout(r, STUCK_MS / 4));
    }
    assert.is(opens, 1, 'a feed hearing its heartbeats was reopened');
  } finally {
    feed.stop();
  }
});

test('a claims feed one heartbeat late is a slow store, not a store that is down', () => {
  // Only what the claims feed's silence needs: its feed is made, not opened.
  const engine = { names: names('late'), quick: { jsm: {} } } as unknown as Engine;
  const host = { connId: () => '1', claimLeaseMs: () => 0, failed: () => () => {}, publishCommand: () => {} };
  const leases = new ClaimLeases(engine, 'node', 10_000, {} as Faults, host, () => {});
  leases.openFeed();
  const now = Date.now();
  // The server's idle heartbeat comes every second: two seconds is one heartbeat late.
  assert.is(leases.unheard(now + 2000), undefined, 'a heartbeat one second late made the store unavailable');
  assert.match(leases.unheard(now + CLAIMS_SILENT_MS + 500) ?? '', /the claims feed has heard nothing for 3\.5 s/);
});

test.run();
