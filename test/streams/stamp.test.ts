// stamp(): what a step announced, turned into events, log records and effects, asserted on what
// the function returns. Nothing outside it changes: the acks it records and the hooks it answers
// come back in the result for the host to apply.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionEmitter, eventText, type AepEvent } from '../../src/protocol/index.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import { stamp, type StampSource, type StampSurface } from '../../src/streams/stamp.js';
import type { ClassifiedHook } from '../../src/streams/surface.js';
import { fakeSurface } from '../support/fake-surface.js';
import { BY_TIMEOUT } from '../../src/machines/decided-by.js';

const AT = 1_700_000_000_000;
const input: SessionInput = { type: 'ttl.tick', at: AT, ttlMs: 1000 };
const hook: ClassifiedHook = {
  session: 's1',
  event: 'UserPromptSubmit',
  class: { kind: 'moment', eligible: true },
  observations: [],
};

function cellWith(opts: { acks?: Record<string, string>; hooks?: Record<string, ClassifiedHook>; seq?: number } = {}) {
  let built = 0;
  const emitter = new SessionEmitter({ agent: 'claude-code', session: 's1', epoch: 2, startSeq: opts.seq ?? 0 });
  const source: StampSource = {
    emitter: (session) => {
      assert.is(session, 's1');
      built += 1;
      return emitter;
    },
    ack: (key) => opts.acks?.[key],
    hook: (id) => opts.hooks?.[id],
  };
  return { cell: source, built: () => built };
}

const surface = (notice = true): StampSurface => {
  const s = fakeSurface();
  return {
    contextReply: s.contextReply.bind(s),
    decisionReply: s.decisionReply.bind(s),
    notice,
  };
};

test('an accepted command becomes one sequenced event at the step time, its ack returned byte for byte', () => {
  const { cell } = cellWith({ seq: 4 });
  const out = stamp('s1', cell, input, [{ type: 'control.accepted', cause: 'c1', key: 'k1' }], surface());
  assert.is(out.events.length, 1);
  const e = out.events[0]!;
  assert.equal([e.type, e.cause, e.session, e.epoch, e.seq], ['control.accepted', 'c1', 's1', 2, 4]);
  assert.is(Date.parse(e.time), AT);
  assert.equal(out.records, [{ k: 'ev', e, ack: 'k1' }]);
  assert.equal(out.acks, [['k1', eventText(e)]]);
  assert.equal([out.effects, out.answered], [[], []]);
});

test('a rejection carries its rule as the code attribute and its reason and detail at capture redacted', () => {
  const { cell } = cellWith();
  const out = stamp(
    's1',
    cell,
    input,
    [
      {
        type: 'control.rejected',
        cause: 'c2',
        key: 'k2',
        rejection: { reason: 'refused', detail: 'unknown session', rule: 'unknown-session' },
      },
    ],
    surface(),
  );
  const e = out.events[0]!;
  assert.equal(
    [e.type, e.capture, e.data],
    ['control.rejected', 'redacted', { reason: 'refused', detail: 'unknown session' }],
  );
  assert.is((e as AepEvent & Record<string, unknown>)['code'], 'unknown-session');
  assert.equal(
    out.acks.map(([k]) => k),
    ['k2'],
  );
});

test('a re-ack repeats the recorded ack unchanged, also one recorded earlier in the same step, and logs nothing', () => {
  const before = JSON.stringify({ id: 'old', type: 'control.accepted' });
  const { cell, built } = cellWith({ acks: { old: before } });
  const reacked = stamp('s1', cell, input, [{ type: 'control.reack', cause: 'c0', key: 'old' }], surface());
  assert.equal([reacked.events, reacked.records, reacked.acks], [[JSON.parse(before)], [], []]);
  assert.is(built(), 0, 'a re-ack takes no seq, so no emitter is built');

  const same = stamp(
    's1',
    cell,
    input,
    [
      { type: 'control.accepted', cause: 'c3', key: 'k3' },
      { type: 'control.reack', cause: 'c3', key: 'k3' },
    ],
    surface(),
  );
  assert.is(same.events.length, 2);
  assert.equal(same.events[1], JSON.parse(eventText(same.events[0]!)));
  assert.is(same.records.length, 1);
});

test('a steering reply takes its open hook once: confirmed, with the notice; a second answer for it throws', () => {
  const { cell } = cellWith({ hooks: { h1: hook } });
  const ctx: SessionOutput[] = [
    { type: 'journal.inflight', hookId: 'h1', ids: ['c1'] },
    { type: 'reply.context', hookId: 'h1', text: 'run the tests', ids: ['c1'], from: ['ops'] },
  ];
  const out = stamp('s1', cell, input, ctx, surface());
  assert.equal(out.records, [{ k: 'flight', s: 's1', hook: 'h1', ids: ['c1'] }]);
  assert.equal(out.effects, [
    {
      kind: 'reply',
      session: 's1',
      hookId: 'h1',
      reply: {
        body: { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'run the tests' } },
      },
      confirm: true,
    },
  ]);
  assert.equal([out.events, out.answered], [[], ['h1']]);
  assert.throws(
    () => stamp('s1', cell, input, [...ctx, { type: 'reply.neutral', hookId: 'h1' }], surface()),
    /no open hook h1/,
  );
});

test('a neutral answer takes its open hook and leaves the reply to the hook itself', () => {
  const { cell } = cellWith({ hooks: { h1: hook } });
  const out = stamp('s1', cell, input, [{ type: 'reply.neutral', hookId: 'h1' }], surface());
  assert.equal(out.effects, [{ kind: 'neutral', session: 's1', hookId: 'h1' }]);
  assert.equal([out.answered, out.events, out.records], [['h1'], [], []]);
  assert.throws(
    () => stamp('s1', cell, input, [{ type: 'reply.neutral', hookId: 'gone' }], surface()),
    /no open hook gone/,
  );
});

test('the notice rides the context reply only when the surface asks for it', () => {
  const seen: unknown[] = [];
  const s: StampSurface = {
    ...surface(false),
    contextReply: (_h, _t, notice) => {
      seen.push(notice);
      return { body: {} };
    },
  };
  const { cell } = cellWith({ hooks: { h1: hook } });
  stamp('s1', cell, input, [{ type: 'reply.context', hookId: 'h1', text: 't', ids: ['a', 'b'], from: ['ops'] }], s);
  stamp('s1', cell, input, [{ type: 'reply.context', hookId: 'h1', text: 't', ids: ['a', 'b'], from: ['ops'] }], {
    ...s,
    notice: true,
  });
  assert.equal(seen, [undefined, { count: 2, from: ['ops'] }]);
});

test('a decision for a hook no longer open writes nothing; holds, sends and cancels become effects', () => {
  const { cell } = cellWith();
  const out = stamp(
    's1',
    cell,
    input,
    [
      { type: 'reply.decision', hookId: 'gone' },
      { type: 'reply.hold', hookId: 'h2', requestId: 'r1', timeoutMs: 500 },
      { type: 'input.send', cause: 'c4', text: 'hello', delivery: 'queue' },
      { type: 'run.cancel', cause: 'c5' },
    ],
    surface(),
  );
  assert.equal(out.effects, [
    { kind: 'hold', session: 's1', hookId: 'h2', requestId: 'r1', timeoutMs: 500 },
    { kind: 'lane', session: 's1', call: { verb: 'send', commandId: 'c4', text: 'hello', delivery: 'queue' } },
    { kind: 'lane', session: 's1', call: { verb: 'interrupt', commandId: 'c5' } },
  ]);
  assert.equal([out.events, out.records, out.answered], [[], [], []]);
});

test("stamped events follow the step's observations, continuing the emitter's seq", () => {
  const { cell } = cellWith({ seq: 7 });
  const prior: AepEvent[] = [];
  const out = stamp(
    's1',
    cell,
    input,
    [
      { type: 'session.ended', reason: 'normal', resumeWindowMs: 60_000 },
      { type: 'attention.timeout', subject: 'r1', cause: 'h9', afterMs: 500, decidedBy: BY_TIMEOUT },
    ],
    surface(),
    prior,
  );
  assert.is(out.events, prior, 'appended to the events the step already holds');
  assert.equal(
    out.events.map((e) => [e.type, e.seq]),
    [
      ['session.ended', 7],
      ['attention.timeout', 8],
    ],
  );
  assert.is((out.events[0] as AepEvent & Record<string, unknown>)['resumewindowms'], 60_000);
});

test.run();
