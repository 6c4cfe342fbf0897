// Sessions kept as data (state value + context, stepped through the machine's transition) and
// sessions run as live actors (under inspection) must be indistinguishable from outside: same
// records, events, effects and state for any input sequence.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import type { InspectionEvent } from 'xstate';
import { ActorHost } from '../../src/streams/actor-host.js';
import type { SessionItem } from '../../src/streams/step-types.js';
import { command } from '../../src/protocol/index.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { driveHost, type HostOp } from '../support/host-drive.js';
import { instructCmd } from '../support/session-steps.js';

const surface = fakeSurface();
const SESSIONS = ['s-a', 's-b'];
const TEXTS = ['run the linter', '', 'z'.repeat(4001), 'w'.repeat(6000), 'ok'];
const HOOKS: [string, Record<string, unknown>][] = [
  ['SessionStart', {}],
  ['SessionStart', { agent_id: 'sub' }],
  ['UserPromptSubmit', {}],
  ['PostToolUse', {}],
  ['PermissionRequest', {}],
  ['Elicitation', {}],
  ['SessionEnd', {}],
  ['TeammateIdle', {}],
];

const opArb: fc.Arbitrary<HostOp> = fc.oneof(
  fc.record({ op: fc.constant('hook' as const), s: fc.nat(1), h: fc.nat(HOOKS.length - 1) }),
  fc.record({ op: fc.constant('instruct' as const), s: fc.nat(1), id: fc.nat(25), t: fc.nat(TEXTS.length - 1) }),
  fc.record({ op: fc.constant('retry' as const), n: fc.nat(40) }),
  fc.record({ op: fc.constant('respond' as const), s: fc.nat(1), answer: fc.nat(1) }),
  fc.record({ op: fc.constant('write' as const), ok: fc.boolean() }),
  fc.record({ op: fc.constant('timeout' as const), s: fc.nat(1) }),
  fc.constant({ op: 'recover' as const }),
);

const SENDER = { agent: 'tester', host: 'test-host' };

/** Runs the ops; returns everything the host put out, as text. */
function drive(host: ActorHost, ops: readonly HostOp[]): string[] {
  const out: string[] = [];
  driveHost(
    host,
    surface,
    {
      sessions: SESSIONS,
      texts: TEXTS,
      hooks: HOOKS,
      answers: [{ option: 'allow' }, { text: 'not now' }],
      start: 5_004,
      // Commands are stamped at the step's time, not the wall clock, so two runs send equal ones.
      instruct: (id, text, session, at) =>
        command(SENDER, session, { type: surface.steeringType, id, at, data: { text }, capture: 'redacted' }),
      respond: (id, subject, answer, session, at) =>
        command(SENDER, session, {
          type: 'control.attention.respond',
          id,
          at,
          subject,
          cause: subject,
          data: { answer },
        }),
      onStep: (r) => out.push(JSON.stringify(r)),
    },
    ops,
  );
  out.push(
    JSON.stringify(host.views()),
    JSON.stringify(host.sessionKeys().map((s) => [host.stateValue(s), host.context(s)])),
  );
  return out;
}

/** Ids are minted fresh (ULIDs); name them by order of first appearance so two runs compare. */
function canonical(lines: readonly string[]): string[] {
  const names = new Map<string, string>();
  return lines.map((l) =>
    l.replace(/[0-9A-HJKMNP-TV-Z]{26}/g, (id) => {
      if (!names.has(id)) names.set(id, `#${names.size}`);
      return names.get(id)!;
    }),
  );
}

test('a session kept as data steps exactly like a live actor', () => {
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 50 }), (ops) => {
      const inspected: InspectionEvent[] = [];
      const data = drive(new ActorHost({ surface, instruct: true, host: 'h', attentionTimeoutMs: 500 }), ops);
      const actors = new ActorHost({
        surface,
        instruct: true,
        host: 'h',
        attentionTimeoutMs: 500,
        inspect: (e) => inspected.push(e),
      });
      const live = drive(actors, ops);
      const spawned = actors.sessionKeys().length > 0;
      actors.stop();
      assert.equal(canonical(data), canonical(live));
      // Every hook but an end-only invocation's (D37: not a session) spawns an actor.
      if (spawned) assert.ok(inspected.length > 0, 'the inspector saw the actors');
    }),
    { numRuns: 120 },
  );
});

test('positions continue across steps: one run of seqs per session, epoch from replay', () => {
  const host = new ActorHost({ surface, instruct: true, host: 'h' });
  host.restoreEvent(
    {
      aep: '0.1',
      id: 'x',
      type: 'session.started',
      time: '2026-01-01T00:00:00Z',
      source: 'aep://h/agent/claude-code/session/s-a',
      agent: 'claude-code',
      session: 's-a',
      seq: 4,
      epoch: 2,
    },
    undefined,
  );
  const seen: [number | undefined, number | undefined][] = [];
  const take = (item: SessionItem) =>
    seen.push(...host.step(item).events.map((e): [number | undefined, number | undefined] => [e.epoch, e.seq]));
  take({ kind: 'hook', session: 's-a', hookId: 'h1', at: 1, hook: surface.classify(hookBody('SessionStart', 's-a')) });
  take({ kind: 'command', session: 's-a', at: 2, command: instructCmd('c1', 'one', 's-a') });
  take({ kind: 'command', session: 's-a', at: 3, command: instructCmd('c2', 'two', 's-a') });
  assert.equal(seen, [
    [3, 0],
    [3, 1],
    [3, 2],
  ]);
});

test.run();
