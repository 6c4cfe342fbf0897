// The defects of issue "nothing lost between the log and the sender", one test each (D22–D24):
// disk full, relay outage, ended sessions after a restart, restart cost, claim traffic, hostile
// hook bodies. Real adapter, real relay, real sockets; the disk-full cases inject ENOSPC at the
// log's write call, which is where a full disk reports it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AepEvent } from '../../src/protocol/index.js';
import { command } from '../../src/protocol/build.js';
import { startRelay } from '../../src/relay/server.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { acceptsFor } from '../../src/streams/run.js';
import { headerGeneration, parseLog, readEventLog, segmentPath, type WriteFn } from '../../src/streams/log.js';
import { adapter, steerRounds, tempLog } from '../support/adapter.js';
import { until, wait } from '../support/until.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { instructCmd } from '../support/session-steps.js';

/** A disk that fills up on demand: writes fail with ENOSPC while `full` is set. */
function disk() {
  const d = { full: false, refused: 0, failOnce: undefined as RegExp | undefined };
  const write: WriteFn = (fd, buf, off, len, pos) => {
    const once = d.failOnce?.test(buf.toString('utf8', off, off + len));
    if (once) d.failOnce = undefined;
    if (d.full || once) {
      d.refused += 1;
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    }
    return writeSync(fd, buf, off, len, pos);
  };
  return Object.assign(d, { write });
}

const context = (json: unknown): string =>
  (json as { hookSpecificOutput?: { additionalContext?: string } } | undefined)?.hookSpecificOutput
    ?.additionalContext ?? '';
const loggedEvents = (path: string): AepEvent[] =>
  readEventLog(path).records.flatMap((r) => (r.k === 'ev' ? [r.e] : []));

for (const fsync of [false, true]) {
  test(`D22 disk full (fsync ${fsync}): no ack leaves for an unrecorded command, the session is rolled back, health degrades and recovers, the retry is decided durably`, async () => {
    const d = disk();
    const a = await adapter({ logWrite: d.write, fsync, probeMs: 20 });
    try {
      await a.post(hookBody('SessionStart', 's1', { agent_id: 'sub' }));
      // The moment was answered at once; its records may wait a moment to share an fsync, and
      // its events leave once they are durable. The disk fills after that.
      await until(() => a.events.some((e) => e.type === 'session.started'), 'the session start is logged');
      d.full = true;
      a.handle.command(instructCmd('c1', 'lost if acked', 's1'));
      await until(() => a.handle.health() === 'degraded', 'degraded');
      await wait(30);
      assert.not.ok(
        a.events.some((e) => e.type === 'control.accepted'),
        'no ack for a command the log refused',
      );
      assert.equal(
        a.handle.sessions().find((s) => s.session === 's1')?.queue,
        [],
        'the queue is as if the command never arrived',
      );
      const degraded = a.events.find((e) => e.type === 'agent.health');
      assert.equal((degraded!.data as { status?: string }).status, 'degraded');
      // A hook while degraded gets the neutral reply and changes nothing.
      const neutral = await a.post(hookBody('UserPromptSubmit', 's1'));
      assert.is(context(neutral.json), '');
      d.full = false;
      await until(() => a.handle.health() === 'ok', 'recovered');
      assert.ok(
        a.events.some((e) => e.type === 'agent.health' && (e.data as { status?: string }).status === 'ok'),
        'recovery reported',
      );
      assert.not.ok(
        loggedEvents(a.logPath).some((e) => e.type === 'agent.health'),
        'health is sent without logging',
      );
      // The sender retries the same command: decided now, once, and the log holds the ack.
      const ackP = a.next((e) => e.type === 'control.accepted' && e.cause === 'c1');
      a.handle.command(instructCmd('c1', 'lost if acked', 's1'));
      const ack = await ackP;
      assert.ok(
        readEventLog(a.logPath).records.some(
          (r) => r.k === 'ev' && r.ack !== undefined && JSON.stringify(r.e) === JSON.stringify(ack),
        ),
        'the ack on the stream is the ack the log holds',
      );
      const reply = await a.post(hookBody('UserPromptSubmit', 's1'));
      assert.match(context(reply.json), /lost if acked/);
      assert.ok(d.refused > 0);
    } finally {
      await a.handle.close();
    }
  });
}

test('D22 disk full across a restart: the command never acked is decided fresh, never a second different ack', async () => {
  const d = disk();
  const logPath = tempLog();
  const first = await adapter({ logWrite: d.write, logPath });
  await first.post(hookBody('SessionStart', 's1', { agent_id: 'sub' }));
  d.full = true;
  first.handle.command(instructCmd('c1', 'one', 's1'));
  await until(() => first.handle.health() === 'degraded', 'degraded');
  const acksBefore = first.events.filter((e) => e.type === 'control.accepted');
  await first.handle.close();
  const second = await adapter({ logPath });
  try {
    const ackP = second.next((e) => e.type === 'control.accepted');
    second.handle.command(instructCmd('c1', 'one', 's1'));
    const ack = await ackP;
    second.handle.command(instructCmd('c1', 'one', 's1'));
    await wait(30);
    const acks = second.events.filter((e) => e.type === 'control.accepted' && e.cause === 'c1');
    assert.equal(acksBefore, [], 'the refused command was never acknowledged');
    assert.ok(
      acks.every((x) => JSON.stringify(x) === JSON.stringify(ack)),
      'every ack of c1 is the same bytes',
    );
    assert.is(second.handle.sessions().find((s) => s.session === 's1')?.queue.length, 1);
  } finally {
    await second.handle.close();
  }
});

test('D22 a delivery whose record was refused is recorded after recovery (no instruction stuck in flight)', async () => {
  const d = disk();
  const a = await adapter({ logWrite: d.write, probeMs: 20 });
  try {
    await a.post(hookBody('SessionStart', 's1', { agent_id: 'sub' }));
    const ackP = a.next((e) => e.type === 'control.accepted');
    a.handle.command(instructCmd('c1', 'deliver me', 's1'));
    await ackP;
    // The reply carrying c1 is written; the record of that write (and its delivered event) is refused once.
    d.failOnce = /"reply\.written"/;
    const reply = await a.post(hookBody('UserPromptSubmit', 's1'));
    assert.match(context(reply.json), /deliver me/);
    await until(
      () => a.events.some((e) => e.type.endsWith('instruction.delivered') && e.cause === 'c1'),
      'delivered after recovery',
    );
    assert.is(d.refused, 1);
    assert.ok(
      a.events.some((e) => e.type === 'agent.health'),
      'the refusal was reported',
    );
    assert.is(a.events.filter((e) => e.type.endsWith('instruction.delivered')).length, 1);
    assert.is(a.handle.sessions()[0]!.inFlight, 0);
  } finally {
    await a.handle.close();
  }
});

test('D23 relay down for 1,100 hooks: every logged event, delivered ones included, reaches the relay after it returns', async () => {
  const storePath = `${dirname(tempLog())}/relay.db`;
  let relay = await startRelay({ port: 0, storePath, token: 'tok' });
  const port = relay.port;
  const surface = fakeSurface();
  const link = connectRelay({
    url: relay.socketUrl,
    token: 'tok',
    agent: surface.token,
    accepts: acceptsFor(surface, true),
    backoffInitialMs: 20,
    backoffMaxMs: 50,
  });
  const a = await adapter({ surface, relay: link });
  try {
    const sessions = Array.from({ length: 10 }, (_, i) => `out-${i}`);
    for (const s of sessions) await a.post(hookBody('SessionStart', s));
    await until(() => link.connected, 'link up');
    for (const [i, s] of sessions.entries()) a.handle.command(instructCmd(`c-${i}`, `instruction ${i}`, s));
    await until(() => a.events.filter((e) => e.type === 'control.accepted').length === 10, 'acks');
    await relay.close();
    // Each PreToolUse logs a tool.requested: 1,100 events while the relay is away.
    for (let i = 0; i < 1100; i += 1) await a.post(hookBody('PreToolUse', sessions[i % 10]!));
    assert.is(
      a.events.filter((e) => e.type.endsWith('instruction.delivered')).length,
      10,
      'all ten delivered while the relay was down',
    );
    relay = await startRelay({ port, storePath, token: 'tok' });
    const positioned = loggedEvents(a.logPath).filter((e) => e.seq !== undefined);
    await until(() => relay.stats().events >= positioned.length, 'relay caught up', 15_000);
    const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'auditor' });
    const held = new Set<string>();
    await c.subscribe(
      { filter: {}, from: sessions.map((session) => ({ session })) },
      { onEvent: (e) => held.add(e.id) },
    );
    await until(() => positioned.every((e) => held.has(e.id)), 'every logged event replayed by the relay', 5000).catch(
      () =>
        assert.equal(
          positioned.filter((e) => !held.has(e.id)).map((e) => e.type),
          [],
          'events the relay lacks',
        ),
    );
    await c.close();
    // The relay's position is recorded next to the log.
    const confirmed = () =>
      (JSON.parse(readFileSync(`${a.logPath}.relay`, 'utf8')) as { confirmed: { offset: number } }).confirmed.offset;
    await until(
      () => confirmed() === readFileSync(a.logPath).length,
      'the recorded relay position covers the whole log',
      5000,
    );
  } finally {
    await a.handle.close();
    await relay.close();
  }
});

test('D23 a sender waiting on the relay sees the delivery that happened while the relay was down', async () => {
  const storePath = `${dirname(tempLog())}/relay.db`;
  let relay = await startRelay({ port: 0, storePath, token: 'tok' });
  const port = relay.port;
  const surface = fakeSurface();
  const link = connectRelay({
    url: relay.socketUrl,
    token: 'tok',
    agent: surface.token,
    accepts: acceptsFor(surface, true),
    backoffInitialMs: 20,
    backoffMaxMs: 50,
  });
  const a = await adapter({ surface, relay: link });
  try {
    await a.post(hookBody('SessionStart', 'w1'));
    await until(() => link.connected, 'link up');
    const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'sender' });
    for (let i = 0; i < 100; i += 1) if ((await c.roster()).some((e) => e.session === 'w1')) break;
    const cmd = command({ agent: 'sender', host: 'h' }, 'w1', {
      type: surface.steeringType,
      capture: 'redacted',
      data: { text: 'while down' },
    });
    assert.is((await c.send(cmd, { timeoutMs: 5000 })).outcome, 'accepted');
    await c.close();
    await relay.close();
    assert.match(context((await a.post(hookBody('UserPromptSubmit', 'w1'))).json), /while down/);
    // More than a bounded memory outbox would hold, logged after the delivery.
    for (let i = 0; i < 1100; i += 1) await a.post(hookBody('PreToolUse', 'w1'));
    relay = await startRelay({ port, storePath, token: 'tok' });
    const c2 = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'sender' });
    const seen: AepEvent[] = [];
    await c2.subscribe(
      { filter: { session: 'w1', cause: cmd.id }, from: [{ session: 'w1' }] },
      { onEvent: (e) => seen.push(e) },
    );
    await until(() => seen.some((e) => e.type.endsWith('instruction.delivered')), 'the sender sees delivered', 10_000);
    await c2.close();
  } finally {
    await a.handle.close();
    await relay.close();
  }
});

test('D23 a restarted adapter answers a retry on an ended session with its recorded ack', async () => {
  const relay = await startRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const surface = fakeSurface();
  const link = () =>
    connectRelay({ url: relay.socketUrl, token: 'tok', agent: surface.token, accepts: acceptsFor(surface, true) });
  const first = await adapter({ surface, relay: link() });
  const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'sender' });
  try {
    await first.post(hookBody('SessionStart', 'e1'));
    for (let i = 0; i < 200; i += 1) if ((await c.roster()).some((e) => e.session === 'e1')) break;
    const cmd = command({ agent: 'sender', host: 'h' }, 'e1', {
      type: surface.steeringType,
      capture: 'redacted',
      data: { text: 'x' },
    });
    const r1 = await c.send(cmd, { timeoutMs: 5000 });
    assert.is(r1.outcome, 'accepted');
    await first.post(hookBody('SessionEnd', 'e1'));
    await first.handle.close();
    const second = await adapter({ surface, relay: link(), logPath: first.logPath });
    let r2 = await c.send(cmd, { timeoutMs: 5000 });
    for (let i = 0; i < 100 && r2.outcome === 'refused'; i += 1) {
      await wait(20);
      r2 = await c.send(cmd, { timeoutMs: 5000 });
    }
    assert.is(r2.outcome, 'accepted');
    assert.is(
      JSON.stringify((r2 as { ack: AepEvent }).ack),
      JSON.stringify((r1 as { ack: AepEvent }).ack),
      'byte-identical recorded ack',
    );
    await second.handle.close();
  } finally {
    await c.close();
    await relay.close();
  }
});

test('D24 claims: each new session costs one frame, never a resend of the others', async () => {
  const relay = await startRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const surface = fakeSurface();
  const link = connectRelay({
    url: relay.socketUrl,
    token: 'tok',
    agent: surface.token,
    accepts: acceptsFor(surface, true),
  });
  const a = await adapter({ surface, relay: link });
  try {
    await until(() => link.connected, 'link up');
    const n = 60;
    for (let i = 0; i < n; i += 1) await a.post(hookBody('SessionStart', `cl-${i}`));
    await until(() => relay.stats().ingested >= n, 'ingested');
    await wait(50);
    assert.is(relay.stats().duplicates, 0, 'no redelivered claim frames');
    assert.is(relay.stats().ingested, n, 'one frame per new session (its session.started)');
    const c = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'auditor' });
    assert.is((await c.roster()).length, n);
    await c.close();
  } finally {
    await a.handle.close();
    await relay.close();
  }
});

test('D24 restart reads snapshot + one segment; old segments go once covered; the restored sessions answer like before', async () => {
  const logPath = tempLog();
  const first = await adapter({ logPath, segmentBytes: 4096, keepSegments: 1 });
  await steerRounds(first, 'sn', 8, 30);
  await wait(50);
  const ack = first.events.find((e) => e.type === 'control.accepted' && e.cause === 'c-29-3')!;
  const views = first.handle.sessions();
  await first.handle.close();
  const files = readdirSync(dirname(logPath));
  const segs = files.filter((f) => f.includes('.seg-'));
  assert.ok(files.includes('events.jsonl.snapshot'), 'a snapshot was written');
  assert.ok(segs.length <= 2, `old segments were removed (${segs.join(', ')})`);
  const active = parseLog(readFileSync(logPath));
  assert.ok(active.generation >= 2, 'the active segment is a later generation');
  const second = await adapter({ logPath });
  try {
    assert.equal(
      second.handle.sessions().map((v) => [v.session, v.queue.map((q) => q.id)]),
      views.map((v) => [v.session, v.queue.map((q) => q.id)]),
    );
    second.handle.command(instructCmd('c-29-3', 'text 29 3', 'sn-3'));
    await until(() => second.events.some((e) => e.type === 'control.accepted'), 're-ack');
    assert.is(
      JSON.stringify(second.events.find((e) => e.type === 'control.accepted')),
      JSON.stringify(ack),
      'recorded ack survives compaction byte for byte',
    );
    const epochs = new Set(loggedEvents(logPath).map((e) => e.epoch));
    assert.ok(epochs.size <= 1, 'one epoch in the new segment');
  } finally {
    await second.handle.close();
  }
});

test('D24 a rotation whose new file the disk refuses loses nothing: the log stays whole, a restart keeps every ack', async () => {
  const logPath = tempLog();
  const d = disk();
  // Only the next generation's header is refused: the appends around it go through.
  d.failOnce = /^\{"k":"seg","g":1[,}]/;
  const first = await adapter({ logPath, segmentBytes: 4096, keepSegments: Infinity, logWrite: d.write });
  for (let i = 0; i < 4; i += 1) await first.post(hookBody('SessionStart', `rf-${i}`, { agent_id: 'sub' }));
  // Traffic until the rotation has failed, and one command after it: no later rotation mends it.
  let r = 0;
  for (; d.refused === 0 && r < 200; r += 1) {
    for (let i = 0; i < 4; i += 1) first.handle.command(instructCmd(`c-${r}-${i}`, `text ${r} ${i}`, `rf-${i}`));
    await wait(5);
  }
  first.handle.command(instructCmd(`c-${r}-0`, `text ${r} 0`, 'rf-0'));
  await until(() => first.events.some((e) => e.cause === `c-${r}-0`), 'the command after the failed rotation');
  assert.is(d.refused, 1, 'the first rotation met a full disk');
  assert.ok(
    first.errors.some((e) => e.code === 'LOG_WRITE_FAILED' && /snapshot/.test(e.message)),
    'the failed rotation is reported',
  );
  const acks = first.events.filter((e) => e.type === 'control.accepted');
  await first.handle.close();
  const second = await adapter({ logPath, segmentBytes: 4096, keepSegments: Infinity });
  try {
    const files = readdirSync(dirname(logPath)).filter((f) => f.includes('.seg-'));
    const history = [...files.sort().map((f) => `${dirname(logPath)}/${f}`), logPath].flatMap(loggedEvents);
    const held = new Set(history.map((e) => JSON.stringify(e)));
    for (const a of acks) assert.ok(held.has(JSON.stringify(a)), `the ack of ${a.cause} is in the log`);
    // The restored sessions re-ack the first command and the last one byte for byte.
    for (const a of [acks[0]!, acks.at(-1)!]) {
      const [, r, i] = /^c-(\d+)-(\d+)$/.exec(a.cause!)!;
      second.handle.command(instructCmd(a.cause!, `text ${r} ${i}`, `rf-${i}`));
      await until(() => second.events.some((e) => e.cause === a.cause), `re-ack of ${a.cause}`);
      assert.is(JSON.stringify(second.events.find((e) => e.cause === a.cause)), JSON.stringify(a));
    }
  } finally {
    await second.handle.close();
  }
});

test('D24 a headerless active file an older version left after a snapshot is replayed as its generation; segment 0 is kept', async () => {
  const logPath = tempLog();
  const first = await adapter({ logPath, segmentBytes: 4096, keepSegments: Infinity });
  for (let i = 0; i < 2; i += 1) await first.post(hookBody('SessionStart', `hl-${i}`, { agent_id: 'sub' }));
  let r = 0;
  for (; headerGeneration(logPath) === 0 && r < 200; r += 1) {
    for (let i = 0; i < 2; i += 1) first.handle.command(instructCmd(`h-${r}-${i}`, `text ${r} ${i}`, `hl-${i}`));
    await wait(5);
  }
  assert.ok(existsSync(segmentPath(logPath, 0)), 'no rotation happened');
  // Commands after the snapshot: their acks are only in the active file.
  first.handle.command(instructCmd('after-0', 'after the snapshot', 'hl-0'));
  await until(() => first.events.some((e) => e.cause === 'after-0'), 'the ack after the rotation');
  const ack = first.events.find((e) => e.cause === 'after-0')!;
  await first.handle.close();
  // What an older version left when the disk refused the header: the same file without it.
  const active = readFileSync(logPath, 'utf8');
  assert.match(active, /^\{"k":"seg","g":1,"n":\d+,"h":"[0-9a-f]{64}"\}\n/);
  writeFileSync(logPath, active.slice(active.indexOf('\n') + 1));
  const seg0 = readFileSync(segmentPath(logPath, 0));

  const second = await adapter({ logPath, segmentBytes: 4096, keepSegments: Infinity });
  try {
    assert.ok(readFileSync(segmentPath(logPath, 0)).equals(seg0), 'segment 0 was overwritten');
    // The post-snapshot decision is replayed: the retry gets the recorded ack byte for byte.
    second.handle.command(instructCmd('after-0', 'after the snapshot', 'hl-0'));
    await until(() => second.events.some((e) => e.cause === 'after-0'), 're-ack of after-0');
    assert.is(JSON.stringify(second.events.find((e) => e.cause === 'after-0')), JSON.stringify(ack));
    assert.ok(
      loggedEvents(logPath).some((e) => e.id === ack.id),
      'the headerless file is still the active log',
    );
  } finally {
    await second.handle.close();
  }
});

test('D24 a session_id over 256 characters gets the neutral reply and reaches no session', async () => {
  const a = await adapter();
  try {
    const r = await a.post(hookBody('SessionStart', 'x'.repeat(257)));
    assert.is(r.status, 200);
    assert.is(context(r.json), '');
    assert.equal(a.handle.sessions(), []);
    assert.ok(a.errors.some((e) => e.code === 'HOOK_BODY_INVALID' && /256/.test(e.message)));
    await a.post(hookBody('SessionStart', 'y'.repeat(256)));
    assert.is(a.handle.sessions().length, 1, '256 is still fine');
  } finally {
    await a.handle.close();
  }
});

test('D24 eight deeply nested 2 MB bodies are refused unparsed while a normal hook still gets its instruction', async () => {
  const a = await adapter();
  try {
    await a.post(hookBody('SessionStart', 'n1', { agent_id: 'sub' }));
    const ackP = a.next((e) => e.type === 'control.accepted');
    a.handle.command(instructCmd('c1', 'still steered', 'n1'));
    await ackP;
    const depth = 1024 * 1024;
    const deep = `{"hook_event_name":"PreToolUse","session_id":"n1","tool_input":${'['.repeat(depth)}${']'.repeat(depth)}}`;
    const hostile = Array.from({ length: 8 }, () => a.post(deep));
    const normal = a.post(hookBody('UserPromptSubmit', 'n1'));
    const [r, ...rest] = await Promise.all([normal, ...hostile]);
    assert.match(context(r!.json), /still steered/, 'the normal hook was answered within its budget, with steering');
    for (const h of rest) assert.is(context(h.json), '');
    assert.ok(a.errors.some((e) => /nests deeper/.test(e.message)));
  } finally {
    await a.handle.close();
  }
});

test.run();
