// The Qwen Code table tested as data: moments against the recorded 0.24.4 hook inputs (D7 on that
// version), replies in the shape Qwen reads, observations against the AEP mapping fixture and
// payload schemas, and every evidence string against what it cites.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { qwenCode } from '../../../src/adapters/qwen-code/table.js';
import { surfaceFor } from '../../../src/adapters/registry.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import {
  assertSamplesClassify,
  classSummary as summary,
  evidenceProblem,
  fixtureCases,
  schemaProblem,
} from '../../support/mapping-fixture.js';
import { readJson, referenceFile } from '../../support/shared-dir.js';

type Input = Record<string, unknown>;
const samples = readJson<Record<string, Input>>(referenceFile('samples', 'qwen-code-0.24.4.json'));
const surface = surfaceFrom(qwenCode);

const expected: Record<string, string> = {
  SessionStart: 'eligible',
  Notification: 'ineligible',
  UserPromptSubmit: 'eligible',
  PreToolUse: 'ineligible',
  PostToolUse: 'eligible',
  PostToolBatch: 'eligible',
  Stop: 'ineligible',
  SubagentStart: 'ineligible',
  SubagentStop: 'ineligible',
  PostToolUseFailure: 'eligible',
  PreCompact: 'ineligible',
};

test('the registry hands out the Qwen Code surface under its token', () => {
  const s = surfaceFor('qwen-code');
  assert.ok(s);
  assert.is(s.steeringType, 'x.qwen-code.control.instruct');
  assert.is(s.port, 8380);
});

test('every recorded 0.24.4 hook input classifies as expected (D7 on 0.24.4)', () => {
  assertSamplesClassify(surface, samples, expected);
});

test('D7: PreToolUse, SubagentStart and Stop never carry steering on 0.24.4', () => {
  for (const event of ['PreToolUse', 'SubagentStart', 'Stop']) {
    const c = surface.classify(samples[event]!);
    assert.ok(c.class.kind === 'moment' && /0\.24\.4|headless|subagent|dropped/.test(c.class.reason ?? ''), event);
    assert.equal(surface.contextReply(c, 'steer').body, {}, event);
  }
});

test('the empty-prompt UserPromptSubmit after a tool batch is still an eligible main-agent moment, and starts no run', () => {
  const refire = surface.classify({ ...samples.UserPromptSubmit, prompt: '', submitted_prompt: undefined });
  assert.is(summary(refire.class), 'eligible');
  assert.equal(refire.observations, []);
  assert.equal(
    surface.classify(samples.UserPromptSubmit!).observations.map((o) => o.type),
    ['run.started'],
  );
});

test('D7: hooks fired inside a subagent (agent_id) are never eligible', () => {
  for (const event of ['UserPromptSubmit', 'PostToolUse', 'PostToolBatch']) {
    const c = surface.classify({ ...samples[event], agent_id: 'general-purpose-call_mock_1' });
    assert.is(summary(c.class), 'ineligible', event);
  }
});

test('D8/D15: the context reply is hookSpecificOutput for the firing event; the neutral reply is {}', () => {
  for (const event of ['SessionStart', 'UserPromptSubmit', 'PostToolUse', 'PostToolUseFailure', 'PostToolBatch']) {
    assert.equal(surface.contextReply(surface.classify(samples[event]!), 'a\n\nb').body, {
      hookSpecificOutput: { hookEventName: event, additionalContext: 'a\n\nb' },
    });
  }
  assert.equal(surface.neutralReply(undefined).body, {});
});

test('D10: SessionEnd is the end moment; prompt_input_exit ends the session normal (fixture)', () => {
  const c = surface.classify({ session_id: 's', hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' });
  assert.equal(c.class, { kind: 'end', reason: 'normal' });
  assert.equal(c.observations, [], 'the runtime alone emits session.ended');
});

test('SessionStart is the start moment that reopens an ended session (--continue keeps the id)', () => {
  assert.equal(surface.classify(samples.SessionStart!).class, { kind: 'moment', eligible: true, starts: true });
});

test("D13/D14: PermissionRequest is held and answered with Qwen's decision object", () => {
  const c = surface.classify({
    session_id: 's',
    hook_event_name: 'PermissionRequest',
    tool_name: 'run_shell_command',
    tool_input: { command: 'rm -rf build' },
  });
  assert.is(summary(c.class), 'held:permission');
  assert.equal(surface.contextReply(c, 'steer').body, {});
  assert.equal(surface.decisionReply(c, { option: 'allow' }).body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  assert.equal(surface.decisionReply(c, { option: 'deny', message: 'not now' }).body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'deny', message: 'not now' } },
  });
  assert.equal(surface.decisionReply(c, undefined).body, {});
});

test('observations reproduce the AEP mapping fixture for Qwen Code', () => {
  for (const { name, expected: want, actual } of fixtureCases(surface, 'qwen-code')) assert.equal(actual, want, name);
});

test('observations of every recorded hook validate against the AEP payload schemas', () => {
  for (const input of Object.values(samples)) {
    for (const o of surface.classify(input).observations) assert.is(schemaProblem(o), undefined);
  }
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(qwenCode.moments))
    assert.is(evidenceProblem(row.evidence), undefined, event);
});

test.run();
