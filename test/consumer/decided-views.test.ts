// D46/D48 as the readers show them: `aep-steer audit` names who decided each request and who
// withdrew an instruction; `pending` (and MCP, which shares its rows) says a risky request needs a
// second approver and who gave the first; respond's outcome for a first allow says it is still held.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionEmitter, command, droppedType, instructType, withdrawType } from '../../src/protocol/index.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { downLevel } from '../../src/protocol/capture.js';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { pendingOf } from '../../src/consumer/pending.js';
import { askedLine } from '../../src/cli/pending-command.js';
import { explainRespond } from '../../src/consumer/explain.js';
import { CLI_VOICE } from '../../src/consumer/next-step.js';
import { Board } from '../../src/consumer/board.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-decided-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const RISKY = { rule: 'force-push', why: "a force push rewrites a remote branch's history" };
const options = [
  { id: 'allow', label: 'Allow' },
  { id: 'deny', label: 'Deny' },
];

/** One session as the adapter writes it: a plain request answered at the console, a risky one allowed by two, a withdraw. */
function session(): AepEvent[] {
  const em = new SessionEmitter({ agent: 'claude-code', session: 's1', host: 'h' });
  const out: AepEvent[] = [em.emit({ type: 'session.started', at: T0 })];
  const plain = em.emit({
    type: 'attention.requested',
    subject: 'Bash',
    capture: 'redacted',
    data: { kind: 'permission', options },
    at: T0 + 1,
  });
  const r1 = command({ agent: 'alice', host: 'h' }, 's1', {
    type: 'control.attention.respond',
    subject: plain.id,
    data: { answer: { option: 'allow' }, surface: 'console' },
    at: T0 + 2,
  });
  /** The ack of an allow `cause`, its answer, and the resolution carrying `ends` (who decided). */
  const allowed = (request: string, cause: string, at: number, ends: Record<string, unknown>) => [
    em.emit({ type: 'control.accepted', cause, at }),
    em.emit({ type: 'attention.answered', subject: request, cause, data: { answer: { option: 'allow' } } }),
    em.emit({
      type: 'attention.resolved',
      subject: request,
      cause,
      data: { resolution: 'answered', latency_ms: 5, ...ends },
      at: at + 1,
    }),
  ];
  out.push(plain, ...allowed(plain.id, r1.id, T0 + 3, { decided_by: { identity: 'alice', surface: 'console' } }));
  const risky = em.emit({
    type: 'attention.requested',
    subject: 'Bash',
    capture: 'redacted',
    data: { kind: 'permission', options, risky: RISKY },
    at: T0 + 5,
  });
  const first = command({ agent: 'alice', host: 'h' }, 's1', { type: 'control.attention.respond', subject: risky.id });
  const second = command({ agent: 'bob', host: 'h' }, 's1', { type: 'control.attention.respond', subject: risky.id });
  out.push(
    risky,
    em.emit({
      type: 'control.accepted',
      cause: first.id,
      subject: risky.id,
      data: { status: 'pending-second', first_by: { identity: 'alice', surface: 'cli' } },
      at: T0 + 6,
    }),
    ...allowed(risky.id, second.id, T0 + 7, {
      decided_by: { identity: 'bob', surface: 'mcp' },
      first_by: { identity: 'alice', surface: 'cli' },
    }),
  );
  const i1 = command({ agent: 'alice', host: 'h' }, 's1', {
    type: instructType('claude-code'),
    data: { text: 'later' },
    capture: 'redacted',
    at: T0 + 9,
  });
  const w1 = command({ agent: 'alice', host: 'h' }, 's1', {
    type: withdrawType('claude-code'),
    data: { instruction: i1.id, surface: 'mcp' },
    at: T0 + 10,
  });
  out.push(
    em.emit({ type: 'control.accepted', cause: i1.id, at: T0 + 9 }),
    em.emit({ type: 'control.accepted', cause: w1.id, at: T0 + 11 }),
    em.emit({
      type: droppedType('claude-code'),
      cause: w1.id,
      subject: i1.id,
      data: { reason: 'withdrawn', decided_by: { identity: 'alice', surface: 'mcp' } },
      at: T0 + 11,
    }),
  );
  const held = em.emit({ type: 'attention.requested', subject: 'Bash', data: { kind: 'permission' }, at: T0 + 12 });
  out.push(
    held,
    em.emit({
      type: 'attention.timeout',
      subject: held.id,
      cause: held.id,
      data: { after_ms: 1000, decided_by: { identity: 'adapter', surface: 'timeout' } },
      at: T0 + 13,
    }),
  );
  return out;
}

test('the audit names who decided each request, who gave the first allow of a risky one, and who withdrew', async () => {
  const events = session();
  const file = join(dir, 'log.jsonl');
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const r = await auditFiles([file]);
  assert.equal(
    r.requests?.map((d) => [d.outcome, d.decidedBy?.identity, d.decidedBy?.surface, d.firstBy?.identity, d.risky]),
    [
      ['answered', 'alice', 'console', undefined, undefined],
      ['answered', 'bob', 'mcp', 'alice', 'force-push'],
      ['timeout', 'adapter', 'timeout', undefined, undefined],
    ],
  );
  const text = renderText(r);
  assert.match(text, 'answered by alice via console');
  assert.match(text, 'risky (force-push)  answered by bob via mcp, first allow by alice via cli');
  assert.match(text, 'timeout by adapter via timeout');
  assert.match(text, 'dropped (withdrawn by alice via mcp)');
});

test('decided_by is metadata: a metadata reader sees it on every end', () => {
  const ends = session().filter((e) => e.data?.['decided_by'] !== undefined);
  assert.is(ends.length, 4);
  for (const e of ends) assert.equal(downLevel(e, 'metadata').data?.['decided_by'], e.data?.['decided_by']);
});

test('pending says a risky request needs a second approver, and who gave the first allow', () => {
  const events = session();
  const cut = events.findIndex((e) => e.data?.['status'] === 'pending-second');
  const rows = pendingOf(
    events.slice(0, cut + 1).filter((e) => e.type.startsWith('attention.') || e.type === 'control.accepted'),
    T0 + 60_000,
  );
  assert.is(rows.length, 1);
  assert.equal(rows[0]?.risky, RISKY);
  assert.equal(rows[0]?.firstBy, { identity: 'alice', surface: 'cli' });
  assert.match(askedLine(rows[0]!), 'needs a second approver (first allow by alice via cli)');
  const before = pendingOf(events.slice(0, cut), T0 + 60_000);
  assert.match(askedLine(before[0]!), 'risky (force-push: a force push');
  assert.match(askedLine(before[0]!), 'an allow needs two approvers');
});

test('the board (console, MCP) lists who decided, and a held risky request with its first approver', () => {
  const events = session();
  const cut = events.findIndex((e) => e.data?.['status'] === 'pending-second');
  const board = new Board('ws://relay.example');
  for (const e of events.slice(0, cut + 1)) board.apply(e);
  const snap = board.snapshot();
  const hold = snap.sessions.find((s) => s.session === 's1')?.holds[0];
  assert.equal(hold?.risky, RISKY);
  assert.equal(hold?.firstBy, { identity: 'alice', surface: 'cli' });
  assert.equal(
    snap.decisions?.map((d) => d.decidedBy),
    [{ identity: 'alice', surface: 'console' }],
  );
});

test("respond's first allow of a risky request reads as still held, waiting for a second approver", () => {
  const e = explainRespond(
    {
      outcome: 'pending-second',
      command: 'c1',
      session: 's1',
      request: 'r1',
      ack: 'a1',
      first: { identity: 'alice', surface: 'cli' },
    },
    CLI_VOICE,
  );
  assert.match(e.text, 'Needs a second approver');
  assert.match(e.text, 'first allow (by alice via cli)');
  assert.match(e.text, 'stays held until a different identity allows it');
});

test.run();
