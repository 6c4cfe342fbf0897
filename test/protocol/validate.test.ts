import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SteeringError } from '../../src/protocol/errors.js';
import { assertEvent, relayCheck, validateEvent, type IssueRule } from '../../src/protocol/validate.js';

const base = {
  aep: '0.1',
  id: '01JX0000000000000000000001',
  type: 'progress.status',
  time: '2026-07-03T10:00:00Z',
  source: 'aep://h/agent/a/session/s1',
  agent: 'a',
  session: 's1',
  seq: 0,
};
const ev = (over: Record<string, unknown>, drop: string[] = []): Record<string, unknown> => {
  const e: Record<string, unknown> = { ...base, ...over };
  for (const k of drop) delete e[k];
  return e;
};
const rules = (e: unknown, opts?: Parameters<typeof validateEvent>[1]): IssueRule[] =>
  validateEvent(e, opts).map((i) => i.rule);
const only = (e: unknown, rule: IssueRule, path?: string): void => {
  const issues = validateEvent(e);
  assert.equal(
    issues.map((i) => i.rule),
    [rule],
    JSON.stringify(issues),
  );
  if (path !== undefined) assert.is(issues[0]!.path, path);
};

test('a minimal session event is valid', () => {
  assert.equal(validateEvent(base), []);
});

test('not-an-object: arrays, null and scalars', () => {
  for (const v of [null, [], 'x', 3, undefined]) assert.equal(rules(v), ['not-an-object']);
});

test('version: aep must be "0.1"', () => {
  only(ev({ aep: '0.2' }), 'version', 'aep');
  only(ev({}, ['aep']), 'version');
});

test('required: id, type, time, source, agent', () => {
  for (const a of ['id', 'type', 'time', 'source', 'agent']) only(ev({}, [a]), 'required', a);
});

test('attr-type: empty strings, null attributes, bad seq/epoch, non-object data', () => {
  only(ev({ id: '' }), 'attr-type', 'id');
  only(ev({ subject: null }), 'attr-type', 'subject');
  only(ev({ run: '' }), 'attr-type', 'run');
  only(ev({ cause: 7 }), 'attr-type', 'cause');
  only(ev({ seq: -1 }), 'attr-type', 'seq');
  only(ev({ seq: 1.5 }), 'attr-type', 'seq');
  only(ev({ epoch: '1' }), 'attr-type', 'epoch');
  only(ev({ data: [] }), 'attr-type', 'data');
  only(ev({ data: null }), 'attr-type', 'data');
});

test('type-syntax: 13 categories or x.{vendor}.{category}.{rest}', () => {
  for (const t of [
    'tool',
    'banana.peeled',
    'tool.Completed',
    'x.acme.foo',
    'x.Acme.session.y',
    'session.',
    '.session.started',
  ])
    only(ev({ type: t }), 'type-syntax', 'type');
  for (const t of ['x.claude-code.control.instruct', 'x.acme.session.config_change', 'x.a_b.c.d.e']) {
    const cmd = t.includes('.control.')
      ? ev({ type: t, data: { text: 'x' }, capture: 'redacted' }, ['seq'])
      : ev({ type: t });
    assert.equal(validateEvent(cmd), [], t);
  }
});

test('format: time needs a timezone, source must be a URI, traceparent the W3C form', () => {
  only(ev({ time: '2026-07-03T10:00:00' }), 'format', 'time');
  only(ev({ time: '2026-07-03 10:00:00Z' }), 'format', 'time');
  only(ev({ time: '2026-02-30T10:00:00Z' }), 'format', 'time');
  only(ev({ time: '2026-07-03T25:00:00Z' }), 'format', 'time');
  for (const t of ['2026-07-03T10:00:00+02:00', '2026-07-03t10:00:00.123456z', '2024-02-29T23:59:60Z'])
    assert.equal(validateEvent(ev({ time: t })), [], t);
  only(ev({ source: 'adapter-a' }), 'format', 'source');
  only(ev({ source: 'aep://h/agent/a b' }), 'format', 'source');
  only(ev({ source: 'aep://h/agent/%zz' }), 'format', 'source');
  assert.equal(validateEvent(ev({ source: 'urn:uuid:1234' })), []);
  only(ev({ traceparent: 'not-a-traceparent' }), 'format', 'traceparent');
  assert.equal(validateEvent(ev({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' })), []);
});

test('enum: severity and capture', () => {
  only(ev({ severity: 'fatal' }), 'enum', 'severity');
  only(ev({ capture: 'secret' }), 'enum', 'capture');
});

test('scoping: agent-scoped omit session/run/step/seq', () => {
  const agent = ev({ type: 'agent.heartbeat' }, ['session', 'seq']);
  assert.equal(validateEvent(agent), []);
  only({ ...agent, session: 's1' }, 'scoping', 'session');
  only({ ...agent, run: 'r1' }, 'scoping', 'run');
  only({ ...agent, step: '1' }, 'scoping', 'step');
  only({ ...agent, seq: 0 }, 'scoping', 'seq');
});

test('scoping: commands and attention.routed carry session and omit seq', () => {
  const cmd = ev({ type: 'control.pause' }, ['seq']);
  assert.equal(validateEvent(cmd), []);
  only({ ...cmd, seq: 1 }, 'scoping', 'seq');
  only(ev({ type: 'control.pause' }, ['seq', 'session']), 'scoping', 'session');
  only(ev({ type: 'attention.routed', subject: 'R1' }), 'scoping', 'seq');
  only(ev({ type: 'x.codex.control.instruct', capture: 'redacted', data: { text: 'x' } }), 'scoping', 'seq');
});

test('scoping: everything else carries session and seq (acks included)', () => {
  only(ev({}, ['seq']), 'scoping', 'seq');
  only(ev({}, ['session']), 'scoping', 'session');
  only(ev({ type: 'control.accepted', cause: 'C1' }, ['seq']), 'scoping', 'seq');
  only(ev({ type: 'x.codex.instruction.delivered', data: { queued_ms: 1 } }, ['seq']), 'scoping', 'seq');
});

test('extension-name and extension-value', () => {
  only(ev({ acme_ext: 'v' }), 'extension-name', 'acme_ext');
  only(ev({ acmeveryveryverylongext1: 'v' }), 'extension-name');
  only(ev({ Acme: 'v' }), 'extension-name');
  only(ev({ acmemeta: { k: 1 } }), 'extension-value', 'acmemeta');
  only(ev({ acmemeta: null }), 'extension-value');
  only(ev({ acmemeta: 1.5 }), 'extension-value');
  assert.equal(validateEvent(ev({ acmeregion: 'eu-1', acmeflag: false, acmen: 3 })), []);
});

test('unregistered-type: core-namespace types outside the registry; opt out with registry:false', () => {
  only(ev({ type: 'tool.exploded' }), 'unregistered-type', 'type');
  assert.equal(rules(ev({ type: 'tool.exploded' }), { registry: false }), []);
  assert.equal(validateEvent(ev({ type: 'message.user.submitted' })), [], 'reserved types are registered');
});

test('payload: per-type payload rules, path under data; opt out with payloads:false', () => {
  only(ev({ type: 'agent.presence', data: { state: 'sleeping' } }, ['session', 'seq']), 'payload', 'data.state');
  only(ev({ type: 'tool.completed', data: {} }), 'payload', 'data.tool');
  only(ev({ type: 'tool.completed' }), 'payload', 'data.tool');
  only(
    ev({ type: 'x.codex.control.instruct', capture: 'redacted', data: { note: 'x' } }, ['seq']),
    'payload',
    'data.text',
  );
  assert.equal(rules(ev({ type: 'tool.completed' }), { payloads: false }), []);
});

test('capture-violation: a field above the declared capture; opt out with capture:false', () => {
  const instruct = ev({ type: 'x.claude-code.control.instruct', data: { text: 'secret plan' } }, ['seq']);
  only(instruct, 'capture-violation', 'data.text');
  assert.equal(validateEvent({ ...instruct, capture: 'redacted' }), []);
  assert.equal(rules(instruct, { capture: false }), []);
  only(
    ev({ type: 'tool.completed', capture: 'redacted', data: { tool: { name: 'Bash' }, result: 'verbatim' } }),
    'capture-violation',
    'data.result',
  );
  only(
    ev({ type: 'tool.failed', data: { tool: { name: 'Bash' }, error: { message: 'x' } } }),
    'capture-violation',
    'data.error.message',
  );
  only(
    ev({ type: 'resource.retrieval.returned', data: { documents: [{ id: 'd' }, { id: 'e', content: 'x' }] } }),
    'capture-violation',
    'data.documents[1].content',
  );
  only(ev({ type: 'x.acme.session.blob', capture: 'none', data: { a: 1 } }), 'capture-violation', 'data.a');
  assert.equal(
    validateEvent(ev({ type: 'x.acme.session.blob', data: { anything: 'x' } })),
    [],
    'unannotated fields are metadata',
  );
});

test('relayCheck: envelope tier only, first failure, no payload or capture rules', () => {
  assert.is(relayCheck(base), undefined);
  assert.is(relayCheck(null)?.rule, 'not-an-object');
  assert.is(relayCheck(ev({}, ['id']))?.rule, 'required');
  assert.is(relayCheck(ev({ type: 'tool.completed' })), undefined, 'payloads are not read at ingest');
  assert.is(
    relayCheck(ev({ type: 'x.codex.control.instruct', data: { text: 'x' } }, ['seq'])),
    undefined,
    'capture honesty is not checked at ingest',
  );
  assert.is(relayCheck(ev({ type: 'tool.exploded' })), undefined, 'consumers tolerate unknown types');
  assert.is(relayCheck(ev({ type: 'banana.peeled' }))?.rule, 'type-syntax');
});

test('relayCheck answers exactly what the full envelope check answers first, on valid and broken frames alike', () => {
  const envelopeFirst = (e: unknown) => validateEvent(e, { payloads: false, capture: false, registry: false })[0];
  const values: unknown[] = [
    undefined,
    null,
    '',
    'x',
    0,
    -1,
    1.5,
    7,
    true,
    {},
    [],
    'aep://h/a',
    '2026-07-03T10:00:00Z',
  ];
  const times = [
    '2026-07-03T10:00:00Z',
    '2026-07-03t10:00:00.123z',
    '2026-02-29T10:00:00Z',
    '2024-02-29T10:00:00Z',
    '2026-13-01T10:00:00Z',
    '2026-07-32T10:00:00Z',
    '2026-07-03T24:00:00Z',
    '2026-07-03T10:60:00Z',
    '2026-07-03T10:00:60Z',
    '2026-07-03T10:00:61Z',
    '2026-07-03T10:00:00.Z',
    '2026-07-03T10:00:00+02:00',
    '2026-07-03T10:00:00-25:00',
    '2026-07-03 10:00:00Z',
    '2026-7-03T10:00:00Z',
    '2026-07-03T10:00:00',
    '2026-07-03T10:00:00ZZ',
    '２０26-07-03T10:00:00Z',
    '2026-07-03T1a:00:00Z',
    '1900-02-29T00:00:00Z',
    '2000-02-29T00:00:00Z',
  ];
  const types = [
    'progress.status',
    'agent.presence',
    'control.cancel',
    'x.codex.control.instruct',
    'attention.routed',
    'banana.peeled',
    'x.a.b',
    'tool.exploded',
  ];
  const cases: unknown[] = [base, null, [], 'text'];
  for (const t of times) cases.push(ev({ time: t }));
  for (const type of types) {
    cases.push(
      ev({ type }),
      ev({ type }, ['seq']),
      ev({ type }, ['session', 'seq']),
      ev({ type, run: 'r' }, ['session', 'seq']),
    );
  }
  for (const attr of [
    'aep',
    'id',
    'type',
    'time',
    'source',
    'agent',
    'subject',
    'session',
    'run',
    'step',
    'cause',
    'seq',
    'epoch',
    'traceparent',
    'severity',
    'capture',
    'data',
    'ext1',
    'Bad-Name',
    'averyveryverylongname1',
  ]) {
    cases.push(ev({}, [attr]));
    for (const v of values) cases.push(ev({ [attr]: v }));
  }
  cases.push(
    ev({
      severity: 'notice',
      capture: 'redacted',
      traceparent: '00-0123456789abcdef0123456789abcdef-0123456789abcdef-01',
      data: { a: 1 },
      ext: 'x',
      flag: false,
      n: 3,
    }),
  );
  cases.push(
    ev({ traceparent: '00-0123456789ABCDEF0123456789abcdef-0123456789abcdef-01' }),
    ev({ source: 'not a uri' }),
    ev({ source: 'aep://h/%zz' }),
  );
  // Twice each: the second pass meets the remembered types, sources and names.
  for (const round of [1, 2]) {
    for (const e of cases) assert.equal(relayCheck(e), envelopeFirst(e), `round ${round}: ${JSON.stringify(e)}`);
  }
});

test('assertEvent: throws EVENT_INVALID naming the rule', () => {
  assertEvent(base);
  assert.throws(
    () => assertEvent(ev({ seq: -1 })),
    (e: unknown) => e instanceof SteeringError && e.code === 'EVENT_INVALID' && e.message.startsWith('attr-type:'),
  );
  assert.throws(
    () => assertEvent(ev({ aep: '9', id: '' })),
    (e: unknown) => e instanceof SteeringError && /\(\+1 more\)/.test(e.message),
  );
});

test.run();
