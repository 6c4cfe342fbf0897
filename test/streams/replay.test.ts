import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { appendFileSync } from 'node:fs';
import { adapter, tempLog } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { instructCmd } from '../support/session-steps.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import { openEventLog, readEventLog } from '../../src/streams/log.js';
import type { AepEvent } from '../../src/protocol/index.js';

const S = 's-1';

test('D11: a restart rebuilds queues in order with their accept times, acks byte for byte, and a new epoch', async () => {
  const logPath = tempLog();
  const a = await adapter({ logPath });
  await a.post(hookBody('SessionStart', S, { agent_id: 'x' }));
  const c1 = instructCmd('c1', 'one', S);
  const c2 = instructCmd('c2', 'two', S);
  a.handle.command(c1);
  a.handle.command(c2);
  const before = a.handle.sessions();
  const firstAck = a.events.find((e) => e.type === 'control.accepted' && e.cause === 'c1')!;
  await a.handle.close();

  const b = await adapter({ logPath });
  try {
    assert.equal(b.handle.sessions(), before);
    const re = b.next((e) => e.type === 'control.accepted');
    b.handle.command(c1);
    assert.is(JSON.stringify(await re), JSON.stringify(firstAck));
    assert.is(b.handle.sessions()[0]!.queue.length, 2, 'the retry is not queued again');
    const reply = await b.post(hookBody('UserPromptSubmit', S));
    assert.equal(reply.json, {
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'one\n\ntwo' },
    });
    const fresh = b.events.filter((e) => e !== b.events[0]);
    assert.ok(fresh.length > 0);
    for (const e of fresh) assert.is(e.epoch, 1, `${e.type} continues in the next epoch`);
    assert.is(fresh[0]!.seq, 0);
  } finally {
    await b.handle.close();
  }
  // The log holds every event once; positions never repeat within a session.
  const positions = readEventLog(logPath).records.flatMap((r) => (r.k === 'ev' ? [`${r.e.epoch}:${r.e.seq}`] : []));
  assert.is(new Set(positions).size, positions.length);
});

test('D12: instructions in flight at a crash are dropped delivery-unknown on the next start, never re-delivered', async () => {
  const logPath = tempLog();
  // A process that journaled a reply and died before learning whether it was written.
  const { log } = openEventLog(logPath);
  const host = new ActorHost({ surface: fakeSurface(), instruct: true, host: 'test-host' });
  const hook = fakeSurface().classify(hookBody('UserPromptSubmit', S));
  log.append(
    host.step({
      kind: 'hook',
      session: S,
      hookId: 'h0',
      at: 1000,
      hook: fakeSurface().classify(hookBody('SessionStart', S, { agent_id: 'x' })),
    }).records,
  );
  log.append(host.step({ kind: 'command', session: S, at: 1100, command: instructCmd('c1', 'one', S) }).records);
  const inflight = host.step({ kind: 'hook', session: S, hookId: 'h1', at: 1200, hook });
  log.append(inflight.records);
  log.close();
  assert.ok(
    inflight.records.some((r) => r.k === 'flight' && r.ids[0] === 'c1'),
    'journaled before the reply',
  );

  const b = await adapter({ logPath });
  try {
    assert.equal(b.handle.sessions()[0]!.queue, []);
    assert.is(b.handle.sessions()[0]!.inFlight, 0);
    const reply = await b.post(hookBody('UserPromptSubmit', S));
    assert.equal(reply.json, {}, 'nothing reaches the model twice');
  } finally {
    await b.handle.close();
  }
  const events = readEventLog(logPath).records.flatMap((r) => (r.k === 'ev' ? [r.e] : [])) as AepEvent[];
  const dropped = events.filter((e) => e.type === 'x.claude-code.instruction.dropped');
  assert.equal(
    dropped.map((e) => [e.cause, e.data, e.epoch]),
    [['c1', { reason: 'delivery-unknown' }, 1]],
  );
});

test('a torn last record is reported LOG_TORN_RECORD, skipped, and cut so later appends stay whole', async () => {
  const logPath = tempLog();
  const a = await adapter({ logPath });
  await a.post(hookBody('SessionStart', S, { agent_id: 'x' }));
  a.handle.command(instructCmd('c1', 'one', S));
  await a.handle.close();
  appendFileSync(logPath, '{"k":"ev","e":{"aep":"0.1","id":"01J');

  const b = await adapter({ logPath });
  try {
    assert.equal(
      b.errors.map((e) => e.code),
      ['LOG_TORN_RECORD'],
    );
    assert.equal(
      b.handle.sessions()[0]!.queue.map((q) => q.id),
      ['c1'],
    );
    b.handle.command(instructCmd('c2', 'two', S));
  } finally {
    await b.handle.close();
  }
  const after = readEventLog(logPath);
  assert.equal(after.problems, []);
  assert.ok(after.records.some((r) => r.k === 'in' && r.i.type === 'command.instruct' && r.i.command.id === 'c2'));
});

test.run();
