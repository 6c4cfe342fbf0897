// The fan-out policy over channels whose buffered amount the test sets (the real slow-socket
// case is in server.test.ts).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionEmitter } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { Hub, textFor, type Channel, type Sink } from '../../src/relay/hub.js';
import { parseSubscription } from '../../src/relay/subscription.js';

function sink(hub: Hub, filter: unknown = {}, capture?: string) {
  const got: string[] = [];
  const state = { pressure: 0, overflowed: undefined as unknown };
  const channel: Channel = { pressure: () => state.pressure, overflow: (d) => (state.overflowed = d) };
  const s: Sink = {
    sub: 'sub-1',
    channel,
    spec: parseSubscription({ filter, capture }, 10),
    delivered: new Map(),
    write: (t) => got.push(t),
    exhausted: () => {},
  };
  hub.add(s);
  return { got, state, s };
}

const em = new SessionEmitter({ agent: 'a', session: 's1', host: 'h' });

test('filters select; every received copy is forwarded, redeliveries included (AEP-0003 §5)', () => {
  const hub = new Hub();
  const runs = sink(hub, { type: 'run.*' });
  const all = sink(hub);
  const e = em.emit({ type: 'run.started', run: 'r' });
  const raw = JSON.stringify(e);
  hub.fanOut(e, raw);
  hub.fanOut(e, raw);
  hub.fanOut(em.emit({ type: 'session.started' }), '{}');
  assert.equal(runs.got, [raw, raw]);
  assert.is(all.got.length, 3);
});

test('capture ceiling: raw bytes when allowed, down-levelled text otherwise', () => {
  const e = em.emit({
    type: 'run.started',
    run: 'r',
    capture: 'redacted',
    data: { trigger: 'user', prompt: 'SECRET' },
  });
  const raw = JSON.stringify(e);
  assert.is(textFor(e, raw, undefined), raw);
  assert.is(textFor(e, raw, 'full'), raw);
  const low = JSON.parse(textFor(e, raw, 'metadata')) as AepEvent;
  assert.is(low.capture, 'metadata');
  assert.equal(low.data, { trigger: 'user' });
  assert.not.match(textFor(e, raw, 'none'), /SECRET|trigger/);
});

test('backpressure: over the soft mark debug/info are dropped and counted, notice still flows', () => {
  const hub = new Hub({ soft: 100, hard: 1000 });
  const c = sink(hub);
  c.state.pressure = 500;
  hub.fanOut(em.emit({ type: 'progress.status', severity: 'debug' }), 'debug');
  hub.fanOut(em.emit({ type: 'progress.status' }), 'info');
  hub.fanOut(em.emit({ type: 'progress.status', severity: 'notice' }), 'notice');
  assert.equal(c.got, ['notice']);
  assert.is(hub.counters.dropped, 2);
  assert.is(c.state.overflowed, undefined);
});

test('backpressure: over the hard mark a notice-or-above event disconnects with the delivered positions', () => {
  const hub = new Hub({ soft: 100, hard: 1000 });
  const c = sink(hub);
  const first = em.emit({ type: 'progress.status', severity: 'warning' });
  hub.fanOut(first, 'w');
  c.state.pressure = 5000;
  hub.fanOut(em.emit({ type: 'error.raised', severity: 'error', data: { error: { kind: 'x' } } }), 'e');
  assert.equal(c.got, ['w']);
  assert.equal(c.state.overflowed, [{ sub: 'sub-1', session: 's1', epoch: 0, seq: first.seq }]);
  assert.is(hub.counters.disconnected, 1);
  assert.is(hub.size, 0);
});

test.run();
