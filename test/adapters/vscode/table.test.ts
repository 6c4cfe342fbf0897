// The VS Code agent table tested as data. No VS Code runs here, so hook inputs are the AEP mapping
// fixture's (derived from the pinned vendor source) and moments follow the design record: five
// context moments, an opt-in held PreToolUse gate answered with the decision only, no session end.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { surfaceFor } from '../../../src/adapters/registry.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import { vscode } from '../../../src/adapters/vscode/table.js';
import {
  classSummary as summary,
  evidenceProblem,
  fixtureCases,
  fixtureInputs,
  schemaProblem,
} from '../../support/mapping-fixture.js';

const inputs = fixtureInputs('vscode');
const surface = surfaceFrom(vscode);

test('the registry hands out the VS Code surface: port 8381, 25 s hold (D14, D15)', () => {
  const s = surfaceFor('vscode');
  assert.ok(s);
  assert.is(s.steeringType, 'x.vscode.control.instruct');
  assert.is(s.port, 8381);
  assert.is(s.attentionTimeoutMs, 25_000);
});

test("the design record's five moments are eligible; the rest never carry steering; nothing ends", () => {
  const want: Record<string, string> = {
    SessionStart: 'eligible',
    UserPromptSubmit: 'eligible',
    SubagentStart: 'eligible',
    PreToolUse: 'eligible',
    PostToolUse: 'eligible',
    PreCompact: 'ineligible',
    SubagentStop: 'ineligible',
    Stop: 'ineligible',
  };
  assert.equal(Object.keys(inputs).sort(), Object.keys(want).sort());
  for (const [event, input] of Object.entries(inputs))
    assert.is(summary(surface.classify(input).class), want[event], event);
  assert.ok(
    Object.values(vscode.moments).every((r) => r.role !== 'end'),
    'no session end on this hook target (D10)',
  );
});

test('a missing session_id is the "unknown" session', () => {
  const { session_id: _drop, ...rest } = inputs.UserPromptSubmit!;
  assert.is(surface.classify(rest).session, 'unknown');
});

test('D7: a tool hook fired inside a subagent is not eligible', () => {
  const c = surface.classify({ ...inputs.PostToolUse, agent_id: 'agent_7' });
  assert.is(summary(c.class), 'ineligible');
});

test('the PreToolUse gate is off by default and opt-in by --control (AEP_VSCODE_CONTROL=1), scoped by --gate-tools', () => {
  assert.equal(
    vscode.options?.map((o) => [o.flag, o.env, o.sets]),
    [
      ['--control', 'AEP_VSCODE_CONTROL', 'gate'],
      ['--gate-tools <regex>', 'AEP_VSCODE_GATE_TOOLS', 'gate-tools'],
    ],
  );
  assert.is(summary(surface.classify(inputs.PreToolUse!).class), 'eligible', 'gate off by default');
  assert.is(surface.holds, false, 'with the gate off VS Code holds nothing');
  assert.is(
    summary(surfaceFrom(vscode, { control: true }).classify(inputs.PreToolUse!).class),
    'held:permission',
    'every tool without a pattern',
  );
  const scoped = surfaceFrom(vscode, { control: true, gateTools: 'runInTerminal|editFile' });
  assert.is(scoped.holds, true);
  assert.is(summary(scoped.classify({ ...inputs.PreToolUse, tool_name: 'editFile' }).class), 'held:permission');
  assert.is(
    summary(scoped.classify({ ...inputs.PreToolUse, tool_name: 'readFile' }).class),
    'eligible',
    'an ungated PreToolUse stays eligible',
  );
  try {
    surfaceFrom(vscode, { control: true, gateTools: '(' });
    assert.unreachable('a malformed regex must be refused');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'CONFIG_INVALID');
  }
});

test('D13/D14: a held PreToolUse offers allow/deny/ask and its reply carries the decision only', () => {
  const gated = surfaceFrom(vscode, { control: true });
  const c = gated.classify(inputs.PreToolUse!);
  assert.ok(c.class.kind === 'held');
  if (c.class.kind !== 'held') return;
  assert.equal(
    c.class.request.options?.map((o) => o.id),
    ['allow', 'deny', 'ask'],
  );
  assert.equal(gated.contextReply(c, 'steer').body, {});
  assert.equal(gated.decisionReply(c, { option: 'allow' }).body, {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'allow' },
  });
  assert.equal(gated.decisionReply(c, { option: 'ask' }).body, {
    hookSpecificOutput: { hookEventName: 'PreToolUse', permissionDecision: 'ask' },
  });
  assert.equal(gated.decisionReply(c, { option: 'deny', message: 'edit the test first' }).body, {
    hookSpecificOutput: {
      hookEventName: 'PreToolUse',
      permissionDecision: 'deny',
      permissionDecisionReason: 'edit the test first',
    },
  });
  assert.equal(gated.decisionReply(c, undefined).body, {}, 'timeout: no decision, VS Code decides');
});

test('D8: the context reply is hookSpecificOutput.additionalContext with the firing event', () => {
  for (const event of ['SessionStart', 'UserPromptSubmit', 'SubagentStart', 'PreToolUse', 'PostToolUse']) {
    assert.equal(surface.contextReply(surface.classify(inputs[event]!), 'x').body, {
      hookSpecificOutput: { hookEventName: event, additionalContext: 'x' },
    });
  }
});

test('observations reproduce the AEP mapping fixture for VS Code and validate against the payload schemas', () => {
  for (const { name, expected: want, actual } of fixtureCases(surface, 'vscode')) assert.equal(actual, want, name);
  for (const input of Object.values(inputs))
    for (const o of surface.classify(input).observations) assert.is(schemaProblem(o), undefined);
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(vscode.moments)) assert.is(evidenceProblem(row.evidence), undefined, event);
});

test.run();
