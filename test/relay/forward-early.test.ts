// D41 on one node: a command goes to its target while its write is still under way; the target's
// answer reaches the sender only once the command is stored, and a write that fails after the
// forward is told to the sender as `store-unavailable` with `outcome: "unknown"`. A command
// refused before the forward never reaches the target. A second connection to the store's file
// (its lock, a refusing trigger) is the fault, so nothing in the relay is replaced.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import {
  FILE_RELAY_TOKEN as TOKEN,
  fileRelay,
  fileRelayAuth,
  history,
  otherConnection,
  removeFileRelayDirs,
} from '../support/file-relay.js';
import { emitterFor, freshSession, post, WsPeer } from '../support/relay-harness.js';

const TYPE = 'x.test-target.control.instruct';
const cli = { agent: 'test-cli', host: 'test-host' };

test.after(() => {
  removeFileRelayDirs();
});

type Relay = Awaited<ReturnType<typeof fileRelay>>['relay'];

/** A relay on a file with a second connection to that file (the fault), both closed after `body`. */
async function onFile(body: (relay: Relay, other: ReturnType<typeof otherConnection>) => Promise<void>): Promise<void> {
  const { relay, path } = await fileRelay();
  const other = otherConnection(path);
  try {
    await body(relay, other);
  } finally {
    other.close();
    await relay.close();
  }
}

/** A target claiming a fresh session and a sender subscribed to it, once its start went through. */
async function targetAndSender(relay: Relay, prefix: string) {
  const s = freshSession(prefix);
  const em = emitterFor(s, 'test-agent');
  const target = await WsPeer.target(relay.socketUrl, 'test-agent', [TYPE], TOKEN);
  const sender = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
  sender.send({ type: 'subscribe', id: 'w', filter: { session: s } });
  await sender.next((f) => f.type === 'subscribed');
  target.send(em.emit({ type: 'session.started' }));
  await sender.next((f) => f.type === 'session.started');
  return { s, em, target, sender };
}

test("while another connection holds the file's write lock: a command is forwarded, its answer waits for its commit and holds its session's later events behind it; the POST's 202 and a replay wait too", () =>
  onFile(async (relay, other) => {
    const s = freshSession('locked');
    const elsewhere = freshSession('elsewhere');
    const em = emitterFor(s, 'test-agent');
    const em2 = emitterFor(elsewhere, 'test-agent');
    const target = await WsPeer.target(relay.socketUrl, 'test-agent', [TYPE], TOKEN);
    const sub = await WsPeer.greet(relay.socketUrl, { role: 'consumer' }, TOKEN);
    sub.send({ type: 'subscribe', id: 'w', filter: { session: s } });
    sub.send({ type: 'subscribe', id: 'e', filter: { session: elsewhere } });
    await sub.next((f) => f.type === 'subscribed' && f.id === 'e');
    target.send(em.emit({ type: 'session.started' }));
    target.send(em2.emit({ type: 'session.started' }));
    await sub.next((f) => f.type === 'session.started' && f.session === elsewhere);

    other.exec('BEGIN IMMEDIATE');
    // The writer thread now waits on the lock (SQLite's busy timeout); the relay's thread does not.
    for (let i = 0; i < 20; i += 1) target.send(em.emit({ type: 'progress.status', data: { phase: `p${i}` } }));
    await sub.next((f) => f.type === 'progress.status' && f.data?.phase === 'p19');
    const cmd = command(cli, s, { type: TYPE, capture: 'redacted', data: { text: 'go on' } });
    sub.send(cmd);
    await target.next((f) => f.id === cmd.id);

    let answered = false;
    const posted = post(
      relay.url,
      `${JSON.stringify(em2.emit({ type: 'progress.status', data: { phase: 'http' } }))}\n`,
      fileRelayAuth,
    ).then((r) => {
      answered = true;
      return r;
    });
    let replayed = false;
    const replay = history(relay, s).then((h) => {
      replayed = true;
      return h;
    });
    // The answer, then one more event of its session, then one of another session, on one socket:
    // the relay reads them in that order, so the last one's arrival shows the first two were held.
    target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
    target.send(em.emit({ type: 'progress.status', data: { phase: 'after-ack' } }));
    target.send(em2.emit({ type: 'progress.status', data: { phase: 'other-session' } }));
    await sub.next((f) => f.data?.phase === 'other-session');
    assert.not.ok(
      sub.events().some((e) => e.type === 'control.accepted'),
      'the answer waits for the command to be stored',
    );
    assert.not.ok(
      sub.events().some((e) => (e.data as { phase?: string } | undefined)?.phase === 'after-ack'),
      "the session's later events wait behind it",
    );
    assert.not.ok(answered, 'the POST is answered only once its event is stored');
    assert.not.ok(replayed, 'a replay waits for what was fanned out before it');

    other.exec('COMMIT');
    await sub.next((f) => f.data?.phase === 'after-ack');
    const order = sub
      .events()
      .filter((e) => e.session === s)
      .map((e) => e.type);
    assert.equal(order.slice(-3), [TYPE, 'control.accepted', 'progress.status'], 'in the order the relay took them');
    const r = await posted;
    assert.is(r.status, 202);
    assert.is(r.body.stored, 1);
    const waited = (await replay).map((t) => JSON.parse(t) as { type: string; id: string });
    assert.ok(
      waited.some((e) => e.id === cmd.id),
      'the replay read what was written before it',
    );
    const h = (await history(relay, s)).map((t) => JSON.parse(t) as { type: string; id: string });
    assert.is(h.length, 1 + 20 + 1 + 1 + 1, 'session.started, 20 progress, the command, its ack, one more');
    assert.is(h[21]!.id, cmd.id);
    assert.is(h[22]!.type, 'control.accepted');
    target.close();
    sub.close();
  }));

test("a command whose write fails after the forward: the sender hears store-unavailable, outcome unknown, before the target's answer; the same id sent again is stored once", () =>
  onFile(async (relay, other) => {
    const { s, em, target, sender } = await targetAndSender(relay, 'unknown');
    other.exec(
      `CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.raw LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`,
    );
    const cmd = command(cli, s, { type: TYPE, capture: 'redacted', data: { text: 'poison' } });
    sender.send(cmd);
    await target.next((f) => f.id === cmd.id);
    const told = await sender.next((f) => f.type === 'error' && f.cause === cmd.id);
    assert.is(told.code, 'store-unavailable');
    assert.is(told.outcome, 'unknown');
    assert.match(told.detail, 'same id');

    target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
    await sender.next((f) => f.type === 'control.accepted' && f.cause === cmd.id);
    const at = (pred: (f: { json: { type?: string; cause?: string } }) => boolean) => sender.frames.findIndex(pred);
    assert.ok(
      at((f) => f.json?.type === 'error') < at((f) => f.json?.type === 'control.accepted'),
      'the sender hears of the failed write before the answer',
    );

    other.exec('DROP TRIGGER refuse');
    const seen = target.frames.length;
    sender.send(cmd);
    await target.next((f) => f.id === cmd.id, seen);
    target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
    const h = (await history(relay, s)).map((t) => JSON.parse(t) as { type: string; id: string });
    assert.is(h.filter((e) => e.id === cmd.id).length, 1, 'the resend is stored once');
    target.close();
    sender.close();
  }));

test('a command refused before the forward never reaches the target', () =>
  onFile(async (relay) => {
    const { s, target, sender } = await targetAndSender(relay, 'refused');
    const refused = command(cli, s, {
      type: 'x.other-vendor.control.instruct',
      capture: 'redacted',
      data: { text: 'no' },
    });
    sender.send(refused);
    const err = await sender.next((f) => f.type === 'error' && f.cause === refused.id);
    assert.is.not(err.code, 'store-unavailable');
    const good = command(cli, s, { type: TYPE, capture: 'redacted', data: { text: 'yes' } });
    sender.send(good);
    await target.next((f) => f.id === good.id);
    assert.not.ok(
      target.frames.some((f) => f.json?.id === refused.id),
      'the refused command was never forwarded',
    );
    target.close();
    sender.close();
  }));

test('a POSTed command goes to its target while the write lock is held; its answer and the 202 wait for the commit', () =>
  onFile(async (relay, other) => {
    const { s, em, target, sender } = await targetAndSender(relay, 'post-locked');
    // Another session of the same target, whose event after the answer shows the answer was read.
    const elsewhere = emitterFor(freshSession('post-elsewhere'), 'test-agent');
    sender.send({ type: 'subscribe', id: 'o', filter: { session: elsewhere.session } });
    await sender.next((f) => f.type === 'subscribed' && f.id === 'o');
    const cmd = command(cli, s, { type: TYPE, capture: 'redacted', data: { text: 'posted' } });
    other.exec('BEGIN IMMEDIATE');
    let answered = false;
    const posted = post(relay.url, `${JSON.stringify(cmd)}\n`, fileRelayAuth).then((r) => {
      answered = true;
      return r;
    });
    await target.next((f) => f.id === cmd.id);
    target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
    target.send(elsewhere.emit({ type: 'session.started' }));
    await sender.next((f) => f.type === 'session.started' && f.session === elsewhere.session);
    assert.not.ok(answered, 'the POST is answered only once its command is stored');
    assert.not.ok(
      sender.events().some((e) => e.type === 'control.accepted'),
      'the answer waits for the command to be stored',
    );
    other.exec('COMMIT');
    const r = await posted;
    assert.is(r.status, 202);
    assert.equal(r.body.routed, [cmd.id]);
    await sender.next((f) => f.type === 'control.accepted' && f.cause === cmd.id);
    target.close();
    sender.close();
  }));

test('a POSTed command whose write fails after the forward: 503 store-unavailable, outcome unknown, then its answer', () =>
  onFile(async (relay, other) => {
    const { s, em, target, sender } = await targetAndSender(relay, 'post-unknown');
    other.exec(
      `CREATE TRIGGER refuse_post BEFORE INSERT ON events WHEN NEW.raw LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`,
    );
    const cmd = command(cli, s, { type: TYPE, capture: 'redacted', data: { text: 'poison' } });
    const posted = post(relay.url, `${JSON.stringify(cmd)}\n`, fileRelayAuth);
    await target.next((f) => f.id === cmd.id);
    const r = await posted;
    assert.is(r.status, 503);
    assert.is(r.body.code, 'store-unavailable');
    assert.is(r.body.outcome, 'unknown');
    assert.match(r.body.detail, 'same id');
    target.send(em.emit({ type: 'control.accepted', cause: cmd.id }));
    await sender.next((f) => f.type === 'control.accepted' && f.cause === cmd.id);
    target.close();
    sender.close();
  }));

test.run();
