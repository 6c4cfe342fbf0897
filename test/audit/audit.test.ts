import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  SessionEmitter,
  command,
  deliveredType,
  droppedType,
  instructType,
  type AepEvent,
} from '../../src/protocol/index.js';
import { auditFiles, type AuditResult } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { runAudit, AUDIT_EXIT } from '../../src/cli/audit-command.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-audit-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function writeLog(lines: (AepEvent | string)[], trailingNewline = true): string {
  const file = join(dir, `log-${n++}.jsonl`);
  writeFileSync(
    file,
    lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + (trailingNewline ? '\n' : ''),
  );
  return file;
}

const T0 = Date.parse('2026-11-30T10:00:00.000Z');

/** A well-formed session: two instructions, one delivered, one dropped at session end. */
function goodSession(session = 's-good') {
  const em = new SessionEmitter({ agent: 'claude-code', session, host: 'h' });
  const sender = { agent: 'alice', host: 'h' };
  const c1 = command(sender, session, {
    type: instructType('claude-code'),
    data: { text: 'run the tests' },
    capture: 'redacted',
    at: T0 + 10,
  });
  const c2 = command(sender, session, {
    type: instructType('claude-code'),
    data: { text: 'then stop' },
    capture: 'redacted',
    at: T0 + 20,
  });
  const started = em.emit({ type: 'session.started', at: T0 });
  const a1 = em.emit({ type: 'control.accepted', cause: c1.id, at: T0 + 11 });
  const a2 = em.emit({ type: 'control.accepted', cause: c2.id, at: T0 + 21 });
  const d1 = em.emit({ type: deliveredType('claude-code'), cause: c1.id, data: { queued_ms: 1500 }, at: T0 + 1511 });
  const x2 = em.emit({
    type: droppedType('claude-code'),
    cause: c2.id,
    data: { reason: 'session-ended' },
    at: T0 + 3000,
  });
  const ended = em.emit({ type: 'session.ended', at: T0 + 3001 });
  return {
    em,
    sender,
    c1,
    c2,
    started,
    a1,
    a2,
    d1,
    x2,
    ended,
    events: [started, c1, a1, c2, a2, d1, x2, ended] as AepEvent[],
  };
}

const rules = (r: AuditResult) => r.violations.map((v) => v.rule).sort();

test('a well-formed log passes and shows each lifecycle', async () => {
  const g = goodSession();
  const r = await auditFiles([writeLog(g.events)]);
  assert.equal(r.violations, []);
  assert.is(r.instructions.length, 2);
  const [i1, i2] = r.instructions;
  assert.is(i1!.id, g.c1.id);
  assert.is(i1!.status, 'delivered');
  assert.is(i1!.sender, 'alice');
  assert.is(i1!.delivered!.queuedMs, 1500);
  assert.is(i2!.status, 'dropped');
  assert.is(i2!.dropped!.reason, 'session-ended');
  const text = renderText(r);
  assert.match(text, 'delivered after 1500 ms');
  assert.match(text, 'dropped (session-ended)');
  assert.match(text, 'no violations');
  assert.not.match(text, 'run the tests'); // the report names instructions by id, not by their text
});

test('an identical redelivery is not a violation; a rejected and a pending instruction are reported', async () => {
  const em = new SessionEmitter({ agent: 'claude-code', session: 's2', host: 'h' });
  const s = { agent: 'bob', host: 'h' };
  const started = em.emit({ type: 'session.started' });
  const c1 = command(s, 's2', { type: instructType('claude-code'), data: { text: ' ' }, capture: 'redacted' });
  const c2 = command(s, 's2', { type: instructType('claude-code'), data: { text: 'x' }, capture: 'redacted' });
  const r1 = em.emit({
    type: 'control.rejected',
    cause: c1.id,
    data: { reason: 'invalid', detail: 'text is empty' },
    capture: 'redacted',
  });
  const a2 = em.emit({ type: 'control.accepted', cause: c2.id });
  const r = await auditFiles([writeLog([started, c1, r1, c2, a2, a2, c2])]);
  assert.equal(r.violations, []);
  assert.is(r.redeliveries, 2);
  assert.equal(
    r.instructions.map((i) => i.status),
    ['rejected', 'pending'],
  );
  assert.match(renderText(r), 'rejected invalid: text is empty');
  assert.match(renderText(r), 'still pending');
  assert.is(r.sessions[0]!.state, 'queued');
  assert.equal(
    r.sessions[0]!.queue.map((q) => q.id),
    [c2.id],
  );
});

test('two distinct acks for one command are flagged ack-decision, with file:line and event id', async () => {
  const g = goodSession('s3');
  const second = g.em.emit({ type: 'control.rejected', cause: g.c1.id, data: { reason: 'refused' } });
  const file = writeLog([...g.events, second]);
  const r = await auditFiles([file]);
  assert.equal(rules(r), ['ack-decision']);
  assert.is(r.violations[0]!.file, file);
  assert.is(r.violations[0]!.line, 9);
  assert.is(r.violations[0]!.eventId, second.id);
});

test('an ack without cause is flagged ack-uncaused', async () => {
  const g = goodSession('s4');
  const r = await auditFiles([writeLog([...g.events, g.em.emit({ type: 'control.accepted' })])]);
  assert.equal(rules(r), ['ack-uncaused']);
});

test('a second terminal for one instruction is flagged terminal-duplicate', async () => {
  const g = goodSession('s5');
  const again = g.em.emit({ type: droppedType('claude-code'), cause: g.c1.id, data: { reason: 'session-ended' } });
  const r = await auditFiles([writeLog([...g.events, again])]);
  assert.equal(rules(r), ['terminal-duplicate']);
  assert.is(r.violations[0]!.eventId, again.id);
});

test('a session that ends with an instruction still queued is flagged terminal-missing', async () => {
  const g = goodSession('s6');
  const r = await auditFiles([writeLog(g.events.filter((e) => e !== g.x2))]);
  assert.equal(rules(r), ['terminal-missing']);
  assert.is(r.violations[0]!.eventId, g.ended.id);
});

test('delivered caused by the ack instead of the command is flagged terminal-cause', async () => {
  const g = goodSession('s7');
  const bad = { ...g.d1, cause: g.a1.id };
  const r = await auditFiles([writeLog(g.events.map((e) => (e === g.d1 ? bad : e)))]);
  assert.equal(rules(r), ['terminal-cause']);
  assert.is(r.instructions.find((i) => i.id === g.c1.id)!.status, 'delivered');
});

test('a terminal without cause, and one naming nothing known, are flagged', async () => {
  const g = goodSession('s8');
  const uncaused: AepEvent = { ...g.d1 };
  delete uncaused.cause;
  const orphan = { ...g.x2, cause: '01ORPHANORPHANORPHANORPHAN' };
  const r = await auditFiles([writeLog(g.events.map((e) => (e === g.d1 ? uncaused : e === g.x2 ? orphan : e)))]);
  // c1 and c2 then have no terminal before session.ended as well.
  assert.equal(rules(r), ['terminal-missing', 'terminal-missing', 'terminal-orphan', 'terminal-uncaused']);
});

test('delivery of a rejected or never accepted instruction is flagged terminal-unaccepted', async () => {
  const em = new SessionEmitter({ agent: 'claude-code', session: 's9', host: 'h' });
  const c = command({ agent: 'a', host: 'h' }, 's9', {
    type: instructType('claude-code'),
    data: { text: 'x' },
    capture: 'redacted',
  });
  const rej = em.emit({ type: 'control.rejected', cause: c.id, data: { reason: 'invalid' } });
  const del = em.emit({ type: deliveredType('claude-code'), cause: c.id, data: { queued_ms: 1 } });
  const c2 = command({ agent: 'a', host: 'h' }, 's9', {
    type: instructType('claude-code'),
    data: { text: 'y' },
    capture: 'redacted',
  });
  const del2 = em.emit({ type: deliveredType('claude-code'), cause: c2.id, data: { queued_ms: 1 } });
  const r = await auditFiles([writeLog([c, rej, del, c2, del2])]);
  assert.equal(rules(r), ['terminal-unaccepted', 'terminal-unaccepted']);
});

test('instruction text below redacted capture is flagged capture-text', async () => {
  const em = new SessionEmitter({ agent: 'claude-code', session: 's10', host: 'h' });
  const leaky = command({ agent: 'a', host: 'h' }, 's10', {
    type: instructType('claude-code'),
    data: { text: 'secret plan' },
  });
  const acked = em.emit({ type: 'control.accepted', cause: leaky.id });
  const delivered = em.emit({
    type: deliveredType('claude-code'),
    cause: leaky.id,
    data: { queued_ms: 3, text: 'secret plan' },
    capture: 'metadata',
  });
  const r = await auditFiles([writeLog([leaky, acked, delivered])]);
  assert.equal(rules(r), ['capture-text', 'capture-text']);
  assert.equal(
    r.violations.map((v) => v.eventId),
    [leaky.id, delivered.id],
  );
});

test('(epoch, seq) regressions and conflicts are flagged; a new epoch may restart seq', async () => {
  const g = goodSession('s11');
  const late = { ...g.em.emit({ type: 'run.started' }), seq: 20 };
  const regressed = { ...late, id: '01REGRESSREGRESSREGRESSREG', seq: 15 };
  const conflicting = { ...late, id: '01CONFLICTCONFLICTCONFLICT', seq: g.a1.seq };
  const restarted = new SessionEmitter({ agent: 'claude-code', session: 's11', host: 'h', epoch: 1 }).emit({
    type: 'run.started',
  });
  const oldEpoch = { ...late, id: '01OLDEPOCHOLDEPOCHOLDEPOC', seq: 99, epoch: 0 };
  const r = await auditFiles([writeLog([...g.events, late, regressed, conflicting, restarted, oldEpoch])]);
  assert.equal(rules(r), ['epoch-regression', 'position-conflict', 'seq-regression']);
});

test('one (source, id) with two contents is flagged id-conflict across files', async () => {
  const g = goodSession('s12');
  const a = writeLog(g.events);
  const changed = { ...g.d1, data: { queued_ms: 9 } };
  const b = writeLog([changed]);
  const r = await auditFiles([a, b]);
  assert.equal(rules(r), ['id-conflict']);
  assert.is(r.violations[0]!.file, b);
  assert.is(r.violations[0]!.line, 1);
});

test('the same events in two files (adapter log + relay export) count once', async () => {
  const g = goodSession('s13');
  const r = await auditFiles([writeLog(g.events), writeLog(g.events)]);
  assert.equal(r.violations, []);
  assert.is(r.events, g.events.length);
  assert.is(r.redeliveries, g.events.length);
});

test('bad lines: not JSON, blank, not an object and bad envelope are violations; a torn last line is a note', async () => {
  const g = goodSession('s14');
  const { aep: _drop, ...noVersion } = g.started;
  const file = writeLog(
    [...g.events, '{not json', '', '[1,2]', JSON.stringify({ ...noVersion, aep: '9.9' }), '{"aep":"0.1","id":"x"'],
    false,
  );
  const r = await auditFiles([file]);
  assert.equal(rules(r), ['envelope-invalid', 'line-invalid', 'line-invalid', 'line-invalid']);
  assert.equal(
    r.violations.map((v) => v.line),
    [9, 10, 11, 12],
  );
  assert.equal(
    r.notes.map((x) => [x.kind, x.line]),
    [['torn-tail', 13]],
  );
});

test('the protocol stream rules apply too: a second session.ended, an attention request left open at the end', async () => {
  const em = new SessionEmitter({ agent: 'claude-code', session: 's18', host: 'h' });
  const asked = em.emit({ type: 'attention.requested', data: { kind: 'permission', prompt: 'p' }, severity: 'notice' });
  const end1 = em.emit({ type: 'session.ended' });
  const end2 = em.emit({ type: 'session.ended' });
  const r = await auditFiles([
    writeLog([em.emit({ type: 'session.started' }), asked, end1, end2].sort((a, b) => a.seq - b.seq)),
  ]);
  // Both ends leave the request open; the second is also a second terminal.
  assert.equal(
    r.violations.map((v) => [v.rule, v.eventId]),
    [
      ['attention-open-at-end', end1.id],
      ['attention-open-at-end', end2.id],
      ['terminal-exclusive', end2.id],
    ],
  );
});

test('an accept after session.ended is flagged accepted-after-end', async () => {
  const g = goodSession('s15');
  const c = command(g.sender, 's15', {
    type: instructType('claude-code'),
    data: { text: 'late' },
    capture: 'redacted',
  });
  const r = await auditFiles([writeLog([...g.events, c, g.em.emit({ type: 'control.accepted', cause: c.id })])]);
  assert.equal(rules(r), ['accepted-after-end']);
});

test('D6: a session reopened by a start moment takes instructions again; its later end is session.closed', async () => {
  const g = goodSession('s19');
  const c = command(g.sender, 's19', {
    type: instructType('claude-code'),
    data: { text: 'resumed' },
    capture: 'redacted',
  });
  const reopened = g.em.emit({ type: 'x.claude-code.session.reopened' });
  const accepted = g.em.emit({ type: 'control.accepted', cause: c.id });
  const open = await auditFiles([writeLog([...g.events, reopened, c, accepted])]);
  assert.equal(open.violations, []);
  assert.is(open.sessions.find((v) => v.session === 's19')!.state, 'queued');
  // Ended again with the instruction neither delivered nor dropped: terminal-missing at session.closed.
  const closed = g.em.emit({ type: 'x.claude-code.session.closed', data: { reason: 'normal' } });
  const r = await auditFiles([writeLog([...g.events, reopened, c, accepted, closed])]);
  assert.equal(
    r.violations.map((v) => [v.rule, v.eventId]),
    [['terminal-missing', closed.id]],
  );
  assert.is(r.sessions.find((v) => v.session === 's19')!.state, 'ended');
});

test('the audit command exits 0 on a clean log, 1 on violations, 2 on an unreadable file; --json parses', async () => {
  const out = sink();
  const err = sink();
  const g = goodSession('s16');
  const clean = writeLog(g.events);
  assert.is(await runAudit([clean], {}, { out: out.stream, err: err.stream }), AUDIT_EXIT.clean);
  const dirty = writeLog(g.events.filter((e) => e !== g.x2));
  assert.is(await runAudit([dirty], {}, { out: out.stream, err: err.stream }), AUDIT_EXIT.violations);
  assert.match(out.text(), `${dirty}:7`);
  const jsonOut = sink();
  assert.is(await runAudit([dirty], { json: true }, { out: jsonOut.stream, err: err.stream }), AUDIT_EXIT.violations);
  const parsed = JSON.parse(jsonOut.text());
  assert.is(parsed.ok, false);
  assert.is(parsed.violations[0].rule, 'terminal-missing');
  assert.is(await runAudit([join(dir, 'missing.jsonl')], {}, { out: out.stream, err: err.stream }), AUDIT_EXIT.usage);
  assert.match(err.text(), 'cannot read');
});

test('progress reports bytes read up to the total across files', async () => {
  const g = goodSession('s17');
  const a = writeLog(g.events);
  const b = writeLog(g.events);
  const seen: [number, number][] = [];
  await auditFiles([a, b], { onProgress: (done, total) => seen.push([done, total]) });
  const total = seen[0]![1];
  assert.ok(seen.length >= 2);
  assert.ok(seen.every(([, t]) => t === total));
  assert.equal(seen.at(-1), [total, total]);
  assert.ok(seen.every(([d], i) => i === 0 || d >= seen[i - 1]![0]));
});

function sink() {
  let text = '';
  const stream = new Writable({
    write(c: Buffer, _e, cb) {
      text += c.toString();
      cb();
    },
  }) as Writable & { isTTY?: boolean };
  stream.isTTY = false;
  return { stream: stream as unknown as NodeJS.WriteStream, text: () => text };
}

/** D32: c2 of the good session withdrawn before the end instead of dropped there. */
function withdrawnSession(session: string) {
  const g = goodSession(session);
  const w = command(g.sender, session, {
    type: 'x.claude-code.control.withdraw',
    data: { instruction: g.c2.id },
    at: T0 + 30,
  });
  const aw = g.em.emit({ type: 'control.accepted', cause: w.id, at: T0 + 31 });
  const xw = g.em.emit({
    type: droppedType('claude-code'),
    cause: w.id,
    subject: g.c2.id,
    data: { reason: 'withdrawn' },
    at: T0 + 32,
  });
  const events = g.events.filter((e) => e !== g.x2 && e !== g.ended);
  return { ...g, w, aw, xw, events: [...events, w, aw, xw] };
}

test('a withdrawn instruction is terminal: dropped (withdrawn), nothing missing at the end (D32)', async () => {
  const g = withdrawnSession('s-w1');
  const r = await auditFiles([writeLog([...g.events, g.em.emit({ type: 'session.ended', at: T0 + 3001 })])]);
  assert.equal(r.violations, []);
  const i2 = r.instructions.find((i) => i.id === g.c2.id)!;
  assert.is(i2.status, 'dropped');
  assert.is(i2.dropped!.reason, 'withdrawn');
  assert.match(renderText(r), 'dropped (withdrawn)');
});

test('a delivery after a withdraw was accepted is flagged delivered-after-withdraw (D32)', async () => {
  const g = withdrawnSession('s-w2');
  const late = g.em.emit({ type: deliveredType('claude-code'), cause: g.c2.id, data: { queued_ms: 40 }, at: T0 + 40 });
  const r = await auditFiles([writeLog([...g.events, late])]);
  assert.ok(rules(r).includes('delivered-after-withdraw'), rules(r).join(','));
  assert.is(r.violations.find((v) => v.rule === 'delivered-after-withdraw')!.eventId, late.id);
  // A delivery before the withdraw's ack (the withdraw then refused) is no breach.
  const h = goodSession('s-w3');
  const w = command(h.sender, 's-w3', {
    type: 'x.claude-code.control.withdraw',
    data: { instruction: h.c1.id },
    at: T0 + 2000,
  });
  const rw = h.em.emit({
    type: 'control.rejected',
    cause: w.id,
    data: { reason: 'refused', detail: 'already delivered' },
    capture: 'redacted',
    at: T0 + 2001,
  });
  const ok = await auditFiles([writeLog([...h.events, w, rw])]);
  assert.equal(ok.violations, []);
});

/** D43: an instruct with idle start on session `session`; `before` runs the turn that may already run. */
function startSession(session: string, o: { runBefore?: boolean; turnsBetween?: number; endAfter?: boolean } = {}) {
  const em = new SessionEmitter({ agent: 'codex', session, host: 'h' });
  const sender = { agent: 'alice', host: 'h' };
  const events: AepEvent[] = [em.emit({ type: 'session.started', at: T0 })];
  if (o.runBefore === true) events.push(em.emit({ type: 'run.started', at: T0 + 1 }));
  const c = command(sender, session, {
    type: instructType('codex'),
    data: { text: 'wake up and run the tests', idle: 'start' },
    capture: 'redacted',
    at: T0 + 10,
  });
  events.push(c, em.emit({ type: 'control.accepted', cause: c.id, at: T0 + 11 }));
  // D44, D50: a queued one handed over as a start once the running turn ended.
  if (o.endAfter === true) events.push(em.emit({ type: 'run.finished', at: T0 + 15 }));
  for (let i = 0; i < (o.turnsBetween ?? 1); i++) events.push(em.emit({ type: 'run.started', at: T0 + 20 + i }));
  const d = em.emit({
    type: deliveredType('codex'),
    cause: c.id,
    data: { queued_ms: 30, lane: 'app-server', ref: 'turn-1', started: true },
    at: T0 + 40,
  });
  return { events: [...events, d], d };
}

test('a start that began the turn of an idle session passes; one beside a running turn is start-beside-turn (D43)', async () => {
  const good = startSession('s-start-1');
  assert.equal((await auditFiles([writeLog(good.events)])).violations, []);
  const running = startSession('s-start-2', { runBefore: true });
  const r = await auditFiles([writeLog(running.events)]);
  assert.ok(rules(r).includes('start-beside-turn'), rules(r).join(','));
  assert.is(r.violations.find((v) => v.rule === 'start-beside-turn')!.eventId, running.d.id);
  const handed = startSession('s-start-4', { runBefore: true, endAfter: true });
  assert.equal(
    (await auditFiles([writeLog(handed.events)])).violations,
    [],
    'one handed over after the running turn ended is judged from that end',
  );
  const two = startSession('s-start-3', { turnsBetween: 2 });
  const r2 = await auditFiles([writeLog(two.events)]);
  assert.match(r2.violations.find((v) => v.rule === 'start-beside-turn')!.message, '2 turns started');
});

test.run();
