import { test } from 'uvu';
import { GENESIS, lineHash } from '../../src/protocol/chain.js';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, fstatSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  openEventLog,
  parseLog,
  readEventLog,
  segmentPath,
  type LogRecord,
  type SyncFn,
} from '../../src/streams/log.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import { replayInto } from '../../src/streams/replay.js';
import { eventText, type SteeringError } from '../../src/protocol/index.js';
import { adapter, tempLog } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { instructCmd } from '../support/session-steps.js';
import { until } from '../support/until.js';

/** An fsync that waits to be released; `durable` is how many bytes the released syncs cover. */
function gatedSync(auto?: (release: () => void) => void) {
  const waiting: { size: number; release: () => void }[] = [];
  let durable = 0;
  let calls = 0;
  let notify: (() => void) | undefined;
  const sync: SyncFn = (fd, done) => {
    calls += 1;
    const size = fstatSync(fd).size;
    const release = () => {
      durable = Math.max(durable, size);
      done(null);
    };
    if (auto) auto(release);
    else waiting.push({ size, release });
    notify?.();
  };
  return {
    sync,
    get calls() {
      return calls;
    },
    durable: () => durable,
    /** Resolves once a sync is waiting. */
    next(): Promise<{ size: number; release: () => void }> {
      const take = () => waiting.shift()!;
      if (waiting.length > 0) return Promise.resolve(take());
      return new Promise((resolve) => {
        notify = () => {
          notify = undefined;
          resolve(take());
        };
      });
    },
  };
}

const flight = (hook: string): LogRecord => ({ k: 'flight', s: 's', hook, ids: [] });
const hooksIn = (path: string) => readEventLog(path).records.map((r) => (r.k === 'flight' ? r.hook : r.k));
const settled = <T>(p: Promise<T>) => {
  const state = { done: false, failed: undefined as unknown };
  p.then(
    () => (state.done = true),
    (e: unknown) => (state.failed = e),
  );
  return state;
};
const turn = () => new Promise((resolve) => setImmediate(resolve));

test('records round-trip as one JSON line each', () => {
  const path = tempLog();
  const { log } = openEventLog(path);
  log.append([
    { k: 'flight', s: 's', hook: 'h', ids: ['a', 'b'] },
    { k: 'flight', s: 's', hook: 'h2', ids: [] },
  ]);
  log.append([]);
  log.close();
  assert.is(readFileSync(path, 'utf8').split('\n').length, 3);
  assert.equal(
    readEventLog(path).records.map((r) => r.k === 'flight' && r.hook),
    ['h', 'h2'],
  );
});

test('a bad middle line is reported and skipped; the lines after it still count', () => {
  const r = parseLog(
    '{"k":"flight","s":"s","hook":"a","ids":[]}\nnot json\n{"k":"flight","s":"s","hook":"b","ids":[]}\n',
  );
  assert.is(r.records.length, 2);
  assert.equal(
    r.problems.map((p) => p.code),
    ['LOG_TORN_RECORD'],
  );
});

test('opening a log with a torn tail cuts it before appending', () => {
  const path = tempLog();
  writeFileSync(path, '{"k":"flight","s":"s","hook":"a","ids":[]}\n{"k":"fli');
  const { log, existing } = openEventLog(path);
  assert.equal(
    existing.problems.map((p) => p.code),
    ['LOG_TORN_RECORD'],
  );
  log.append([{ k: 'flight', s: 's', hook: 'b', ids: [] }]);
  log.close();
  const again = readEventLog(path);
  assert.equal(again.problems, []);
  assert.equal(
    again.records.map((r) => r.k === 'flight' && r.hook),
    ['a', 'b'],
  );
});

test('appending after close fails with LOG_WRITE_FAILED', () => {
  const { log } = openEventLog(tempLog());
  log.close();
  try {
    log.append([{ k: 'flight', s: 's', hook: 'x', ids: [] }]);
    assert.unreachable('append after close must throw');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'LOG_WRITE_FAILED');
  }
});

test('group commit: batches queued during an fsync share the next one, land in call order, and resolve only once synced', async () => {
  const path = tempLog();
  const gate = gatedSync();
  const { log } = openEventLog(path, { sync: gate.sync });
  const a = settled(log.commit([flight('a')]));
  const first = await gate.next();
  const rest = ['b', 'c', 'd'].map((h) => settled(log.commit([flight(h)])));
  await turn();
  assert.is(a.done, false, 'not before its fsync finished');
  assert.is(gate.calls, 1, 'one fsync at a time');
  first.release();
  const second = await gate.next();
  assert.is(a.done, true);
  assert.equal(
    rest.map((r) => r.done),
    [false, false, false],
  );
  assert.is(second.size, readFileSync(path).length, 'the second fsync covers all three');
  second.release();
  await turn();
  assert.equal(
    rest.map((r) => r.done),
    [true, true, true],
  );
  assert.is(gate.calls, 2);
  await log.close();
  assert.equal(hooksIn(path), ['a', 'b', 'c', 'd']);
});

test('lazy batches wait to share one fsync; one that goes at once takes them with it, in call order', async () => {
  const path = tempLog();
  const gate = gatedSync((release) => setImmediate(release));
  const { log } = openEventLog(path, { sync: gate.sync, lazyMs: 300 });
  const durable: string[] = [];
  const lazy = (h: string) => settled(log.commit([flight(h)], { lazy: true, durable: () => durable.push(h) }));
  // Answered moments, one after another (a burst of hooks): none is written before its wait ends.
  const a = lazy('a');
  await new Promise((r) => setTimeout(r, 20));
  const b = lazy('b');
  await new Promise((r) => setTimeout(r, 20));
  assert.is(gate.calls, 0, 'no fsync within the wait');
  assert.equal(hooksIn(path), [], 'nothing written yet');
  assert.equal([a.done, b.done], [false, false], 'not durable, so not resolved');
  await until(() => a.done && b.done, 'the lazy batches after their wait');
  assert.is(gate.calls, 1, 'one fsync for both');
  assert.equal(durable, ['a', 'b']);
  // A batch that goes at once (an ack, a reply that carries instructions) does not wait, and
  // the lazy one queued before it is written first, in the same fsync.
  const c = lazy('c');
  const d = settled(log.commit([flight('d')]));
  await until(() => d.done, 'the batch that goes at once', 200);
  assert.is(c.done, true, 'settled with it, ahead of it');
  assert.is(gate.calls, 2);
  // Close does not wait out a lazy batch's wait either.
  const e = lazy('e');
  const t0 = performance.now();
  await log.close();
  assert.ok(performance.now() - t0 < 250, 'closed without waiting out the 300 ms');
  await turn();
  assert.is(e.done, true);
  assert.equal(hooksIn(path), ['a', 'b', 'c', 'd', 'e']);
});

test('a log without fsync never holds a lazy batch', async () => {
  const path = tempLog();
  const { log } = openEventLog(path, { fsync: false, lazyMs: 10_000 });
  const t0 = performance.now();
  await log.commit([flight('a')], { lazy: true });
  assert.ok(performance.now() - t0 < 1000, 'nothing to share, nothing to wait for');
  await log.close();
  assert.equal(hooksIn(path), ['a']);
});

test('group commit: an empty batch resolves after the batches before it; a synchronous append keeps call order', async () => {
  const path = tempLog();
  const gate = gatedSync();
  const { log } = openEventLog(path, { sync: gate.sync });
  const a = settled(log.commit([flight('a')]));
  const first = await gate.next();
  const empty = settled(log.commit([]));
  const b = settled(log.commit([flight('b')]));
  log.append([flight('c')]);
  assert.equal(hooksIn(path), ['a', 'b', 'c'], 'b was queued first, so it is written first');
  await turn();
  assert.equal([a.done, empty.done, b.done], [false, false, false], 'callers hear back in call order, behind a');
  first.release();
  await turn();
  assert.equal([a.done, empty.done, b.done], [true, true, true]);
  assert.is(gate.calls, 1, 'b needed no second fsync: the synchronous append covered it');
  await log.close();
});

test('group commit: a failed fsync rejects every batch it covered with LOG_WRITE_FAILED; later batches still commit', async () => {
  const path = tempLog();
  let fail = true;
  const { log } = openEventLog(path, {
    sync: (_fd, done) =>
      setImmediate(() => {
        const err = fail ? Object.assign(new Error('EIO'), { code: 'EIO' }) : null;
        fail = false;
        done(err);
      }),
  });
  const results = await Promise.allSettled([log.commit([flight('a')]), log.commit([flight('b')])]);
  assert.equal(
    results.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.is(((results[0] as PromiseRejectedResult).reason as SteeringError).code, 'LOG_WRITE_FAILED');
  await log.commit([flight('c')]);
  await log.close();
});

test('close waits for queued batches; a commit after close is refused', async () => {
  const path = tempLog();
  const gate = gatedSync();
  const { log } = openEventLog(path, { sync: gate.sync });
  const a = log.commit([flight('a')]);
  const first = await gate.next();
  const b = log.commit([flight('b')]);
  const closed = settled(log.close());
  try {
    await log.commit([flight('late')]);
    assert.unreachable('commit after close must reject');
  } catch (e) {
    assert.is((e as SteeringError).code, 'LOG_WRITE_FAILED');
  }
  first.release();
  (await gate.next()).release();
  await Promise.all([a, b]);
  await turn();
  assert.is(closed.done, true);
  assert.equal(hooksIn(path), ['a', 'b']);
});

test('D4, D12: with a slow fsync no ack leaves before its record is synced', async () => {
  const gate = gatedSync();
  const a = await adapter({ fsync: true, logSync: gate.sync });
  try {
    const started = a.post(hookBody('SessionStart', 's-1', { agent_id: 'sub' }));
    (await gate.next()).release();
    await started;
    a.handle.command(instructCmd('c1', 'one', 's-1'));
    const held = await gate.next();
    await turn();
    assert.not.ok(
      a.events.some((e) => e.type === 'control.accepted'),
      'the ack waits for its fsync',
    );
    const ack = a.next((e) => e.type === 'control.accepted');
    held.release();
    assert.is((await ack).cause, 'c1');
    assert.ok(
      readFileSync(a.logPath, 'utf8').slice(0, gate.durable()).includes('"ack":'),
      'its record was in the synced bytes',
    );
  } finally {
    await a.handle.close();
  }
});

test('D4, D9, D12: under concurrent sessions every event and every reply follows the fsync that covers its records', async () => {
  // A slow fsync: each one finishes on a later turn of the event loop.
  const gate = gatedSync((release) => setTimeout(release, 2));
  const a = await adapter({ fsync: true, logSync: gate.sync });
  const syncedText = () => readFileSync(a.logPath, 'utf8').slice(0, gate.durable());
  const early: string[] = [];
  a.handle.events$.subscribe((e) => {
    if (!syncedText().includes(e.id)) early.push(`${e.type} ${e.id}`);
  });
  try {
    const sessions = Array.from({ length: 8 }, (_, i) => `s-${i}`);
    const delivered = await Promise.all(
      sessions.map(async (s) => {
        await a.post(hookBody('SessionStart', s, { agent_id: 'sub' }));
        const got: string[] = [];
        for (let round = 0; round < 3; round += 1) {
          const ids = [0, 1].map((i) => `${s}-${round}-${i}`);
          for (const id of ids) a.handle.command(instructCmd(id, `text of ${id}`, s));
          const reply = await a.post(hookBody('UserPromptSubmit', s));
          const text =
            (reply.json as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput
              ?.additionalContext ?? '';
          // The reply carries instructions only once their flight record is synced (D12).
          const journaled = parseLog(syncedText()).records.flatMap((r) => (r.k === 'flight' && r.s === s ? r.ids : []));
          for (const id of ids)
            if (text.includes(`text of ${id}`)) {
              got.push(id);
              assert.ok(journaled.includes(id), `${id} journaled before its reply`);
            }
        }
        return got;
      }),
    );
    assert.is(delivered.flat().length, 8 * 3 * 2, 'every instruction rode a reply');
    assert.equal(early, []);
    assert.ok(gate.calls < a.events.length, 'steps shared fsyncs');
  } finally {
    await a.handle.close();
  }
});

test('a moment with nothing to deliver answers before its fsync; its events wait for it; acks and records keep step order', async () => {
  const gate = gatedSync();
  const a = await adapter({ fsync: true, logSync: gate.sync });
  try {
    const started = a.post(hookBody('SessionStart', 's-1', { agent_id: 'sub' }));
    (await gate.next()).release();
    await started;
    // An instruct whose ack waits on a held fsync (D4) ...
    a.handle.command(instructCmd('c1', 'one', 's-1'));
    const ackSync = await gate.next();
    // ... while a moment of another session, which hands over nothing, is answered at once.
    const reply = await a.post(hookBody('PreToolUse', 's-2', { tool_name: 'Bash' }));
    assert.equal(reply.json, {}, 'the neutral reply went out');
    assert.not.ok(
      readFileSync(a.logPath, 'utf8').slice(0, gate.durable()).includes('"s":"s-2"'),
      'the reply did not wait for its own records to be synced',
    );
    await turn();
    assert.not.ok(
      a.events.some((e) => e.type === 'control.accepted'),
      'the ack still waits for its fsync',
    );
    assert.not.ok(
      a.events.some((e) => e.session === 's-2'),
      "the moment's events wait for the fsync too",
    );
    ackSync.release();
    (await gate.next()).release();
    await a.next((e) => e.type === 'tool.requested' && e.session === 's-2');
    const types = a.events.map((e) => `${e.session}:${e.type}`);
    assert.ok(
      types.indexOf('s-1:control.accepted') !== -1 &&
        types.indexOf('s-1:control.accepted') < types.indexOf('s-2:tool.requested'),
      `events in step order: ${types.join(', ')}`,
    );
    // Records are in the log in the order the steps ran: the command's input, then the hook's.
    const inputs = parseLog(readFileSync(a.logPath, 'utf8')).records.flatMap((r) =>
      r.k === 'in' ? [`${r.s}:${r.i.type}`] : [],
    );
    assert.ok(inputs.indexOf('s-1:command.instruct') < inputs.indexOf('s-2:hook.moment'), inputs.join(', '));
  } finally {
    await a.handle.close();
  }
});

test('a burst of answered moments shares fsyncs; an ack among them is synced at once, and nothing leaves unsynced', async () => {
  let syncs = 0;
  let syncedTo = 0;
  const a = await adapter({
    fsync: true,
    logLazyMs: 400,
    logSync: (fd, done) => {
      syncs += 1;
      const size = fstatSync(fd).size;
      setImmediate(() => {
        syncedTo = size;
        done(null);
      });
    },
  });
  // Every event that leaves is in the part of the log an fsync covered (D22).
  const unsynced: string[] = [];
  a.handle.events$.subscribe((e) => {
    if (e.type === 'agent.health') return;
    if (!readFileSync(a.logPath, 'utf8').slice(0, syncedTo).includes(`"id":"${e.id}"`)) unsynced.push(e.type);
  });
  try {
    await a.post(hookBody('SessionStart', 's-1', { agent_id: 'sub' }));
    await until(() => a.events.some((e) => e.type === 'session.started'), 'the start after its wait');
    const before = syncs;
    // An agent's tool calls one after another, each answered at once with nothing to deliver.
    for (let i = 0; i < 20; i += 1) {
      const r = await a.post(hookBody('PreToolUse', 's-1', { tool_name: 'Bash', tool_input: { command: `ls ${i}` } }));
      assert.equal(r.json, {});
    }
    assert.ok(syncs - before <= 1, `20 moments within the wait share at most one fsync (${syncs - before})`);
    // An instruct in the middle of the wait: its ack does not wait for the moments' window.
    const t0 = performance.now();
    const ack = a.next((e) => e.type === 'control.accepted');
    a.handle.command(instructCmd('c1', 'one', 's-1'));
    await ack;
    assert.ok(performance.now() - t0 < 300, 'the ack went out without waiting out the 400 ms');
    assert.ok(syncs - before <= 2, 'and its fsync carried the moments queued before it');
    const requested = a.events.filter((e) => e.type === 'tool.requested').length;
    assert.is(requested, 20, "every moment's event left with the ack's fsync, ahead of it");
    const types = a.events.map((e) => e.type);
    assert.ok(types.lastIndexOf('tool.requested') < types.indexOf('control.accepted'), 'in step order');
    assert.equal(unsynced, [], 'no event left before an fsync covered it');
  } finally {
    await a.handle.close();
  }
});

test('D12 under the fast path: a moment that delivers waits for its in-flight journal before it replies', async () => {
  const gate = gatedSync();
  const a = await adapter({ fsync: true, logSync: gate.sync });
  try {
    const started = a.post(hookBody('SessionStart', 's-1', { agent_id: 'sub' }));
    (await gate.next()).release();
    await started;
    a.handle.command(instructCmd('c1', 'run the tests', 's-1'));
    (await gate.next()).release();
    await a.next((e) => e.type === 'control.accepted');
    let replied = false;
    const reply = a.post(hookBody('UserPromptSubmit', 's-1')).then((r) => {
      replied = true;
      return r;
    });
    const flight = await gate.next();
    for (let i = 0; i < 5; i += 1) await turn();
    assert.not.ok(replied, 'no steering reply before its journal is durable');
    flight.release();
    const r = await reply;
    const text =
      (r.json as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext ?? '';
    assert.ok(text.includes('run the tests'), JSON.stringify(r.json));
    const journaled = parseLog(readFileSync(a.logPath, 'utf8').slice(0, gate.durable())).records.some(
      (x) => x.k === 'flight' && x.ids.includes('c1'),
    );
    assert.ok(journaled, 'the flight record was in the synced bytes when the reply went out');
    (await gate.next()).release();
  } finally {
    await a.handle.close();
  }
});

test('crash consistency: after SIGKILL mid-stream every printed ack is in the log and replay rebuilds its queue', async () => {
  const path = tempLog();
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(new URL('../support/log-writer.ts', import.meta.url)), path],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const acked: { session: string; cause: string; ack: string }[] = [];
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  for await (const line of createInterface({ input: child.stdout! })) {
    acked.push(JSON.parse(line) as { session: string; cause: string; ack: string });
    if (acked.length === 150) child.kill('SIGKILL');
  }
  await exited;
  assert.ok(acked.length >= 150);
  // What a crash inside a write can leave: a line with no end.
  appendFileSync(path, '{"k":"ev","e":{"aep":"0.1","id":"01TORN');
  const { log, existing } = openEventLog(path);
  await log.close();
  assert.equal(
    existing.problems.map((p) => p.code),
    ['LOG_TORN_RECORD'],
  );
  assert.equal(readEventLog(path).problems, [], 'the torn tail was cut on open');
  const host = new ActorHost({ surface: fakeSurface(), instruct: true, host: 'crash-host' });
  replayInto(host, existing.records);
  for (const x of acked) {
    const queue =
      host
        .views()
        .find((v) => v.session === x.session)
        ?.queue.map((q) => q.id) ?? [];
    assert.ok(queue.includes(x.cause), `${x.cause} queued after replay`);
  }
  assert.ok(
    acked.every((x) =>
      existing.records.some((r) => r.k === 'ev' && r.ack !== undefined && JSON.stringify(r.e) === x.ack),
    ),
    'acks logged byte for byte',
  );
  host.stop();
});

test('D22: a refused write cuts its bytes, refuses the batches queued behind it, and the owner hears first', async () => {
  const path = tempLog();
  const heard: string[] = [];
  let fail = true;
  const { log } = openEventLog(path, {
    sync: (_fd, done) =>
      setImmediate(() => {
        const err = fail ? Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }) : null;
        fail = false;
        done(err);
      }),
    onRefused: () => heard.push('owner'),
  });
  const a = log.commit([flight('a')]).catch(() => heard.push('a'));
  await turn();
  // Queued while a's fsync runs: stepped on top of a, so refused with it.
  const b = log.commit([flight('b')]).catch(() => heard.push('b'));
  await Promise.all([a, b]);
  assert.equal(heard, ['owner', 'a', 'b']);
  assert.is(readFileSync(path).length, 0, 'the refused bytes were cut off');
  await log.commit([flight('c')]);
  await log.close();
  assert.equal(hooksIn(path), ['c']);
});

test('D24: parsing counts bytes, not characters, in one pass; a torn multibyte tail is cut exactly', () => {
  const path = tempLog();
  const whole = '{"k":"flight","s":"sé€😀","hook":"ü","ids":[]}\n';
  writeFileSync(path, `${whole.repeat(3)}{"k":"flight","s":"€`);
  const { log, existing } = openEventLog(path);
  assert.is(existing.goodBytes, Buffer.byteLength(whole) * 3);
  assert.is(existing.records.length, 3);
  log.append([flight('next')]);
  void log.close();
  assert.equal(readEventLog(path).problems, []);
  assert.equal(hooksIn(path), ['ü', 'ü', 'ü', 'next']);
});

test('D24: rotate archives the generation and starts the next with a header; reads span both', async () => {
  const path = tempLog();
  const { log } = openEventLog(path);
  log.append([flight('old')]);
  const gen = log.rotate();
  assert.is(gen, 1);
  log.append([flight('new')]);
  assert.equal(hooksIn(segmentPath(path, 0)), ['old']);
  const active = readEventLog(path);
  assert.is(active.generation, 1);
  assert.equal(
    active.records.map((r) => r.k === 'flight' && r.hook),
    ['new'],
  );
  assert.match(log.read(0, 0, 1 << 20).toString(), /"old"/);
  assert.match(log.read(1, 0, 1 << 20).toString(), /"seg".*\n.*"new"/s);
  await log.close();
  const again = openEventLog(path);
  assert.is(again.log.generation, 1, 'a reopened log keeps its generation');
  await again.log.close();
});

test('D24: a rotation the disk cannot take leaves the log as it was: no segment, no headerless file, appends go on', async () => {
  const path = tempLog();
  let full = false;
  const { log } = openEventLog(path, {
    write: (fd, buf, off, len, pos) => {
      if (full) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return writeSync(fd, buf, off, len, pos);
    },
  });
  log.append([flight('old')]);
  full = true;
  let snapshots = 0;
  assert.throws(
    () => log.rotate(() => (snapshots += 1)),
    (e: SteeringError) => e.code === 'LOG_WRITE_FAILED' && /generation 1/.test(e.message),
  );
  assert.is(snapshots, 0, 'no snapshot names a generation whose file could not be started');
  assert.is(log.generation, 0);
  assert.not.ok(existsSync(segmentPath(path, 0)), 'nothing archived');
  assert.not.ok(existsSync(`${path}.next`), 'the half-started file is gone');
  full = false;
  log.append([flight('after')]);
  assert.equal(hooksIn(path), ['old', 'after'], 'the active file took the next append');
  assert.is(log.rotate(), 1, 'a later rotation goes through');
  assert.equal(hooksIn(segmentPath(path, 0)), ['old', 'after']);
  assert.is(readEventLog(path).generation, 1);
  await log.close();
});

test('D24: a snapshot that fails inside the rotation leaves the log as it was; one that succeeds finds the next file whole', async () => {
  const path = tempLog();
  const { log } = openEventLog(path);
  log.append([flight('old')]);
  assert.throws(() =>
    log.rotate(() => {
      throw new Error('snapshot refused');
    }),
  );
  assert.is(log.generation, 0);
  assert.not.ok(existsSync(segmentPath(path, 0)));
  assert.not.ok(existsSync(`${path}.next`));
  let seen = '';
  const gen = log.rotate((next) => {
    seen = `${next}:${readFileSync(`${path}.next`, 'utf8')}`;
  });
  assert.is(gen, 1);
  // The header carries the chain's head at the rotation (D47): one record, the hash of its line.
  const head = lineHash(readFileSync(segmentPath(path, 0), 'utf8').trimEnd());
  assert.is(
    seen,
    `1:{"k":"seg","g":1,"n":1,"h":"${head}"}\n`,
    'the next generation was on disk, header and all, before the snapshot',
  );
  assert.equal(hooksIn(segmentPath(path, 0)), ['old']);
  await log.close();
});

test('reads stop at what is synced: bytes written but waiting for their fsync are not handed out', async () => {
  const path = tempLog();
  const gate = gatedSync();
  const { log } = openEventLog(path, { sync: gate.sync });
  log.append([flight('synced')]);
  const before = log.read(0, 0, 1 << 20).length;
  const c = settled(log.commit([flight('waiting')]));
  const held = await gate.next();
  assert.ok(statSync(path).size > before, 'the batch is in the file');
  assert.is(log.read(0, 0, 1 << 20).length, before, 'but not readable before its sync');
  held.release();
  await turn();
  assert.is(c.done, true);
  assert.match(log.read(0, 0, 1 << 20).toString(), /"waiting"/);
  await log.close();
});

test('event records are written as JSON.stringify would write them, an ack included, whichever asked for the text first', async () => {
  const path = tempLog();
  const { log } = openEventLog(path, { fsync: false });
  const a = instructCmd('c-text-1', 'first "quoted" text\nwith a newline');
  const b = instructCmd('c-text-2', 'second');
  eventText(b); // text made before the log needs it
  const records: LogRecord[] = [
    { k: 'ev', e: a },
    { k: 'ev', e: b, ack: 'ack\u0000"key"' },
    { k: 'in', s: 's1', i: { type: 'ttl.tick', at: 1, ttlMs: 5 } },
  ];
  log.append(records);
  await log.close();
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '');
  // Each line closes with its place in the chain and its predecessor's hash (D47).
  let p = GENESIS;
  const linked = records.map((r, i) => {
    const line = JSON.stringify({ ...r, n: i + 1, p });
    p = lineHash(line);
    return line;
  });
  assert.equal(lines, linked);
  assert.equal(
    readEventLog(path).records,
    linked.map((l) => JSON.parse(l) as LogRecord),
  );
});

test.run();
