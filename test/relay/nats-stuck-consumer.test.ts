// A commands consumer that hears its server but gets nothing is made anew. After a server loss a
// JetStream cluster may keep a durable consumer that answers pulls with heartbeats yet delivers
// nothing (the node then saw no error, and its commands sat in the stream for good). Here B's
// durable is swapped for one of the same name that matches no subject: B still hears it. Each
// command's early copy still reaches the target, and its answer goes out once the hold ends;
// the stream copy that never came reopens B's consumer, a second one makes it anew, and from
// then on the stream copies reach B again.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { command } from '../../src/protocol/build.js';
import { NatsStore } from '../../src/relay/nats/store.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { crossingSession } from '../support/nats-crossing.js';
import { natsUrl } from '../support/relay-store.js';

const TOKEN = 'stuck-secret';
const TYPE = 'x.test-target.control.instruct';
const namespace = `stuck${process.pid}`;
const STREAM = `${namespace.toUpperCase()}_CMD`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let a: RelayHandle;
let b: RelayHandle;
let storeB: NatsStore;
let nc: NatsConnection;
let jsm: JetStreamManager;
const logB: string[] = [];

test.before(async () => {
  a = await startRelay({ port: 0, token: TOKEN, store: await NatsStore.open({ servers: await natsUrl(), namespace }) });
  storeB = await NatsStore.open({ servers: await natsUrl(), namespace, log: (l) => logB.push(l) });
  b = await startRelay({ port: 0, token: TOKEN, store: storeB });
  nc = await connect({ servers: await natsUrl() });
  jsm = await jetstreamManager(nc);
});
test.after(async () => {
  await nc?.close();
  await Promise.all([a.close(), b.close()]);
});

/** Replaces B's commands consumer with one of its name that delivers nothing, until B reads that one. */
async function deafenB(durable: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const info = await jsm.consumers.info(STREAM, durable).catch(() => undefined);
    if (info?.config.filter_subject === `${namespace}.cmd.nowhere.>`) return;
    await jsm.consumers.delete(STREAM, durable).catch(() => false);
    await jsm.consumers
      .add(STREAM, {
        durable_name: durable,
        filter_subject: `${namespace}.cmd.nowhere.>`,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.New,
      })
      .catch(() => undefined);
    await sleep(50);
  }
  throw new Error('the stand-in consumer never stayed');
}

test("B's commands consumer delivers nothing yet answers heartbeats: the missed stream copies make it anew", async () => {
  const o = { aSocket: a.socketUrl, bSocket: b.socketUrl, token: TOKEN, type: TYPE, prefix: 'stuck' };
  const { s, em, target, sender } = await crossingSession(o);
  const durable = `${namespace}_cmd_${storeB.node}`;
  await deafenB(durable);
  const round = async (): Promise<void> => {
    const cmd = command({ agent: 'test-cli', host: 'h' }, s, { type: TYPE, capture: 'redacted', data: { text: 'go' } });
    sender.send(cmd);
    await target.next((f) => f.id === cmd.id);
    const answer = em.emit({ type: 'control.accepted', cause: cmd.id });
    target.send(answer);
    // Held on B until its stream copy comes or the hold ends: it goes out either way.
    await sender.next((f) => f.id === answer.id);
  };
  await round();
  await round();
  // B made its consumer anew: it reads the commands stream again, and the next command's stream copy reaches it.
  for (let i = 0; i < 200 && !logB.some((l) => /making it anew/.test(l)); i++) await sleep(50);
  assert.ok(
    logB.some((l) => /forwarded-commands consumer missed commands twice; making it anew/.test(l)),
    logB.join('\n'),
  );
  for (let i = 0; i < 200; i++) {
    const info = await jsm.consumers.info(STREAM, durable).catch(() => undefined);
    if (info?.config.filter_subject === `${namespace}.cmd.${storeB.node}.>`) break;
    await sleep(50);
  }
  await round();
  const last = (await jsm.streams.info(STREAM)).state.last_seq;
  let floor = 0;
  for (let i = 0; i < 200 && floor < last; i++) {
    floor = (await jsm.consumers.info(STREAM, durable).catch(() => undefined))?.ack_floor.stream_seq ?? 0;
    if (floor < last) await sleep(50);
  }
  assert.ok(floor >= last, `B never read the last stream copy (ack floor ${floor}, stream at ${last})`);
  sender.close();
  target.close();
});

test.run();
