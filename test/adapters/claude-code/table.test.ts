// The Claude Code table tested as data: moments against the recorded 2.1.332 hook inputs, the form
// mappings against the AEP fixture, replies against the shapes Claude Code accepts, observations
// against the AEP payload schemas, and every evidence string against what it cites.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { claudeCode } from '../../../src/adapters/claude-code/table.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import { surfaceFor } from '../../../src/adapters/registry.js';
import { captureViolations } from '../../../src/protocol/capture.js';
import { TYPE_PATTERN } from '../../../src/protocol/types.js';
import type { ClassifiedHook, HookClass } from '../../../src/streams/surface.js';
import { aepFile, projectRoot, readJson, referenceDir, referenceFile } from '../../support/shared-dir.js';
import { assertSamplesClassify, classSummary as summary } from '../../support/mapping-fixture.js';

type Input = Record<string, unknown>;
const samples = readJson<Record<string, Input>>(referenceFile('samples', 'claude-code-2.1.332.json'));
const fixture = readJson<Record<string, { input: Input; expected_data: unknown }>>(
  aepFile('fixtures', 'mappings', 'claude-code.json'),
);
const surface = surfaceFrom(claudeCode);

const eligible: HookClass = { kind: 'moment', eligible: true };
const expected: Record<string, 'eligible' | 'ineligible' | 'end' | 'held:permission'> = {
  SessionStart: 'eligible',
  UserPromptSubmit: 'eligible',
  UserPromptExpansion: 'eligible',
  PreToolUse: 'eligible',
  PostToolUse: 'eligible',
  PostToolUseFailure: 'eligible',
  PostToolBatch: 'eligible',
  Stop: 'eligible',
  PostModelSwitch: 'eligible',
  MessageDisplay: 'ineligible',
  SubagentStart: 'ineligible',
  SubagentStop: 'ineligible',
  Setup: 'ineligible',
  InstructionsLoaded: 'ineligible',
  PreModelSwitch: 'ineligible',
  CwdChanged: 'ineligible',
  ConfigChange: 'ineligible',
  PreCompact: 'ineligible',
  PostCompact: 'ineligible',
  StopFailure: 'ineligible',
  SessionEnd: 'end',
  PermissionRequest: 'held:permission',
};

test('the registry hands out the Claude Code surface under its token', () => {
  const s = surfaceFor('claude-code');
  assert.ok(s);
  assert.is(s.token, 'claude-code');
  assert.is(s.steeringType, 'x.claude-code.control.instruct');
  assert.is(s.port, 8377);
  assert.is(s.attentionTimeoutMs, 55_000);
});

test('every recorded 2.1.332 hook input classifies as expected', () => {
  assertSamplesClassify(surface, samples, expected, 'the sample file and this table cover the same events');
});

test('D10: SessionEnd ends the session normal whatever its reason names; SessionStart is the start moment', () => {
  for (const reason of ['other', 'clear', 'logout', 'prompt_input_exit', 'resume']) {
    assert.equal(surface.classify({ ...samples.SessionEnd, reason }).class, { kind: 'end', reason: 'normal' }, reason);
  }
  assert.equal(surface.classify(samples.SessionEnd!).observations, [], 'the runtime alone emits session.ended');
  assert.equal(surface.classify(samples.SessionStart!).class, { kind: 'moment', eligible: true, starts: true });
});

test('D7: Stop is eligible only while stop_hook_active is false', () => {
  const second = surface.classify({ ...samples.Stop, stop_hook_active: true });
  assert.is(summary(second.class), 'ineligible');
  assert.equal(surface.contextReply(second, 'x'), surface.neutralReply(second));
  assert.equal(surface.classify(samples.Stop!).class, eligible);
});

test("D7: a hook carrying agent_id (a subagent's) is never eligible", () => {
  for (const event of ['PreToolUse', 'PostToolUse', 'PostToolBatch', 'UserPromptSubmit']) {
    const c = surface.classify({ ...samples[event], agent_id: 'a0e89a0834090ff42', agent_type: 'general-purpose' });
    assert.is(summary(c.class), 'ineligible', event);
    assert.match(c.class.kind === 'moment' ? (c.class.reason ?? '') : '', /subagent/);
  }
});

test('a hook the table does not know is an ineligible moment with a vendor fallback observation', () => {
  const c = surface.classify({ session_id: 's1', hook_event_name: 'SomethingNewLater', cwd: '/x' });
  assert.is(summary(c.class), 'ineligible');
  assert.equal(c.observations, [
    { type: 'x.claude-code.session.something_new_later', data: { hook: 'SomethingNewLater' } },
  ]);
});

test('bodies without a session id or event name are refused with HOOK_BODY_INVALID', () => {
  for (const bad of [
    {},
    { session_id: 's' },
    { hook_event_name: 'Stop' },
    { session_id: '', hook_event_name: 'Stop' },
    { session_id: 3, hook_event_name: 'Stop' },
  ]) {
    try {
      surface.classify(bad);
      assert.unreachable('should have thrown');
    } catch (e) {
      assert.is((e as { code?: string }).code, 'HOOK_BODY_INVALID');
    }
  }
});

test('D8: the context reply is exactly hookSpecificOutput with the firing event and the text', () => {
  for (const [event, input] of Object.entries(samples)) {
    const c = surface.classify(input);
    const reply = surface.contextReply(c, 'line one\n\nline two');
    if (expected[event] === 'eligible') {
      assert.is(
        JSON.stringify(reply.body),
        JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: 'line one\n\nline two' } }),
        event,
      );
    } else {
      assert.equal(reply.body, {}, `${event} never carries steering`);
    }
  }
});

test('D15: the neutral reply is an empty JSON object', () => {
  assert.equal(surface.neutralReply(undefined).body, {});
  assert.equal(surface.neutralReply(surface.classify(samples.PreToolUse!)).body, {});
});

const permission = (): ClassifiedHook => surface.classify(samples.PermissionRequest!);

test('D14: PermissionRequest raises a permission request with allow and deny options', () => {
  const c = permission();
  assert.is(c.class.kind, 'held');
  if (c.class.kind !== 'held') return;
  assert.is(c.class.request.kind, 'permission');
  assert.equal(c.class.request.options, [
    { id: 'allow', label: 'Allow' },
    { id: 'deny', label: 'Deny' },
  ]);
  assert.is(c.class.request.prompt, 'claude-code requests permission to use Bash');
  assert.equal(c.observations, [], 'the runtime raises attention.requested itself');
});

test('D14: allow, deny and free-text deny become Claude Code decisions', () => {
  const c = permission();
  assert.equal(surface.decisionReply(c, { option: 'allow' }).body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  const deny = surface.decisionReply(c, { option: 'deny' }).body as {
    hookSpecificOutput: { decision: { behavior: string; message: string } };
  };
  assert.is(deny.hookSpecificOutput.decision.behavior, 'deny');
  assert.ok(deny.hookSpecificOutput.decision.message.length > 0);
  assert.equal(surface.decisionReply(c, { option: 'deny', message: 'use the staging db instead' }).body, {
    hookSpecificOutput: {
      hookEventName: 'PermissionRequest',
      decision: { behavior: 'deny', message: 'use the staging db instead' },
    },
  });
});

test('D14: no decision (timeout) gives the neutral reply so Claude Code shows its own dialog', () => {
  assert.equal(surface.decisionReply(permission(), undefined).body, {});
});

test('D13: a held hook never carries steering', () => {
  assert.equal(surface.contextReply(permission(), 'steer').body, {});
});

const ask = (): ClassifiedHook =>
  surface.classify({
    ...samples.PermissionRequest,
    tool_name: 'AskUserQuestion',
    tool_input: fixture.ask_user_question!.input,
  });

test('AskUserQuestion through PermissionRequest reproduces the AEP mapping fixture', () => {
  const c = ask();
  assert.is(c.class.kind, 'held');
  if (c.class.kind !== 'held') return;
  assert.is(c.class.hold, 'elicitation');
  const r = c.class.request;
  // The runtime assembles data as {kind, prompt, fields, respond_via:["control"]} (fixture $comment).
  const data = { kind: r.kind, prompt: r.prompt, fields: r.fields, respond_via: ['control'] };
  assert.is(JSON.stringify(data), JSON.stringify(fixture.ask_user_question!.expected_data));
  assert.is(r.options, undefined);
});

test('an AskUserQuestion answer becomes allow with the questions and their answers', () => {
  const body = surface.decisionReply(ask(), { option: 'submit', values: { '1': '2', '2': ['1', '2'] } }).body as {
    hookSpecificOutput: {
      hookEventName: string;
      decision: { behavior: string; updatedInput: { questions: unknown[]; answers: Record<string, string> } };
    };
  };
  assert.is(body.hookSpecificOutput.hookEventName, 'PermissionRequest');
  assert.is(body.hookSpecificOutput.decision.behavior, 'allow');
  assert.equal(
    body.hookSpecificOutput.decision.updatedInput.questions,
    (fixture.ask_user_question!.input as { questions: unknown[] }).questions,
  );
  assert.equal(body.hookSpecificOutput.decision.updatedInput.answers, {
    'Which database should the new service use?': 'SQLite',
    'Which regions should we roll out to?': 'us-east, eu-west',
  });
  const other = surface.decisionReply(ask(), { option: 'submit', values: { '1': 'MariaDB', '2': ['2'] } })
    .body as typeof body;
  assert.is(
    other.hookSpecificOutput.decision.updatedInput.answers['Which database should the new service use?'],
    'MariaDB',
  );
});

const elicitation = (): ClassifiedHook =>
  surface.classify({
    session_id: 's-el',
    transcript_path: '/t',
    cwd: '/p',
    hook_event_name: 'Elicitation',
    mcp_server_name: 'deployer',
    ...fixture.elicitation!.input,
  });

test('Elicitation reproduces the AEP mapping fixture', () => {
  const c = elicitation();
  assert.is(c.class.kind, 'held');
  if (c.class.kind !== 'held') return;
  assert.is(c.class.hold, 'elicitation');
  const r = c.class.request;
  assert.is(
    JSON.stringify({ kind: r.kind, prompt: r.prompt, fields: r.fields, respond_via: ['control'] }),
    JSON.stringify(fixture.elicitation!.expected_data),
  );
});

test('Elicitation reads the 2.1.332 field name requested_schema too', () => {
  const { requestedSchema, ...rest } = fixture.elicitation!.input as { requestedSchema: unknown };
  const c = surface.classify({
    session_id: 's',
    hook_event_name: 'Elicitation',
    ...rest,
    requested_schema: requestedSchema,
  });
  assert.ok(c.class.kind === 'held' && c.class.request.fields?.length === 4);
});

test('an Elicitation answer becomes accept with the values as content; decline and cancel pass through', () => {
  const values = { environment: 'staging', confirm: true, replicas: 2 };
  assert.equal(surface.decisionReply(elicitation(), { option: 'submit', values }).body, {
    hookSpecificOutput: { hookEventName: 'Elicitation', action: 'accept', content: values },
  });
  assert.equal(surface.decisionReply(elicitation(), { option: 'decline' }).body, {
    hookSpecificOutput: { hookEventName: 'Elicitation', action: 'decline' },
  });
  assert.equal(surface.decisionReply(elicitation(), { option: 'cancel' }).body, {
    hookSpecificOutput: { hookEventName: 'Elicitation', action: 'cancel' },
  });
});

const annexA: Record<string, string[]> = {
  SessionStart: ['session.started'],
  UserPromptSubmit: ['run.started'],
  PreToolUse: ['tool.requested'],
  PostToolUse: ['tool.completed'],
  PostToolUseFailure: ['tool.failed'],
  Stop: ['run.finished'],
  StopFailure: ['run.failed'],
  SessionEnd: [],
  SubagentStart: ['delegation.subagent.started'],
  SubagentStop: ['delegation.subagent.stopped'],
  PostCompact: ['session.compacted'],
  PreCompact: [],
  MessageDisplay: [],
  PostToolBatch: [],
  UserPromptExpansion: [],
  PermissionRequest: [],
  Setup: ['x.claude-code.session.setup'],
  InstructionsLoaded: ['x.claude-code.session.instructions_loaded'],
  CwdChanged: ['x.claude-code.session.cwd_changed'],
  ConfigChange: ['x.claude-code.session.config_change'],
  PreModelSwitch: ['x.claude-code.session.pre_model_switch'],
  PostModelSwitch: ['x.claude-code.session.post_model_switch'],
};

test('observations follow AEP-0002 Annex A for every recorded hook', () => {
  for (const [event, input] of Object.entries(samples)) {
    assert.equal(
      surface.classify(input).observations.map((o) => o.type),
      annexA[event],
      event,
    );
  }
});

test("observation payloads validate against the AEP schemas and stay at capture metadata (a turn's final answer: redacted, D45)", () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  for (const input of Object.values(samples)) {
    for (const o of surface.classify(input).observations) {
      assert.ok(TYPE_PATTERN.test(o.type), o.type);
      // D45: the Stop hook's last message rides run.finished as its redacted-class summary, and nothing else does.
      const answer = o.type === 'run.finished' && typeof o.data?.['summary'] === 'string';
      assert.ok(answer ? o.capture === 'redacted' : o.capture === undefined || o.capture === 'metadata', o.type);
      if (answer) assert.equal(captureViolations(o.type, o.data ?? {}, 'redacted'), [], o.type);
      if (o.type.startsWith('x.')) continue;
      const schemaPath = aepFile('schemas', 'types', `${o.type}.schema.json`);
      assert.ok(existsSync(schemaPath), `schema for ${o.type}`);
      const validate = ajv.getSchema(readJson<{ $id: string }>(schemaPath).$id) ?? ajv.compile(readJson(schemaPath));
      assert.ok(validate(o.data ?? {}), `${o.type}: ${ajv.errorsText(validate.errors)}`);
      if (!answer) assert.equal(captureViolations(o.type, o.data ?? {}, 'metadata'), [], o.type);
    }
  }
});

test("a turn's run id is the prompt id, and the second Stop is no second run terminal", () => {
  const started = surface.classify(samples.UserPromptSubmit!).observations[0]!;
  const finished = surface.classify(samples.Stop!).observations[0]!;
  assert.is(started.run, samples.UserPromptSubmit!.prompt_id);
  assert.is(finished.run, samples.Stop!.prompt_id);
  const second = surface.classify({ ...samples.Stop, stop_hook_active: true }).observations;
  assert.ok(second.every((o) => !o.type.startsWith('run.')));
});

test('every evidence string resolves to an end-to-end test name or a reference section', () => {
  const e2e = join(projectRoot, 'test', 'e2e', 'claude-code.e2e.ts');
  const e2eText = existsSync(e2e) ? readFileSync(e2e, 'utf8') : '';
  const rows: [string, { evidence: string }][] = [
    ...Object.entries(claudeCode.moments),
    ['userNotice', claudeCode.replies.userNotice!],
  ];
  for (const [event, row] of rows) {
    const ev = row.evidence;
    const t = /^e2e\/claude-code#(.+)$/.exec(ev);
    if (t) {
      const name = t[1]!;
      assert.ok(
        [`test('${name}'`, `test("${name}"`, `test(\`${name}\``].some((s) => e2eText.includes(s)),
        `${event}: no e2e test named "${name}"`,
      );
      continue;
    }
    const d = /^([a-z-]+) §(\d+(?:\.\d+)*)$/.exec(ev);
    assert.ok(d, `${event}: evidence "${ev}" is neither an e2e test nor a doc section`);
    const doc = join(referenceDir, `${d![1]}.md`);
    assert.ok(existsSync(doc), `${event}: ${doc} missing`);
    const heading = new RegExp(`^#{2,4} ${d![2]!.replace(/\./g, '\\.')}[ .]`, 'm');
    assert.ok(heading.test(readFileSync(doc, 'utf8')), `${event}: no section ${d![2]} in ${d![1]}`);
  }
});

test.run();
