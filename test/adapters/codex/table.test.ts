// The Codex table tested as data: moments against the recorded 0.171.0 hook inputs, replies against
// the output schemas from the 0.171.0 binary, observations against the AEP mapping fixture and
// payload schemas, and every evidence string against what it cites.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import Ajv from 'ajv';
import { codex } from '../../../src/adapters/codex/table.js';
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
const samples = readJson<Record<string, Input>>(referenceFile('samples', 'codex-0.171.0.json'));
const surface = surfaceFrom(codex);

const expected: Record<string, string> = {
  SessionStart: 'eligible',
  UserPromptSubmit: 'eligible',
  PreToolUse: 'eligible',
  PostToolUse: 'eligible',
  Stop: 'ineligible',
  SessionEnd: 'end',
  SubagentStart: 'ineligible',
  SubagentStop: 'ineligible',
};

const schemaFile = (event: string) =>
  referenceFile(
    'samples',
    'codex-0.171.0-hook-schemas',
    `${event.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}.command.output.schema.json`,
  );
const ajv = new Ajv.default({ strict: false, allErrors: true });

test('the registry hands out the Codex surface under its token', () => {
  const s = surfaceFor('codex');
  assert.ok(s);
  assert.is(s.steeringType, 'x.codex.control.instruct');
  assert.is(s.port, 8378);
  assert.is(s.attentionTimeoutMs, 55_000);
});

test('every recorded 0.171.0 hook input classifies as expected', () => {
  assertSamplesClassify(surface, samples, expected);
});

test("D7: a subagent's hooks carry the parent session and agent_id, and are never eligible", () => {
  // Recorded: SubagentStart carries the parent's session_id plus agent_id (vendor-clis-observed §2.5).
  assert.is(surface.classify(samples.SubagentStart!).session, samples.SubagentStop!.session_id);
  for (const event of ['UserPromptSubmit', 'PreToolUse', 'PostToolUse']) {
    const c = surface.classify({ ...samples[event], agent_id: samples.SubagentStart!.agent_id, agent_type: 'default' });
    assert.is(summary(c.class), 'ineligible', event);
    assert.match(c.class.kind === 'moment' ? (c.class.reason ?? '') : '', /subagent/);
    assert.equal(surface.contextReply(c, 'steer').body, undefined);
  }
});

test('D10: SessionEnd (new in 0.171) is the end moment; its reason "other" ends the session normal', () => {
  assert.equal(surface.classify(samples.SessionEnd!).class, { kind: 'end', reason: 'normal' });
  assert.equal(surface.classify(samples.SessionEnd!).observations, [], 'the runtime alone emits session.ended');
});

test('SessionStart is the start moment that reopens an ended session (codex exec resume keeps the id)', () => {
  const c = surface.classify(samples.SessionStart!).class;
  assert.equal(c, { kind: 'moment', eligible: true, starts: true });
});

test('D8: the context reply validates against the 0.171.0 output schema of each eligible moment', () => {
  for (const event of ['SessionStart', 'UserPromptSubmit', 'PreToolUse']) {
    const body = surface.contextReply(surface.classify(samples[event]!), 'first\n\n<second> "quoted"').body;
    assert.equal(body, {
      hookSpecificOutput: { hookEventName: event, additionalContext: 'first\n\n<second> "quoted"' },
    });
    const validate = ajv.compile(readJson(schemaFile(event)));
    assert.ok(validate(body), `${event}: ${ajv.errorsText(validate.errors)}`);
  }
  // A reply naming another event fails the schema: the reason hookEventName follows the firing event.
  const wrong = { hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'x' } };
  assert.not.ok(ajv.compile(readJson(schemaFile('PreToolUse')))(wrong));
  assert.not.ok(
    ajv.compile(readJson(schemaFile('PreToolUse')))({ additionalContext: 'x' }),
    'a top-level additionalContext is rejected',
  );
});

test('D15: the neutral reply is empty output, and ineligible moments never carry text', () => {
  assert.is(surface.neutralReply(undefined).body, undefined);
  for (const event of ['Stop', 'SubagentStart', 'SubagentStop']) {
    assert.is(surface.contextReply(surface.classify(samples[event]!), 'steer').body, undefined, event);
  }
});

const permission = () =>
  surface.classify({
    session_id: 's',
    turn_id: 't',
    hook_event_name: 'PermissionRequest',
    tool_name: 'Bash',
    tool_input: { command: 'rm -rf build', description: 'clean' },
  });

test('D13/D14: PermissionRequest is held; its replies carry the decision only and pass the schema', () => {
  const c = permission();
  assert.is(summary(c.class), 'held:permission');
  assert.equal(surface.contextReply(c, 'steer').body, undefined, 'a held hook never carries steering');
  const validate = ajv.compile(readJson(schemaFile('PermissionRequest')));
  const allow = surface.decisionReply(c, { option: 'allow' }).body;
  assert.equal(allow, { hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } } });
  const deny = surface.decisionReply(c, { option: 'deny', message: 'use the staging db' }).body;
  assert.equal(deny, {
    hookSpecificOutput: {
      hookEventName: 'PermissionRequest',
      decision: { behavior: 'deny', message: 'use the staging db' },
    },
  });
  const bare = surface.decisionReply(c, { option: 'deny' }).body as {
    hookSpecificOutput: { decision: { message: string } };
  };
  for (const body of [allow, deny, bare]) assert.ok(validate(body), ajv.errorsText(validate.errors));
  assert.ok(bare.hookSpecificOutput.decision.message.length > 0);
  assert.is(surface.decisionReply(c, undefined).body, undefined, 'no decision: Codex falls back to its own flow');
});

test('observations reproduce the AEP mapping fixture for Codex', () => {
  for (const { name, expected: want, actual } of fixtureCases(surface, 'codex')) assert.equal(actual, want, name);
});

test('observations of every recorded hook validate against the AEP payload schemas; turn_id is the run', () => {
  for (const input of Object.values(samples)) {
    for (const o of surface.classify(input).observations) assert.is(schemaProblem(o), undefined);
  }
  assert.is(surface.classify(samples.PreToolUse!).observations[0]!.run, samples.PreToolUse!.turn_id);
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(codex.moments)) assert.is(evidenceProblem(row.evidence), undefined, event);
  assert.is(evidenceProblem(codex.replies.userNotice!.evidence), undefined, 'userNotice');
  for (const ev of codex.deliveries!.evidence.split('; ')) assert.is(evidenceProblem(ev), undefined, ev);
  assert.ok(existsSync(schemaFile('SessionStart')));
});

test("D31: the hook lane honours moment and queue; steer is the app-server lane's alone", () => {
  assert.equal(surface.deliveries, ['moment', 'queue']);
  assert.equal(
    codex.lanes?.map((l) => l.name),
    ['app-server'],
  );
});

test.run();
