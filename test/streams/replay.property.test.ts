// Property: for arbitrary input sequences, rebuilding from the log gives the live actors' state,
// and a retried command gets its ack back byte for byte (D4, D11); sessions that end and are
// reopened by a start moment included.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ActorHost } from '../../src/streams/actor-host.js';
import { parseLog } from '../../src/streams/log.js';
import { replayInto } from '../../src/streams/replay.js';
import { commandKey } from '../../src/machines/gate.js';
import { fakeSurface } from '../support/fake-surface.js';
import { driveHost, type Driven, type HostOp } from '../support/host-drive.js';

const surface = fakeSurface();
const SESSIONS = ['s-a', 's-b'];
const TEXTS = ['tighten the tests', '', '   ', 'x'.repeat(4001), 'y'.repeat(3000), 'short'];
const HOOKS: [string, Record<string, unknown>][] = [
  ['SessionStart', { agent_id: 'sub' }],
  ['SessionStart', {}],
  ['UserPromptSubmit', {}],
  ['PreToolUse', { agent_id: 'sub' }],
  ['Stop', {}],
  ['PermissionRequest', {}],
  ['Elicitation', {}],
  ['SessionEnd', {}],
];

const opArb: fc.Arbitrary<HostOp> = fc.oneof(
  fc.record({ op: fc.constant('hook' as const), s: fc.nat(1), h: fc.nat(HOOKS.length - 1) }),
  fc.record({ op: fc.constant('instruct' as const), s: fc.nat(1), id: fc.nat(30), t: fc.nat(TEXTS.length - 1) }),
  fc.record({ op: fc.constant('retry' as const), n: fc.nat(50) }),
  fc.record({ op: fc.constant('respond' as const), s: fc.nat(1), answer: fc.nat(2) }),
  fc.record({ op: fc.constant('write' as const), ok: fc.boolean() }),
  fc.record({ op: fc.constant('timeout' as const), s: fc.nat(1) }),
);

const ANSWERS = [{ option: 'allow' }, { text: 'no, wait' }, { values: { name: 'n' } }];
const SCRIPT = { sessions: SESSIONS, texts: TEXTS, hooks: HOOKS, answers: ANSWERS };

interface Live extends Driven {
  host: ActorHost;
}

function drive(ops: readonly HostOp[]): Live {
  const host = new ActorHost({ surface, instruct: true, host: 'prop-host', attentionTimeoutMs: 1000 });
  return { host, ...driveHost(host, surface, SCRIPT, ops) };
}

const stateOf = (host: ActorHost) =>
  host
    .sessionKeys()
    .sort()
    .map((s) => ({
      s,
      value: host.stateValue(s),
      queue: host.context(s)!.queue,
      inFlight: host.context(s)!.inFlight,
      holds: host.context(s)!.holds,
      decisions: host.context(s)!.decisions,
      endedOnce: host.context(s)!.endedOnce,
    }));

test('D11: rebuilding from the log gives the live actors, and every retry gets the byte-identical ack', () => {
  let reopenedRuns = 0;
  fc.assert(
    fc.property(fc.array(opArb, { minLength: 1, maxLength: 60 }), (ops) => {
      const live = drive(ops);
      if (live.reopened) reopenedRuns += 1;
      // Through the real serialisation: the log is JSON lines.
      const text = `${live.records.map((r) => JSON.stringify(r)).join('\n')}\n`;
      const rebuilt = new ActorHost({ surface, instruct: true, host: 'prop-host', attentionTimeoutMs: 1000 });
      replayInto(rebuilt, parseLog(text).records);
      assert.equal(stateOf(rebuilt), stateOf(live.host));
      for (const c of live.commands) {
        const recorded = live.host.recordedAck(commandKey(c));
        assert.ok(recorded, 'every command has one recorded ack');
        const again = rebuilt.step({ kind: 'command', session: c.session, at: 999_999, command: c });
        assert.equal(
          again.events.map((e) => JSON.stringify(e)),
          [recorded],
        );
        assert.equal(again.effects, []);
      }
    }),
    {
      numRuns: 150,
      // A session that ends, reopens on SessionStart, and takes an instruction again.
      examples: [
        [
          [
            { op: 'hook', s: 0, h: 1 },
            { op: 'instruct', s: 0, id: 1, t: 0 },
            { op: 'hook', s: 0, h: 7 },
            { op: 'instruct', s: 0, id: 2, t: 5 },
            { op: 'hook', s: 0, h: 1 },
            { op: 'instruct', s: 0, id: 3, t: 5 },
            { op: 'retry', n: 0 },
            { op: 'hook', s: 0, h: 2 },
            { op: 'write', ok: true },
            { op: 'hook', s: 0, h: 7 },
          ],
        ],
      ],
    },
  );
  assert.ok(reopenedRuns > 0, 'some runs reopen an ended session');
});

test('a reopened session continues its positions in the same epoch and ends once on the stream', () => {
  const live = drive([
    { op: 'hook', s: 0, h: 1 },
    { op: 'hook', s: 0, h: 7 },
    { op: 'instruct', s: 0, id: 1, t: 0 },
    { op: 'hook', s: 0, h: 1 },
    { op: 'instruct', s: 0, id: 2, t: 0 },
    { op: 'hook', s: 0, h: 7 },
  ]);
  assert.ok(live.reopened);
  const events = live.records
    .flatMap((r) => (r.k === 'ev' ? [r.e] : []))
    .filter((e) => e.session === 's-a' && e.seq !== undefined);
  assert.equal(
    events.map((e) => e.seq),
    events.map((_e, i) => i),
    'one run of positions, no gap, no restart',
  );
  assert.ok(events.every((e) => e.epoch === events[0]!.epoch));
  const kinds = events.map((e) =>
    e.type === 'control.rejected' ? `rejected:${(e.data as { detail?: string }).detail}` : e.type,
  );
  assert.equal(kinds.filter((k) => k === 'session.ended').length, 1);
  assert.ok(kinds.includes('rejected:session ended'), 'refused before the reopening (D6)');
  assert.equal(kinds.filter((k) => k === 'control.accepted').length, 1, 'accepted after it');
  assert.ok(kinds.includes('x.claude-code.instruction.dropped'), 'dropped at the second end');
  assert.ok(kinds.indexOf('x.claude-code.session.reopened') < kinds.indexOf('control.accepted'));
  assert.equal(kinds.at(-1), 'x.claude-code.session.closed', 'the second end is marked closed');
});

test.run();
