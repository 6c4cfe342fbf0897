// D43, issue 47: a start on an interactive Claude Code TUI, which only the hook lane reaches, is
// refused `start-unsupported`, and the refusal names both the way that would start it (a headless
// `aep-steer run claude -p` run) and why the TUI cannot be (its Channels are off). The lanes and
// their starts are built the way the adapter builds them (src/streams/run.ts), from the real
// Claude Code table and its stream-json lane, so dropping the table's startNote fails this.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import { streamJsonLane } from '../../src/adapters/claude-code/stream-json/lane.js';
import { surfaceFrom } from '../../src/adapters/surface-from.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import { laneHostOptions, laneStarts } from '../../src/streams/lanes.js';
import { command } from '../../src/protocol/index.js';

const S = 'sess-tui';

function claudeHost(note: string | undefined) {
  const surface = surfaceFrom(claudeCode);
  // Never opened: no run joins it, so it reaches no session, as for a TUI the person started.
  const dir = mkdtempSync(join(tmpdir(), 'aep-start-refusal-'));
  const lanes = [streamJsonLane({ socketPath: join(dir, 'stream-json.sock') })];
  const starts = laneStarts(lanes, false, note);
  const native = laneHostOptions(lanes);
  assert.ok(starts !== undefined && native !== undefined, 'the stream-json lane starts turns');
  const h = new ActorHost({
    surface,
    instruct: true,
    host: 'h',
    lanes: native,
    starts,
  });
  const body = { session_id: S, hook_event_name: 'SessionStart', cwd: '/p', source: 'startup' };
  h.step({ kind: 'hook', session: S, hookId: 'h0', at: 1000, hook: surface.classify(body) });
  const start = (id: string, data: Record<string, unknown>) => {
    const r = h.step({
      kind: 'command',
      session: S,
      at: 1100,
      command: command({ agent: 'ops', host: 'h' }, S, { type: surface.steeringType, id, data, capture: 'redacted' }),
    });
    return { records: r.records, lanes: r.effects.filter((e) => e.kind === 'lane') };
  };
  return { surface, start, done: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The rejection as the log records it: its reason and detail, and the rule it failed (`code`). */
const rejectionOf = (records: readonly unknown[]) => {
  for (const rec of records as { k: string; e?: { type: string; data: unknown; code?: string } }[])
    if (rec.k === 'ev' && rec.e?.type === 'control.rejected')
      return { ...(rec.e.data as { reason: string; detail: string }), rule: rec.e.code };
  return undefined;
};

test('an interactive Claude Code session: a start is refused start-unsupported, naming run claude -p and the Channels reason', () => {
  const t = claudeHost(surfaceFrom(claudeCode).startNote);
  try {
    const got = t.start('c1', { text: 'build the docs', idle: 'start' });
    assert.equal(got.lanes, [], 'nothing goes to a lane');
    const r = rejectionOf(got.records);
    assert.ok(r !== undefined, 'the start is rejected');
    assert.is(r.reason, 'unsupported');
    assert.is(r.rule, 'start-unsupported');
    assert.match(r.detail, 'aep-steer run claude -p', 'the way that would start it');
    assert.match(r.detail, /Channels are off/, 'why the TUI cannot be started');
    assert.match(r.detail, 'tengu_harbor');
  } finally {
    t.done();
  }
});

test('the refusal carries the Channels reason only from the table: without its startNote the detail lacks it', () => {
  const t = claudeHost(undefined);
  try {
    const r = rejectionOf(t.start('c2', { text: 'build the docs', idle: 'start' }).records);
    assert.is(r?.rule, 'start-unsupported');
    assert.match(r?.detail ?? '', 'aep-steer run claude -p');
    assert.not.match(r?.detail ?? '', /Channels/);
  } finally {
    t.done();
  }
});

test('Claude Code names its startNote: surfaceFrom carries the table text', () => {
  assert.ok(claudeCode.startNote !== undefined);
  assert.is(surfaceFrom(claudeCode).startNote, claudeCode.startNote.text);
});

test.run();
