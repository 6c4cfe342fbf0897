import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  SessionEmitter,
  agentEvent,
  checkExtensions,
  command,
  newId,
  sourceUri,
  timestamp,
} from '../../src/protocol/build.js';
import { SteeringError } from '../../src/protocol/errors.js';
import { deliveredType, instructType } from '../../src/protocol/types.js';
import { relayCheck, validateEvent } from '../../src/protocol/validate.js';
import fc from 'fast-check';

const throwsCode = (fn: () => unknown, code: string, what: string): void => {
  assert.throws(fn, (e: unknown) => e instanceof SteeringError && e.code === code, what);
};

test('newId: ULIDs strictly increase, also within one millisecond', () => {
  const at = Date.UTC(2026, 10, 30, 10, 0, 0);
  const ids = Array.from({ length: 500 }, () => newId(at));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i]! > ids[i - 1]!, `${ids[i]} > ${ids[i - 1]}`);
  assert.ok(ids.every((id) => /^[0-9A-HJKMNP-TV-Z]{26}$/.test(id)));
  const live = Array.from({ length: 200 }, () => newId());
  for (let i = 1; i < live.length; i++) assert.ok(live[i]! > live[i - 1]!);
});

test('timestamp: RFC 3339 UTC with milliseconds', () => {
  assert.is(timestamp(Date.UTC(2026, 6, 3, 10, 15, 9, 150)), '2026-07-03T10:15:09.150Z');
  assert.match(timestamp(), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

test('sourceUri: aep://{host}/agent/{agent}/session/{session}, unsafe segments percent-encoded', () => {
  assert.is(sourceUri('claude-code', 's_8f2c', 'host-a'), 'aep://host-a/agent/claude-code/session/s_8f2c');
  assert.is(sourceUri('codex', undefined, 'host-a'), 'aep://host-a/agent/codex');
  assert.is(sourceUri('codex', 'a b/c', 'h'), 'aep://h/agent/codex/session/a%20b%2Fc');
  assert.is(sourceUri('codex', '.hidden', 'h'), 'aep://h/agent/codex/session/%2Ehidden');
  assert.is(sourceUri('codex', '50%', 'h'), 'aep://h/agent/codex/session/50%25');
  assert.is(sourceUri('codex', "it's(1)*~", 'h'), 'aep://h/agent/codex/session/it%27s%281%29%2A%7E');
  assert.is(sourceUri('codex', 'é', 'h'), 'aep://h/agent/codex/session/%C3%A9');
  assert.is(sourceUri('codex', '-x', 'h'), 'aep://h/agent/codex/session/-x');
  assert.ok(sourceUri('codex', 's').startsWith('aep://'), 'defaults to this host');
});

test('SessionEmitter: owns (epoch, seq); each event takes the next seq and is valid', () => {
  const em = new SessionEmitter({ agent: 'claude-code', session: 's1', epoch: 2, host: 'h' });
  assert.equal(em.position, { epoch: 2, seq: 0 });
  const a = em.emit({ type: 'session.started', data: { client: { name: 'claude-code' } } });
  const b = em.emit({ type: 'control.accepted', cause: 'CMD1' });
  const c = em.emit({ type: deliveredType('claude-code'), cause: 'CMD1', data: { queued_ms: 12 } });
  assert.equal([a.seq, b.seq, c.seq], [0, 1, 2]);
  assert.ok([a, b, c].every((e) => e.epoch === 2 && e.session === 's1' && e.agent === 'claude-code'));
  assert.is(a.source, 'aep://h/agent/claude-code/session/s1');
  for (const e of [a, b, c]) assert.equal(validateEvent(e), [], e.type);
  assert.ok(a.id < b.id && b.id < c.id, 'ids are monotonic');
  assert.equal(em.position, { epoch: 2, seq: 3 });
});

test('SessionEmitter: continues from startSeq; a restart takes a new epoch (D11)', () => {
  const em = new SessionEmitter({ agent: 'codex', session: 's1', epoch: 5, startSeq: 40 });
  assert.is(em.emit({ type: 'progress.status' }).seq, 40);
  assert.is(em.emit({ type: 'progress.status' }).epoch, 5);
});

test('SessionEmitter: refuses agent-scoped and command types, and keeps its position', () => {
  const em = new SessionEmitter({ agent: 'codex', session: 's1' });
  throwsCode(() => em.emit({ type: 'agent.heartbeat' }), 'EVENT_INVALID', 'agent-scoped');
  throwsCode(() => em.emit({ type: 'control.cancel', data: { scope: 'run' } }), 'EVENT_INVALID', 'command');
  throwsCode(() => em.emit({ type: 'attention.routed' }), 'EVENT_INVALID', 'foreign-emitter type');
  throwsCode(() => em.emit({ type: 'Tool.Done' }), 'EVENT_INVALID', 'grammar');
  throwsCode(() => em.emit({ type: 'progress.status', cause: '' }), 'EVENT_INVALID', 'empty cause');
  throwsCode(() => em.emit({ type: 'progress.status', traceparent: 'nope' }), 'EVENT_INVALID', 'traceparent');
  assert.is(em.emit({ type: 'progress.status' }).seq, 0, 'refused events take no position');
});

test('command: no seq, no epoch, agent = sender, source without session, session = target', () => {
  const c = command({ agent: 'aep-steer', host: 'laptop' }, 's_8f2c', {
    type: instructType('claude-code'),
    capture: 'redacted',
    data: { text: 'run the tests' },
  });
  assert.is(c.agent, 'aep-steer');
  assert.is(c.source, 'aep://laptop/agent/aep-steer');
  assert.is(c.session, 's_8f2c');
  assert.ok(!('seq' in c) && !('epoch' in c));
  assert.equal(validateEvent(c), []);
  const r = command({ agent: 'mc', source: 'aep://other/agent/mc' }, 's1', {
    type: 'control.attention.respond',
    subject: 'REQ1',
    cause: 'REQ1',
    data: { answer: { option: 'allow' } },
  });
  assert.is(r.source, 'aep://other/agent/mc');
  throwsCode(
    () => command({ agent: 'mc' }, 's1', { type: 'control.accepted' }),
    'EVENT_INVALID',
    'an ack is not a command',
  );
  throwsCode(() => command({ agent: 'mc' }, '', { type: 'control.pause' }), 'EVENT_INVALID', 'empty target session');
  throwsCode(
    () => command({ agent: 'mc', source: 'not a uri' }, 's1', { type: 'control.pause' }),
    'EVENT_INVALID',
    'bad source',
  );
});

test('agentEvent: no session, run, step or seq', () => {
  const e = agentEvent('codex', { type: 'agent.presence', data: { state: 'online' } }, 'h');
  assert.is(e.source, 'aep://h/agent/codex');
  assert.ok(!('session' in e) && !('seq' in e));
  assert.equal(validateEvent(e), []);
  throwsCode(() => agentEvent('codex', { type: 'session.started' }), 'EVENT_INVALID', 'not agent-scoped');
});

test('extension attributes: the producer refuses bad ones with an error (AEP-0001 §5.4)', () => {
  const em = new SessionEmitter({ agent: 'codex', session: 's1' });
  const ok = em.emit({ type: 'progress.status', extensions: { acmeregion: 'eu-1', acmeflag: true, acmen: 3 } });
  assert.is(ok.acmeregion, 'eu-1');
  assert.equal(validateEvent(ok), []);
  throwsCode(
    () => em.emit({ type: 'progress.status', extensions: { seq: 'x' } }),
    'EXTENSION_INVALID',
    'collides with core',
  );
  throwsCode(
    () => em.emit({ type: 'progress.status', extensions: { acme_region: 'x' } }),
    'EXTENSION_INVALID',
    'underscore',
  );
  throwsCode(
    () => em.emit({ type: 'progress.status', extensions: { acmeveryveryverylongext1: 'x' } }),
    'EXTENSION_INVALID',
    '> 20 chars',
  );
  throwsCode(
    () => em.emit({ type: 'progress.status', extensions: { acme: { k: 1 } } }),
    'EXTENSION_INVALID',
    'object value',
  );
  throwsCode(() => em.emit({ type: 'progress.status', extensions: { acme: 1.5 } }), 'EXTENSION_INVALID', 'non-integer');
  throwsCode(() => em.emit({ type: 'progress.status', extensions: { acme: null } }), 'EXTENSION_INVALID', 'null');
  assert.equal(checkExtensions(undefined), {});
  assert.is(em.position.seq, 1);
});

// Builders check only what their caller supplies (no second pass over the built envelope), so
// this property stands in for that pass: whatever a builder returns passes the relay's envelope
// check, and a builder refuses exactly when some supplied value is bad.
const pick = <T>(good: T[], bad: unknown[]) =>
  fc.oneof(
    fc.constantFrom(...good).map((v) => ({ v: v as unknown, bad: false })),
    fc.constantFrom(...bad).map((v) => ({ v, bad: true })),
  );
const field = fc.record({
  type: pick(['tool.completed', 'progress.status', 'x.acme.session.blob'], ['tool', 'Tool.Completed', 7]),
  subject: fc.option(pick(['toolu_1', 'a b'], ['', 3, null]), { nil: undefined }),
  run: fc.option(pick(['r1'], ['']), { nil: undefined }),
  step: fc.option(pick(['s1'], [false]), { nil: undefined }),
  cause: fc.option(pick(['01J00000000000000000000000'], ['']), { nil: undefined }),
  traceparent: fc.option(pick(['00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'], ['00-xyz', '']), {
    nil: undefined,
  }),
  severity: fc.option(pick(['info', 'notice', 'error'], ['loud', 1]), { nil: undefined }),
  capture: fc.option(pick(['metadata', 'full'], ['all', null]), { nil: undefined }),
  data: fc.option(pick([{ a: 1 }, {}], [[1], 'text', null]), { nil: undefined }),
  id: fc.option(pick(['01J00000000000000000000001'], ['', 5]), { nil: undefined }),
  extensions: fc.option(pick([{ tenant: 'acme' }], [{ Tenant: 'x' }, { data: 'x' }, { tenant: 1.5 }]), {
    nil: undefined,
  }),
});
test('property: a built event always passes the envelope check; a builder refuses only a bad supplied value', () => {
  fc.assert(
    fc.property(field, fc.boolean(), (spec, asCommand) => {
      const fields: Record<string, unknown> = {};
      let anyBad = false;
      for (const [k, c] of Object.entries(spec)) {
        if (c === undefined) continue;
        fields[k] = c.v;
        anyBad ||= c.bad;
      }
      if (asCommand) fields.type = spec.type.bad ? fields.type : 'x.acme.control.instruct';
      let built: unknown;
      let refused: unknown;
      try {
        built = asCommand
          ? command({ agent: 'cli', host: 'h' }, 's1', fields as never)
          : new SessionEmitter({ agent: 'claude-code', session: 's1', host: 'h' }).emit(fields as never);
      } catch (e) {
        refused = e;
      }
      if (refused !== undefined) {
        assert.ok(refused instanceof SteeringError, String(refused));
        assert.ok(anyBad, `refused good fields: ${JSON.stringify(fields)}: ${String(refused)}`);
      } else {
        assert.not.ok(anyBad, `built from a bad value: ${JSON.stringify(fields)}`);
        assert.is(relayCheck(built), undefined, JSON.stringify(built));
        assert.equal(validateEvent(built, { payloads: false, capture: false, registry: false }), []);
      }
    }),
    { numRuns: 2000 },
  );
});

test('builders refuse a bad identity once, where it is set up', () => {
  throwsCode(() => new SessionEmitter({ agent: '', session: 's', host: 'h' }), 'EVENT_INVALID', 'empty agent');
  throwsCode(() => new SessionEmitter({ agent: 'a', session: '', host: 'h' }), 'EVENT_INVALID', 'empty session');
  throwsCode(
    () => new SessionEmitter({ agent: 'a', session: 's', source: 'not a uri' }),
    'EVENT_INVALID',
    'bad source',
  );
  throwsCode(
    () => new SessionEmitter({ agent: 'a', session: 's', host: 'h', epoch: -1 }),
    'EVENT_INVALID',
    'negative epoch',
  );
  throwsCode(
    () => command({ agent: 'cli', source: 'nope' }, 's', { type: 'x.acme.control.instruct' }),
    'EVENT_INVALID',
    'bad sender source',
  );
  throwsCode(
    () => command({ agent: 'cli', host: 'h' }, '', { type: 'x.acme.control.instruct' }),
    'EVENT_INVALID',
    'empty target session',
  );
});

test.run();
