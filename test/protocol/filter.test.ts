import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { FilterError } from '../../src/protocol/errors.js';
import { compileFilter, parseFilterParam } from '../../src/protocol/filter.js';

const ev = (over: Partial<AepEvent>): AepEvent => ({
  aep: '0.1',
  id: 'E1',
  type: 'tool.completed',
  time: '2026-07-03T10:00:00Z',
  source: 'aep://h/agent/a/session/s1',
  agent: 'a',
  ...over,
});
const refused = (spec: unknown, why: RegExp): void => {
  assert.throws(
    () => compileFilter(spec),
    (e: unknown) => e instanceof FilterError && e.code === 'invalid-filter' && why.test(e.message),
    JSON.stringify(spec),
  );
};

test('type: exact, prefix.* patterns and arrays mixing both', () => {
  const f = compileFilter({ type: ['x.codex.instruction.*', 'control.accepted'] });
  assert.ok(f(ev({ type: 'x.codex.instruction.delivered' })));
  assert.ok(f(ev({ type: 'control.accepted' })));
  assert.not.ok(f(ev({ type: 'control.rejected' })));
  assert.not.ok(compileFilter({ type: 'attention.*' })(ev({ type: 'attention' })), 'p.* needs something after p.');
  assert.ok(compileFilter({ type: 'x.*' })(ev({ type: 'x.acme.a.b' })));
});

test('severity: gte/lte bands over the severity order; absent severity is info', () => {
  const f = compileFilter({ severity: { lte: 'notice' } });
  assert.ok(f(ev({})));
  assert.ok(f(ev({ severity: 'debug' })));
  assert.not.ok(f(ev({ severity: 'warning' })));
  assert.ok(compileFilter({ severity: ['info', 'error'] })(ev({})));
});

test('defaults: capture is metadata and epoch 0 when absent; other absent attributes never match', () => {
  assert.ok(compileFilter({ capture: 'metadata' })(ev({})));
  assert.not.ok(compileFilter({ capture: 'redacted' })(ev({})));
  assert.ok(compileFilter({ epoch: [0, 1] })(ev({})));
  assert.not.ok(compileFilter({ session: 's1' })(ev({})));
  assert.not.ok(compileFilter({ acmeregion: 'eu' })(ev({})));
});

test('values compare exactly, no coercion', () => {
  assert.not.ok(compileFilter({ epoch: '0' })(ev({ epoch: 0 })));
  assert.not.ok(compileFilter({ acmeflag: 'true' })(ev({ acmeflag: true })));
  assert.ok(compileFilter({ acmeflag: true })(ev({ acmeflag: true })));
});

test('fail closed: every refused form names why', () => {
  refused(null, /JSON object/);
  refused([], /JSON object/);
  refused({ seq: 1 }, /not filterable/);
  refused({ traceparent: 'x' }, /not filterable/);
  refused({ 'bad-key': 1 }, /extension name/);
  refused({ type: '*' }, /type pattern/);
  refused({ type: 'attention*' }, /type pattern/);
  refused({ type: ['tool.completed', 'a.*.b'] }, /type pattern/);
  refused({ session: 's*' }, /type only/);
  refused({ severity: { gt: 'info' } }, /not a severity operator/);
  refused({ severity: {} }, /gte/);
  refused({ severity: { gte: 'fatal' } }, /not a severity level/);
  refused({ severity: 'fatal' }, /not a severity level/);
  refused({ capture: 'secret' }, /not a capture level/);
  refused({ agent: [] }, /must not be empty/);
  refused({ agent: { eq: 'a' } }, /severity only/);
  refused({ agent: [['a']] }, /string, integer or boolean/);
  refused({ epoch: 1.5 }, /string, integer or boolean/);
  refused({ agent: null }, /string, integer or boolean/);
});

test('parseFilterParam: absent means {}, bad JSON is a FilterError', () => {
  assert.ok(parseFilterParam(null)(ev({})));
  assert.ok(parseFilterParam('')(ev({})));
  assert.ok(parseFilterParam('{"agent":"a"}')(ev({})));
  assert.throws(
    () => parseFilterParam('{agent:'),
    (e: unknown) => e instanceof FilterError && /JSON/.test(e.message),
  );
  assert.throws(
    () => parseFilterParam('"x"'),
    (e: unknown) => e instanceof FilterError,
  );
});

test.run();
