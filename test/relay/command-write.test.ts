// A command is written at once with its own session's pending events ahead of it; other
// sessions' pending events stay for the group write, so a busy stream elsewhere is not part of
// the command's commit. Seen through a store that records each write it is asked for.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { RelayStore, type Admission, type FaultAwareStore } from '../../src/relay/store.js';
import { emitterFor, freshSession, SseClient, WsPeer } from '../support/relay-harness.js';

const TOKEN = 'shared-secret';
const GROUP_MS = 3000;
const writes: { ids: string[]; sessions: string[]; now: boolean }[] = [];

/** The in-process store, its group write long enough that only a command or a read writes within a test. */
function recordingStore(): FaultAwareStore {
  const inner = RelayStore.open({ path: ':memory:' });
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'groupWriteMs') return GROUP_MS;
      if (key === 'admitAll') {
        return (list: readonly Admission[], opts?: { now?: boolean }) => {
          writes.push({ ids: list.map((a) => a.id), sessions: list.map((a) => a.session), now: opts?.now === true });
          return target.admitAll(list);
        };
      }
      const v = Reflect.get(target, key, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  }) as FaultAwareStore;
}

let relay: RelayHandle;
test.before(async () => {
  relay = await startRelay({ port: 0, token: TOKEN, store: recordingStore() });
});
test.after(async () => {
  await relay.close();
});

const history = async (session: string) => {
  const h = await SseClient.open(
    relay.url,
    { from: JSON.stringify([{ session }]), live: '0' },
    { authorization: `Bearer ${TOKEN}` },
  );
  await h.done();
  return h.events;
};

test("a command's write takes its session's pending events, in order, and leaves another session's for the group write", async () => {
  const steered = freshSession('steered');
  const busy = freshSession('busy');
  const target = await WsPeer.target(relay.socketUrl, 'target', ['x.test-target.control.instruct'], TOKEN);
  const other = await WsPeer.greet(relay.socketUrl, { role: 'emitter', identity: { agent: 'busy' } }, TOKEN);
  const watcher = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
  watcher.send({ type: 'subscribe', id: 'all', filter: {} });
  await watcher.next((f) => f.type === 'subscribed');

  const em = emitterFor(steered, 'target');
  const started = em.emit({ type: 'session.started' });
  const turn = em.emit({ type: 'run.started' });
  const bem = emitterFor(busy, 'busy');
  const busyEvents = [bem.emit({ type: 'session.started' }), bem.emit({ type: 'run.started' })];
  other.send(busyEvents[0]);
  target.send(started);
  other.send(busyEvents[1]);
  target.send(turn);
  // Fanned out means admitted and pending: all four wait for the group write.
  for (const e of [...busyEvents, started, turn]) await watcher.next((f) => f.id === e.id);
  assert.equal(writes, [], 'nothing written before the group write or a command');

  const cmd = command({ agent: 'test-cli', host: 'test-host' }, steered, {
    type: 'x.test-target.control.instruct',
    capture: 'redacted',
    data: { text: 'run the tests' },
  });
  watcher.send(cmd);
  await target.next((f) => f.id === cmd.id);

  assert.equal(writes, [{ ids: [started.id, turn.id, cmd.id], sessions: [steered, steered, steered], now: true }]);

  // A read writes what is still pending first: the busy session's events, in their own write.
  assert.equal(
    (await history(busy)).map((e) => e.id),
    busyEvents.map((e) => e.id),
  );
  assert.is(writes.length, 2);
  assert.equal(
    writes[1]!.ids,
    busyEvents.map((e) => e.id),
  );
  assert.equal(
    (await history(steered)).map((e) => e.id),
    [started.id, turn.id, cmd.id],
  );
  for (const p of [target, other, watcher]) p.close();
});

test.run();
