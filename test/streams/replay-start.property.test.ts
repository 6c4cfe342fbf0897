// Property: a start that replays the log (D11) rebuilds exactly the host the live run left: every
// session cell (state, queue with accept times, in-flight batches, holds, dedupe records, ended
// and reopened sessions, resume windows), the next epochs, the recorded acks byte for byte, the
// orphan decisions, each session's last position, and the same D12 recovery. The log is written
// to a real file and read back the way startAdapter reads it (records replayed as they are read).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ActorHost } from '../../src/streams/actor-host.js';
import type { StepResult } from '../../src/streams/step-types.js';
import { openEventLog, parseLog, siblingPath, type LogRecord } from '../../src/streams/log.js';
import { LogReplay, replayInto } from '../../src/streams/replay.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { isCommandType } from '../../src/protocol/types.js';
import { adapter, steerRounds, tempLog } from '../support/adapter.js';
import { fakeSurface } from '../support/fake-surface.js';
import { driveHost, type Driven, type HostOp } from '../support/host-drive.js';
import { instructCmd } from '../support/session-steps.js';
import { until } from '../support/until.js';

const surface = fakeSurface();
// Commands for a session before its first hook are refused and remembered (orphan decisions,
// D6); its cell, once a hook spawns it, starts with them.
const SESSIONS = ['s-a', 's-b', 's-c'];
const TEXTS = ['tighten the tests', '', 'x'.repeat(4001), 'short', 'y'.repeat(3000)];
const HOOKS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'Stop',
  'PermissionRequest',
  'Elicitation',
  'SessionEnd',
].map((h) => [h, {}] as const);
const ANSWERS = [{ option: 'allow' }, { text: 'no, wait' }, { values: { name: 'n' } }];
const hostOptions = { surface, instruct: true, host: 'prop-host', attentionTimeoutMs: 1000, resumeWindowMs: 50 };
const SCRIPT = { sessions: SESSIONS, texts: TEXTS, hooks: HOOKS, answers: ANSWERS };

const opArb: fc.Arbitrary<HostOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('hook' as const), s: fc.nat(2), h: fc.nat(HOOKS.length - 1) }), weight: 4 },
  {
    arbitrary: fc.record({
      op: fc.constant('instruct' as const),
      s: fc.nat(2),
      id: fc.nat(40),
      t: fc.nat(TEXTS.length - 1),
    }),
    weight: 4,
  },
  fc.record({ op: fc.constant('retry' as const), n: fc.nat(60) }),
  fc.record({ op: fc.constant('respond' as const), s: fc.nat(1), answer: fc.nat(ANSWERS.length - 1) }),
  { arbitrary: fc.record({ op: fc.constant('write' as const), ok: fc.boolean() }), weight: 2 },
  fc.record({ op: fc.constant('timeout' as const), s: fc.nat(1) }),
  fc.record({ op: fc.constant('tick' as const), s: fc.nat(1) }),
);

interface Live extends Driven {
  host: ActorHost;
}

function drive(ops: readonly HostOp[]): Live {
  const host = new ActorHost(hostOptions);
  const live = { host, ...driveHost(host, surface, SCRIPT, ops) };
  // Every step is durable: nothing is left to undo.
  host.durable(Number.MAX_SAFE_INTEGER);
  return live;
}

/** Each session's last sequenced event as the live run emitted it: its position on the stream. */
const lastPositions = (records: readonly LogRecord[]): Map<string, AepEvent> => {
  const out = new Map<string, AepEvent>();
  for (const r of records)
    if (r.k === 'ev' && r.e.session !== undefined && r.e.seq !== undefined && !isCommandType(r.e.type))
      out.set(r.e.session, r.e);
  return out;
};

/** What a D12 recovery says, without the ids and times it mints. */
const recoveryOf = (results: StepResult[]) =>
  results.map((r) => ({
    events: r.events.map((e) => ({
      type: e.type,
      session: e.session,
      cause: e.cause,
      data: e.data,
      epoch: e.epoch,
      seq: e.seq,
    })),
    effects: r.effects,
  }));

test('D11: the host replayed from the log file equals the live host: cells, epochs, acks, orphans, positions, recovery', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-replay-start-'));
  let sawEnded = 0;
  let sawHold = 0;
  let sawOrphan = 0;
  try {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 80 }), (ops) => {
        const live = drive(ops);
        const path = join(dir, 'adapter.jsonl');
        writeFileSync(path, live.records.map((r) => JSON.stringify(r)).join('\n') + (live.records.length ? '\n' : ''));

        // As startAdapter: each record replayed as the file is read.
        const started = new ActorHost(hostOptions);
        const replay = new LogReplay(started);
        const { log, existing } = openEventLog(path, {
          fsync: false,
          onRecord: (r, _end, line) => replay.record(r, line),
        });
        void log.close();
        assert.equal(existing.records, [], 'nothing is held once replayed');
        assert.equal(existing.problems, []);
        const summary = replay.summary();
        // Replay folds inputs into cells; a live step (which emits and logs) would leave an undo entry.
        assert.is(started.rollback(), 0, 'replay took no live step: nothing emitted, nothing logged');

        const liveState = live.host.exportState();
        assert.equal(started.exportState(), liveState);
        assert.equal(started.views(), live.host.views());
        assert.equal([...summary.lastEvents.entries()].sort(), [...lastPositions(live.records).entries()].sort());
        for (const c of live.commands)
          assert.is(started.recordedAck(`${c.source}\u0000${c.id}`), live.host.recordedAck(`${c.source}\u0000${c.id}`));

        // The same records through replayInto (audit, snapshot tail) rebuild the same host.
        const again = new ActorHost(hostOptions);
        replayInto(again, parseLog(live.records.map((r) => `${JSON.stringify(r)}\n`).join('')).records);
        assert.equal(again.exportState(), liveState);

        // D12: the restart reports the same in-flight, held and unsent work, in the new epoch.
        const liveNext = new ActorHost(hostOptions);
        liveNext.importState(liveState);
        assert.equal(recoveryOf(started.recover(500_000)), recoveryOf(liveNext.recover(500_000)));

        if (liveState.cells.some((c) => c.snapshot.value === 'ended')) sawEnded += 1;
        if (liveState.cells.some((c) => c.snapshot.context.holds.length > 0)) sawHold += 1;
        if (liveState.orphans.length > 0 || live.seeded) sawOrphan += 1;
      }),
      { numRuns: 200 },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.ok(
    sawEnded > 0 && sawHold > 0 && sawOrphan > 0,
    `runs end sessions (${sawEnded}), hold replies (${sawHold}) and refuse orphans (${sawOrphan})`,
  );
});

test('a session that only ever saw refused orphan commands keeps its next epoch through a snapshot', () => {
  const live = drive([{ op: 'instruct', s: 2, id: 1, t: 0 }]);
  assert.ok(
    live.records.some((r) => r.k === 'ev' && r.e.session === 's-c' && r.e.seq === 0),
    'the refusal took position 0 of epoch 0',
  );
  const replayed = new ActorHost(hostOptions);
  replayInto(replayed, live.records);
  assert.equal(live.host.exportState().epochs, [['s-c', 1]]);
  assert.equal(replayed.exportState().epochs, [['s-c', 1]]);
});

test('parseLog hands each record the byte offset past its line, the line itself, and the good length, ASCII or not', () => {
  for (const text of ['plain ascii', 'ünïcødé ✓ and 𝄞']) {
    const lines = [
      JSON.stringify({ k: 'in', s: 's-a', i: { type: 'hook.moment', at: 1, hookId: 'h', eligible: true } }),
      JSON.stringify({ k: 'flight', s: 's-a', hook: 'h', ids: [text] }),
      'not json',
      JSON.stringify({ k: 'flight', s: 's-a', hook: 'h2', ids: [text, text] }),
    ];
    const bytes = Buffer.from(`${lines.join('\n')}\n{"k":"in"`);
    const seen: [number, string][] = [];
    const r = parseLog(bytes, (_r, end, line) => seen.push([end, line]), false);
    const ends = [0, 1, 3].map((i) => Buffer.byteLength(lines.slice(0, i + 1).join('\n')) + 1);
    assert.equal(
      seen,
      [
        [ends[0]!, lines[0]!],
        [ends[1]!, lines[1]!],
        [ends[2]!, lines[3]!],
      ],
      text,
    );
    assert.is(r.goodBytes, ends[2]);
    assert.equal(r.records, [], 'handed over, not collected');
    assert.equal(
      r.problems.map((p) => p.message),
      ['event log line 3 is not a readable record; skipped', 'event log line 5 is torn (no line end); skipped'],
    );
  }
});

for (const unicode of [false, true])
  test(`a damaged log${unicode ? ' with text outside ASCII' : ''}: the streamed start replays every readable record, as reading it whole does, and reports the rest`, () => {
    const live = drive([
      { op: 'hook', s: 0, h: 0 },
      { op: 'instruct', s: 0, id: 1, t: 0 },
      { op: 'instruct', s: 0, id: 2, t: 3 },
      { op: 'hook', s: 0, h: 1 },
      { op: 'instruct', s: 0, id: 3, t: 0 },
    ]);
    const lines = live.records.map((r) => JSON.stringify(r));
    // A broken line in the middle, a torn last line (and text outside ASCII in an instruction).
    lines.splice(2, 0, '{"k":"in","s":"s-a","i":{"type":"hook.mo');
    const joined = lines.join('\n');
    const text =
      (unicode ? joined.replace('tighten the tests', 'straffez les tests — ünïcødé ✓') : joined) +
      '\n{"k":"ev","e":{"aep"';
    const dir = mkdtempSync(join(tmpdir(), 'aep-replay-damaged-'));
    try {
      const path = join(dir, 'adapter.jsonl');
      writeFileSync(path, text);
      const whole = parseLog(readFileSync(path));
      const collected = new ActorHost(hostOptions);
      replayInto(collected, whole.records);
      const started = new ActorHost(hostOptions);
      const replay = new LogReplay(started);
      const { log, existing } = openEventLog(path, {
        fsync: false,
        onRecord: (r, _end, line) => replay.record(r, line),
      });
      void log.close();
      assert.equal(
        existing.problems.map((p) => p.code),
        ['LOG_TORN_RECORD', 'LOG_TORN_RECORD'],
        'the broken line and the torn tail',
      );
      assert.equal(started.exportState(), collected.exportState());
      assert.ok(started.views()[0]!.queue.length > 0);
      assert.is(
        readFileSync(path, 'utf8'),
        text.slice(0, text.lastIndexOf('\n') + 1),
        'the torn tail is cut, the rest kept',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test('D24 with the snapshot unreadable, a start replays the kept segments, oldest first, then the active log: same sessions, same acks', async () => {
  const logPath = tempLog();
  const first = await adapter({ logPath, segmentBytes: 4096, keepSegments: 1000 });
  await steerRounds(first, 'sg', 6, 24);
  await until(() => first.events.filter((e) => e.type === 'control.accepted').length === 144, 'every ack');
  const ack = JSON.stringify(first.events.find((e) => e.type === 'control.accepted' && e.cause === 'c-1-2'));
  const views = first.handle.sessions();
  await first.handle.close();
  const segments = readdirSync(dirname(logPath)).filter((f) => f.includes('.seg-'));
  assert.ok(segments.length >= 2, `the history spans segments (${segments.join(', ')})`);
  writeFileSync(siblingPath(logPath, 'snapshot'), '{"v":1,"generation":');
  const second = await adapter({ logPath, segmentBytes: 1 << 30 });
  try {
    assert.ok(
      second.errors.some((e) => /snapshot .* unreadable; replaying the kept segments instead/.test(e.message)),
      'the unreadable snapshot is reported',
    );
    assert.equal(second.handle.sessions(), views);
    const re = second.next((e) => e.type === 'control.accepted' && e.cause === 'c-1-2');
    second.handle.command(instructCmd('c-1-2', 'text 1 2', 'sg-2'));
    assert.is(JSON.stringify(await re), ack, 'an ack from the oldest segment comes back byte for byte');
  } finally {
    await second.handle.close();
  }
});

test.run();
