import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { SessionEmitter } from '../../src/protocol/build.js';
import { StreamChecker, checkStream, type ViolationRule } from '../../src/protocol/stream-checks.js';

const SRC = 'aep://h/agent/a/session/s1';
let n = 0;
const ev = (type: string, seq: number | undefined, over: Partial<AepEvent> = {}): AepEvent => {
  const e: AepEvent = {
    aep: '0.1',
    id: `E${++n}`,
    type,
    time: '2026-07-03T10:00:00Z',
    source: SRC,
    agent: 'a',
    session: 's1',
    ...over,
  };
  if (seq !== undefined) e.seq = seq;
  return e;
};
const rules = (events: AepEvent[]): ViolationRule[] => checkStream(events).map((v) => v.rule);

test('ordering: gaps are legal; a new epoch resets seq', () => {
  assert.equal(
    rules([
      ev('progress.status', 0),
      ev('progress.status', 5),
      ev('progress.status', 0, { epoch: 1 }),
      ev('progress.status', 1, { epoch: 1 }),
    ]),
    [],
  );
});

test('ordering: seq regression, epoch regression, and one position claimed twice', () => {
  assert.equal(rules([ev('progress.status', 5), ev('progress.status', 3)]), ['seq-regression']);
  assert.equal(rules([ev('progress.status', 0, { epoch: 2 }), ev('progress.status', 1, { epoch: 1 })]), [
    'epoch-regression',
  ]);
  assert.equal(rules([ev('progress.status', 0), ev('progress.status', 1), ev('progress.status', 1)]), [
    'position-conflict',
  ]);
});

test('ordering is per (source, session): two emitters may share a session name', () => {
  const other = 'aep://h2/agent/b/session/s1';
  assert.equal(
    rules([ev('run.started', 3), ev('run.started', 0, { source: other }), ev('run.started', 1, { source: other })]),
    [],
  );
});

test('dedupe on (source, id): an identical redelivery is legal, different content is a collision', () => {
  const a = ev('run.started', 0, { run: 'r1' });
  const copy = JSON.parse(JSON.stringify({ ...a })) as AepEvent;
  const reordered = Object.fromEntries(Object.entries(a).reverse()) as AepEvent;
  assert.equal(rules([a, copy, reordered]), [], 'byte-identical or re-serialised redelivery');
  assert.equal(rules([a, { ...a, run: 'r2', seq: 1 }]), ['id-collision']);
  assert.equal(
    rules([a, { ...a, source: 'aep://other/agent/b/session/s1' }]),
    [],
    'same id from another emitter is another event',
  );
});

test('acks: one decision per command; accepted then rejected is a violation; a re-ack byte for byte is not', () => {
  const cmd = ev('control.pause', undefined, { source: 'aep://h/agent/mc', agent: 'mc' });
  const ack = ev('control.accepted', 0, { cause: cmd.id });
  assert.equal(rules([cmd, ack, { ...ack }]), []);
  assert.equal(rules([cmd, ack, ev('control.accepted', 1, { cause: cmd.id })]), ['ack-decision']);
  assert.equal(rules([cmd, ack, ev('control.rejected', 1, { cause: cmd.id, data: { reason: 'invalid' } })]), [
    'ack-decision',
  ]);
  assert.equal(rules([ack, ev('control.accepted', 1, { cause: 'OTHER' })]), []);
});

test('terminals: one per run across epochs, one session.ended per session', () => {
  assert.equal(rules([ev('run.finished', 0, { run: 'r1' }), ev('run.failed', 0, { run: 'r1', epoch: 1 })]), [
    'terminal-exclusive',
  ]);
  assert.equal(rules([ev('run.finished', 0, { run: 'r1' }), ev('run.finished', 1, { run: 'r2' })]), []);
  assert.equal(rules([ev('session.ended', 0), ev('session.ended', 1)]), ['terminal-exclusive']);
});

test('attention: a request still open at session.ended; closed by resolved or timeout is fine', () => {
  const req = ev('attention.requested', 0, { data: { kind: 'permission', prompt: 'p' } });
  assert.equal(rules([req, ev('session.ended', 1)]), ['attention-open-at-end']);
  assert.equal(rules([req, ev('attention.timeout', 1, { subject: req.id }), ev('session.ended', 2)]), []);
  assert.equal(
    rules([
      req,
      ev('attention.resolved', 1, { subject: req.id, data: { resolution: 'dismissed' } }),
      ev('session.ended', 2),
    ]),
    [],
  );
  assert.equal(rules([req]), [], 'an open request mid-stream is legal');
});

test('form values: answered values checked against the request field_spec', () => {
  const req = ev('attention.requested', 0, {
    data: {
      kind: 'form',
      prompt: 'p',
      fields: [{ id: 'db', type: 'select', label: 'DB', required: true, choices: [{ id: '1', label: 'PG' }] }],
    },
  });
  assert.equal(
    rules([req, ev('attention.answered', 1, { subject: req.id, data: { answer: { values: { db: '1' } } } })]),
    [],
  );
  assert.equal(
    rules([req, ev('attention.answered', 1, { subject: req.id, data: { answer: { values: { db: 'MariaDB' } } } })]),
    ['form-values'],
  );
  assert.equal(rules([req, ev('attention.answered', 1, { subject: req.id, data: { answer: { values: {} } } })]), [
    'form-values',
  ]);
});

test('StreamChecker: incremental, each violation carries the index and id of the offending event', () => {
  const c = new StreamChecker();
  assert.equal(c.push(ev('progress.status', 2)), []);
  assert.equal(
    c.push(ev('agent.heartbeat', undefined, { session: undefined })),
    [],
    'agent-scoped events have no position',
  );
  const bad = ev('progress.status', 1);
  const v = c.push(bad);
  assert.is(v.length, 1);
  assert.is(v[0]!.index, 2);
  assert.is(v[0]!.eventId, bad.id);
  assert.match(v[0]!.message, /seq 1 after seq 2/);
  assert.equal(c.finish(), []);
});

test('property: a SessionEmitter stream is clean; moving any event earlier breaks the order', () => {
  fc.assert(
    fc.property(fc.integer({ min: 2, max: 30 }), fc.nat(), fc.nat(), (count, a, b) => {
      const em = new SessionEmitter({ agent: 'codex', session: 's', host: 'h' });
      const events = Array.from({ length: count }, () => em.emit({ type: 'progress.status' }));
      assert.equal(checkStream(events), []);
      const from = Math.max(a % count, b % count);
      const to = Math.min(a % count, b % count);
      if (from === to) return;
      const moved = [...events];
      const [e] = moved.splice(from, 1);
      moved.splice(to, 0, e!);
      assert.ok(checkStream(moved).some((v) => v.rule === 'seq-regression'));
    }),
    { numRuns: 200 },
  );
});

test.run();
