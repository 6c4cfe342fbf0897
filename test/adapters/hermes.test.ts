// The Hermes table tested as data. No Hermes runs here, so hook inputs are the AEP mapping
// fixture's (derived from the pinned vendor source) and moments follow the design record: the one
// delivery moment is pre_llm_call, the drop moment on_session_finalize, and an opt-in gated
// pre_tool_call answers with the deny decision only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hermes, hermesGateMatches } from '../../src/adapters/hermes.js';
import { surfaceFor } from '../../src/adapters/registry.js';
import { surfaceFrom } from '../../src/adapters/table.js';
import type { HookClass } from '../../src/streams/surface.js';
import { evidenceProblem, fixtureCases, schemaProblem } from '../support/mapping-fixture.js';
import { aepFile, readJson } from '../support/shared-dir.js';

type Input = Record<string, unknown>;
const fixture = readJson<{ hooks: Record<string, { input: Input }> }>(aepFile('fixtures', 'mappings', 'hermes.json'));
const inputs = Object.fromEntries(Object.entries(fixture.hooks).map(([k, v]) => [k, v.input]));
const surface = surfaceFrom(hermes);

const summary = (c: HookClass): string =>
  c.kind === 'moment' ? (c.eligible ? 'eligible' : 'ineligible') : c.kind === 'held' ? `held:${c.hold}` : 'end';

function withEnv<T>(env: Record<string, string | undefined>, fn: () => T): T {
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(env)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  try {
    return fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
  }
}
const gateOff = { AEP_HERMES_CONTROL: undefined, AEP_HERMES_GATE_TOOLS: undefined };

test('the registry hands out the Hermes surface under its token on port 8393', () => {
  const s = surfaceFor('hermes');
  assert.ok(s);
  assert.is(s.steeringType, 'x.hermes.control.instruct');
  assert.is(s.port, 8393);
});

test('pre_llm_call is the only eligible moment; on_session_finalize ends; on_session_end (per turn) does not', () => {
  withEnv(gateOff, () => {
    for (const [name, input] of Object.entries(inputs)) {
      const got = summary(surface.classify(input).class);
      const want = input.hook_event_name === 'pre_llm_call' ? 'eligible' : input.hook_event_name === 'on_session_finalize' ? 'end' : 'ineligible';
      assert.is(got, want, name);
    }
  });
});

test('D8: the pre_llm_call reply is {"context": text}; the neutral reply is {}', () => {
  const c = surface.classify(inputs.pre_llm_call!);
  assert.equal(surface.contextReply(c, 'one\n\ntwo').body, { context: 'one\n\ntwo' });
  assert.equal(surface.neutralReply(c).body, {});
  withEnv(gateOff, () => assert.equal(surface.contextReply(surface.classify(inputs.pre_tool_call!), 'x').body, {}));
});

test('approval hooks carry session_id "" and are identified by extra.session_key', () => {
  assert.is(surface.classify(inputs.pre_approval_request!).session, 's_fix_1');
});

test('the pre_tool_call gate is opt-in (AEP_HERMES_CONTROL=1) and scoped by the AEP_HERMES_GATE_TOOLS regex', () => {
  withEnv(gateOff, () => assert.is(hermesGateMatches('terminal'), false));
  withEnv({ AEP_HERMES_CONTROL: '1', AEP_HERMES_GATE_TOOLS: 'terminal' }, () => {
    assert.is(summary(surface.classify(inputs.pre_tool_call!).class), 'held:permission');
    assert.is(summary(surface.classify({ ...inputs.pre_tool_call, tool_name: 'read_file' }).class), 'ineligible');
  });
});

test('D13/D14: a gated pre_tool_call answers allow with {} and deny with a non-empty block message, never steering', () => {
  withEnv({ AEP_HERMES_CONTROL: '1', AEP_HERMES_GATE_TOOLS: undefined }, () => {
    const c = surface.classify(inputs.pre_tool_call!);
    assert.equal(surface.contextReply(c, 'steer').body, {});
    assert.equal(surface.decisionReply(c, { option: 'allow' }).body, {});
    assert.equal(surface.decisionReply(c, { option: 'deny', message: 'not on main' }).body, { action: 'block', message: 'not on main' });
    const bare = surface.decisionReply(c, { option: 'deny' }).body as { action: string; message: string };
    assert.is(bare.action, 'block');
    assert.ok(bare.message.length > 0);
    assert.equal(surface.decisionReply(c, undefined).body, {}, 'timeout releases with {}');
  });
});

test('observations reproduce every entry of the AEP mapping fixture for Hermes, clarify overlays included', () => {
  withEnv(gateOff, () => {
    const cases = fixtureCases(surface, 'hermes');
    assert.ok(cases.length >= 27);
    for (const { name, expected: want, actual } of cases) assert.equal(actual, want, name);
  });
});

test('observations validate against the AEP payload schemas', () => {
  withEnv(gateOff, () => {
    for (const input of Object.values(inputs)) for (const o of surface.classify(input).observations) assert.is(schemaProblem(o), undefined);
  });
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(hermes.moments)) assert.is(evidenceProblem(row.evidence), undefined, event);
});

test.run();
