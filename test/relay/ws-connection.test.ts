// The adapter's relay link against real relays that stop and start on the same port.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command } from '../../src/protocol/build.js';
import type { SteeringError } from '../../src/protocol/errors.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { testRelay } from '../support/relay-store.js';
import { connectEmitter } from '../support/emitter-link.js';
import { startTestTarget } from '../support/relay-target.js';
import { emitterFor, freshSession, SseClient } from '../support/relay-harness.js';

const TOKEN = 'link-token';
const sender = { agent: 'test-cli', host: 'test-host' };

async function history(url: string, session: string): Promise<string[]> {
  const c = await SseClient.open(
    url,
    { from: JSON.stringify([{ session }]), live: '0' },
    { authorization: `Bearer ${TOKEN}` },
  );
  await c.done();
  return c.messages.filter((m) => m.data).map((m) => m.data!);
}

test('events sent while the relay is down are held and delivered in order once it is up', async () => {
  const probe = await testRelay({ port: 0, storePath: ':memory:', token: TOKEN });
  const port = probe.port;
  await probe.close();
  const errors: SteeringError[] = [];
  const link = connectEmitter({
    url: `ws://127.0.0.1:${port}/socket`,
    token: TOKEN,
    agent: 'test-agent',
    backoffInitialMs: 20,
    backoffMaxMs: 100,
    onError: (e) => errors.push(e),
  });
  const s = freshSession();
  const em = emitterFor(s);
  const evs = [0, 1, 2].map(() => em.emit({ type: 'progress.status' }));
  for (const e of evs) link.send(e); // never blocks, never throws
  assert.not.ok(link.connected);
  const relay = await testRelay({ port, storePath: ':memory:', token: TOKEN });
  await link.ready();
  // The link writes in order on one socket; the last one in history means all arrived.
  let got: string[] = [];
  for (let i = 0; i < 100 && got.length < 3; i++) got = await history(relay.url, s);
  assert.equal(
    got,
    evs.map((e) => JSON.stringify(e)),
  );
  assert.ok(errors.some((e) => e.code === 'RELAY_UNREACHABLE'));
  await link.close();
  await relay.close();
});

test('after a relay restart the link re-claims its sessions, so commands route again without new events', async () => {
  const storePath = join(mkdtempSync(join(tmpdir(), 'link-')), 'relay.db');
  const first = await testRelay({ port: 0, storePath, token: TOKEN });
  const port = first.port;
  const s = freshSession();
  const target = await startTestTarget({
    url: first.socketUrl,
    token: TOKEN,
    accepts: ['control.pause'],
    sessions: [s],
  });
  let h: string[] = [];
  for (let i = 0; i < 100 && h.length < 1; i++) h = await history(first.url, s);
  await first.close();
  const second = await testRelay({ port, storePath, token: TOKEN });
  await target.link.ready();
  const c = await RelayConsumer.connect({ url: second.socketUrl, agent: 'test-cli', token: TOKEN });
  // The re-claim travels on the target's socket: wait until the roster shows it, then command.
  let entries = await c.roster();
  for (let i = 0; i < 200 && !entries.some((e) => e.session === s); i++) entries = await c.roster();
  const r = await c.send(command(sender, s, { type: 'control.pause' }), { timeoutMs: 5000 });
  assert.is(r.outcome, 'accepted');
  // The re-claim was a byte-identical redelivery: history still holds one session.started.
  const after = await history(second.url, s);
  assert.is(after.filter((t) => t.includes('"session.started"')).length, 1);
  assert.is(after[0], h[0]);
  await c.close();
  await target.close();
  await second.close();
});

test('a full outbox drops debug/info first and counts every drop', async () => {
  const errors: string[] = [];
  const link = connectEmitter({
    url: 'ws://127.0.0.1:9/socket',
    agent: 'test-agent',
    outboxCap: 3,
    backoffInitialMs: 10_000,
    onError: (e) => errors.push(e.message),
  });
  const em = emitterFor(freshSession());
  link.send(em.emit({ type: 'progress.status', severity: 'notice' }));
  link.send(em.emit({ type: 'progress.status', severity: 'info' }));
  link.send(em.emit({ type: 'progress.status', severity: 'warning' }));
  link.send(em.emit({ type: 'progress.status', severity: 'error' }));
  assert.equal(link.drops, { low: 1, high: 0 });
  assert.not.match(errors.join('\n'), /outbox full/);
  link.send(em.emit({ type: 'progress.status', severity: 'critical' }));
  assert.equal(link.drops, { low: 1, high: 1 });
  assert.match(errors.join('\n'), /outbox full/);
  await link.close();
});

test.run();
