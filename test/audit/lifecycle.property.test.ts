// Property (D36): whatever lifecycle the adapter lives through, the audit of the log it wrote
// finds nothing. The real vendor tables (Claude Code, Codex) classify the hooks, the real session
// host steps the machines, the log goes to disk as JSON lines and `auditFiles` reads it back.
// Generated: resume windows, TTLs, held loops (answered, timed out, ended), failed reply writes,
// restarts, ends and resumed runs, and time passing in between.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { surfaceFor } from '../../src/adapters/registry.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import { command, type AepCommand } from '../../src/protocol/index.js';
import { driveHost, type HostOp } from '../support/host-drive.js';

const SESSIONS = ['s-a', 's-b'];
const TEXTS = ['tighten the tests', '', 'x'.repeat(4001), 'short'];
const HOOKS: [string, Record<string, unknown>][] = [
  ['SessionStart', { source: 'startup' }],
  ['UserPromptSubmit', { prompt: 'go' }],
  ['PreToolUse', { tool_name: 'Bash', tool_input: { command: 'ls' } }],
  ['PostToolUse', { tool_name: 'Bash', tool_input: { command: 'ls' }, tool_response: 'ok' }],
  ['Stop', {}],
  ['PermissionRequest', { tool_name: 'Bash', tool_input: { command: 'rm -rf build' } }],
  ['PreToolUse', { tool_name: 'Task', agent_id: 'sub-1' }],
  ['SessionEnd', { reason: 'other' }],
];
const ANSWERS = [{ option: 'allow' }, { option: 'deny' }, { text: 'no, wait' }];

const opArb: fc.Arbitrary<HostOp> = fc.oneof(
  { arbitrary: fc.record({ op: fc.constant('hook' as const), s: fc.nat(1), h: fc.nat(HOOKS.length - 1) }), weight: 6 },
  {
    arbitrary: fc.record({
      op: fc.constant('instruct' as const),
      s: fc.nat(1),
      id: fc.nat(40),
      t: fc.nat(TEXTS.length - 1),
    }),
    weight: 5,
  },
  fc.record({ op: fc.constant('retry' as const), n: fc.nat(50) }),
  fc.record({ op: fc.constant('respond' as const), s: fc.nat(1), answer: fc.nat(ANSWERS.length - 1) }),
  { arbitrary: fc.record({ op: fc.constant('write' as const), ok: fc.boolean() }), weight: 3 },
  fc.record({ op: fc.constant('timeout' as const), s: fc.nat(1) }),
  fc.record({ op: fc.constant('tick' as const), s: fc.nat(1) }),
  fc.record({ op: fc.constant('ttl' as const), s: fc.nat(1) }),
  { arbitrary: fc.record({ op: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 600 }) }), weight: 2 },
  { arbitrary: fc.constant({ op: 'recover' as const }), weight: 1 },
);

const runArb = fc.record({
  vendor: fc.constantFrom('claude-code', 'codex'),
  windowMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 500 })),
  ttlMs: fc.oneof(fc.constant(undefined), fc.integer({ min: 20, max: 400 })),
  ops: fc.array(opArb, { minLength: 1, maxLength: 80, size: 'large' }),
});

const dir = process.env.AUDIT_PROP_DIR ?? mkdtempSync(join(tmpdir(), 'aep-audit-prop-'));

interface Run {
  vendor: string;
  windowMs: number;
  ttlMs: number | undefined;
  ops: HostOp[];
}

async function auditOf(run: Run, n: number) {
  const surface = surfaceFor(run.vendor)!;
  const host = new ActorHost({
    surface,
    instruct: true,
    host: 'prop-host',
    attentionTimeoutMs: 300,
    resumeWindowMs: run.windowMs,
  });
  const sender = { agent: 'carol', host: 'console' };
  const sent = new Map<string, AepCommand>();
  const driven = driveHost(
    host,
    surface,
    {
      sessions: SESSIONS,
      texts: TEXTS,
      hooks: HOOKS,
      answers: ANSWERS,
      start: 1_750_000_000_000,
      ...(run.ttlMs === undefined ? {} : { ttlMs: run.ttlMs }),
      // A sender reuses an id only to retry: the same id is the same command, byte for byte.
      instruct: (id, text, session, at) => {
        const key = `${id}-${session}`;
        if (!sent.has(key))
          sent.set(
            key,
            command(sender, session, { type: surface.steeringType, id: key, data: { text }, capture: 'redacted', at }),
          );
        return sent.get(key)!;
      },
      respond: (id, subject, answer, session, at) =>
        command(sender, session, {
          type: 'control.attention.respond',
          id,
          subject,
          cause: subject,
          data: { answer },
          at,
        }),
    },
    run.ops,
  );
  host.stop();
  const file = join(dir, `run-${n}.jsonl`);
  writeFileSync(
    file,
    driven.records.map((r) => JSON.stringify(r)).join('\n') + (driven.records.length > 0 ? '\n' : ''),
  );
  return { result: await auditFiles([file]), driven, file };
}

test('D36: the audit of any log the adapter wrote reports no violation', async () => {
  let n = 0;
  const seen = { windowAccepted: 0, expired: 0, reopened: 0, held: 0 };
  await fc.assert(
    fc.asyncProperty(runArb, async (run) => {
      const { result, driven, file } = await auditOf(run, n++);
      if (result.violations.length > 0 && process.env.AUDIT_PROP_DIR !== undefined)
        console.error(file, JSON.stringify(result.violations));
      assert.equal(
        result.violations,
        [],
        `${run.vendor} window ${run.windowMs} ttl ${run.ttlMs}: ${JSON.stringify(result.violations)}`,
      );
      const events = driven.records.flatMap((r) => (r.k === 'ev' ? [r.e] : []));
      if (driven.reopened) seen.reopened += 1;
      if (events.some((e) => e.type.endsWith('.instruction.dropped') && e.data?.['reason'] === 'expired'))
        seen.expired += 1;
      if (events.some((e) => e.type === 'attention.requested')) seen.held += 1;
      const endedAt = new Map<string, number>();
      for (const e of events) {
        if (e.type === 'session.ended' && typeof e['resumewindowms'] === 'number')
          endedAt.set(e.session!, Date.parse(e.time));
        if (e.type === 'control.accepted' && endedAt.has(e.session!)) seen.windowAccepted += 1;
        if (e.type.endsWith('.session.reopened')) endedAt.delete(e.session!);
      }
    }),
    {
      numRuns: 400,
      verbose: 1,
      examples: [
        [
          {
            // Codex between two `codex exec` runs: accepted inside the window, delivered on resume.
            vendor: 'codex',
            windowMs: 400,
            ttlMs: undefined,
            ops: [
              { op: 'hook', s: 0, h: 0 },
              { op: 'hook', s: 0, h: 1 },
              { op: 'hook', s: 0, h: 4 },
              { op: 'hook', s: 0, h: 7 },
              { op: 'instruct', s: 0, id: 1, t: 0 },
              { op: 'hook', s: 0, h: 0 },
              { op: 'write', ok: true },
              { op: 'hook', s: 0, h: 7 },
              { op: 'instruct', s: 0, id: 2, t: 3 },
              { op: 'wait', ms: 500 },
              { op: 'tick', s: 0 },
              { op: 'instruct', s: 0, id: 3, t: 3 },
            ],
          },
        ],
      ],
    },
  );
  // The generator reaches the cases the rules are about.
  assert.ok(seen.windowAccepted > 0, 'some runs accept inside a resume window');
  assert.ok(seen.expired > 0, 'some runs expire instructions by TTL');
  assert.ok(seen.reopened > 0, 'some runs resume an ended session');
  assert.ok(seen.held > 0, 'some runs hold a permission request');
});

test.after(() => {
  if (process.env.AUDIT_PROP_DIR === undefined) rmSync(dir, { recursive: true, force: true });
});

test.run();
