// The Hermes table tested as data. No Hermes runs here, so hook inputs are the AEP mapping
// fixture's (derived from the pinned vendor source) and moments follow the design record: the one
// delivery moment is pre_llm_call, the drop moment on_session_finalize, and an opt-in gated
// pre_tool_call answers with the deny decision only.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hermes } from '../../../src/adapters/hermes/table.js';
import { surfaceFor } from '../../../src/adapters/registry.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import {
  classSummary as summary,
  evidenceProblem,
  fixtureCases,
  fixtureInputs,
  schemaProblem,
} from '../../support/mapping-fixture.js';

const inputs = fixtureInputs('hermes');
const surface = surfaceFrom(hermes);

test('the registry hands out the Hermes surface under its token on port 8393', () => {
  const s = surfaceFor('hermes');
  assert.ok(s);
  assert.is(s.steeringType, 'x.hermes.control.instruct');
  assert.is(s.port, 8393);
});

test('pre_llm_call is the only eligible moment; on_session_finalize ends; on_session_end (per turn) does not', () => {
  for (const [name, input] of Object.entries(inputs)) {
    const got = summary(surface.classify(input).class);
    const want =
      input.hook_event_name === 'pre_llm_call'
        ? 'eligible'
        : input.hook_event_name === 'on_session_finalize'
          ? 'end'
          : 'ineligible';
    assert.is(got, want, name);
  }
});

test('D8: the pre_llm_call reply is {"context": text}; the neutral reply is {}', () => {
  const c = surface.classify(inputs.pre_llm_call!);
  assert.equal(surface.contextReply(c, 'one\n\ntwo').body, { context: 'one\n\ntwo' });
  assert.equal(surface.neutralReply(c).body, {});
  assert.equal(surface.contextReply(surface.classify(inputs.pre_tool_call!), 'x').body, {});
});

test('approval hooks carry session_id "" and are identified by extra.session_key', () => {
  assert.is(surface.classify(inputs.pre_approval_request!).session, 's_fix_1');
});

test('the pre_tool_call gate is opt-in (--control / AEP_HERMES_CONTROL=1) and scoped by the --gate-tools regex', () => {
  assert.equal(
    hermes.options?.map((o) => [o.flag, o.env, o.sets]),
    [
      ['--control', 'AEP_HERMES_CONTROL', 'gate'],
      ['--gate-tools <regex>', 'AEP_HERMES_GATE_TOOLS', 'gate-tools'],
    ],
  );
  assert.is(summary(surface.classify(inputs.pre_tool_call!).class), 'ineligible', 'gate off by default');
  assert.is(surface.holds, false, 'with the gate off Hermes holds nothing');
  const gated = surfaceFrom(hermes, { control: true, gateTools: 'terminal' });
  assert.is(gated.holds, true);
  assert.is(summary(gated.classify(inputs.pre_tool_call!).class), 'held:permission');
  assert.is(summary(gated.classify({ ...inputs.pre_tool_call, tool_name: 'read_file' }).class), 'ineligible');
});

test('D13/D14: a gated pre_tool_call answers allow with {} and deny with a non-empty block message, never steering', () => {
  const gated = surfaceFrom(hermes, { control: true });
  const c = gated.classify(inputs.pre_tool_call!);
  assert.is(c.class.kind, 'held');
  assert.equal(gated.contextReply(c, 'steer').body, {});
  assert.equal(gated.decisionReply(c, { option: 'allow' }).body, {});
  assert.equal(gated.decisionReply(c, { option: 'deny', message: 'not on main' }).body, {
    action: 'block',
    message: 'not on main',
  });
  const bare = gated.decisionReply(c, { option: 'deny' }).body as { action: string; message: string };
  assert.is(bare.action, 'block');
  assert.ok(bare.message.length > 0);
  assert.equal(gated.decisionReply(c, undefined).body, {}, 'timeout releases with {}');
});

test('on_session_start is the start moment; on_session_finalize ends with its reason collapsed (shutdown: normal)', () => {
  const start = surface.classify(inputs.on_session_start!).class;
  assert.ok(start.kind === 'moment' && start.starts === true && !start.eligible);
  assert.equal(surface.classify(inputs.on_session_finalize!).class, { kind: 'end', reason: 'normal' });
});

test('observations reproduce every entry of the AEP mapping fixture for Hermes, clarify overlays included', () => {
  const cases = fixtureCases(surface, 'hermes');
  assert.ok(cases.length >= 27);
  for (const { name, expected: want, actual } of cases) assert.equal(actual, want, name);
});

test('observations validate against the AEP payload schemas', () => {
  for (const input of Object.values(inputs))
    for (const o of surface.classify(input).observations) assert.is(schemaProblem(o), undefined);
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(hermes.moments)) assert.is(evidenceProblem(row.evidence), undefined, event);
});

test.run();
