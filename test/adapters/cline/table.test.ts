// The Cline 3.0.65 table tested as data: the recorded hook inputs of the real CLI
// (../shared/reference/samples/cline-3.0.65.json) classify as the table says, the AEP mapping
// fixture is reproduced, and every row's evidence resolves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { cline, CLINE_HOOK_FILES } from '../../../src/adapters/cline/table.js';
import { surfaceFor } from '../../../src/adapters/registry.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import { acceptsFor } from '../../../src/streams/run.js';
import {
  classSummary as summary,
  evidenceProblem,
  fixtureCases,
  fixtureInputs,
  schemaProblem,
} from '../../support/mapping-fixture.js';
import { readJson, referenceFile } from '../../support/shared-dir.js';

const surface = surfaceFrom(cline);
const samples = readJson<Record<string, Record<string, unknown>>>(referenceFile('samples', 'cline-3.0.65.json'));
const inputs = fixtureInputs('cline');

test('the registry hands out the Cline surface on port 8392 with instruct and send_input verbs', () => {
  const s = surfaceFor('cline');
  assert.ok(s);
  assert.is(s.port, 8392);
  assert.is(s.steeringType, 'x.cline.control.instruct');
  assert.equal(s.sendInput?.type, 'x.cline.control.send_input');
  assert.equal(s.sendInput?.policy, {
    deliveries: ['queue', 'steer'],
    defaultDelivery: 'queue',
    refuseIdle: true,
    reportsConsumption: true,
    mergesIdentical: true,
  });
  assert.equal(acceptsFor(s, false, false), [], 'no hub control, no instruct: hello declares nothing');
  assert.equal(acceptsFor(s, true, true), [
    'control.attention.respond',
    'x.cline.control.instruct',
    'control.cancel',
    'x.cline.control.send_input',
  ]);
});

test('recorded 3.0.65 samples: session is sessionContext.rootSessionId, not taskId; only PreToolUse and PostToolUse are eligible', () => {
  const want: Record<string, string> = {
    TaskStart: 'ineligible',
    PreToolUse: 'eligible',
    PostToolUse: 'eligible',
    TaskComplete: 'ineligible',
  };
  assert.equal(Object.keys(samples).sort(), Object.keys(want).sort());
  for (const [file, input] of Object.entries(samples)) {
    const c = surface.classify(input);
    assert.is(c.session, '1796031198925_w9dwf', file);
    assert.is(c.event, CLINE_HOOK_FILES[file as keyof typeof CLINE_HOOK_FILES], file);
    assert.is(summary(c.class), want[file], file);
  }
  const start = surface.classify(samples.TaskStart!).class;
  const done = surface.classify(samples.TaskComplete!).class;
  assert.ok(start.kind === 'moment' && start.turn === 'opens', 'TaskStart opens a turn (D28 idle refusal)');
  assert.ok(done.kind === 'moment' && done.turn === 'closes');
});

test('recorded samples map to AEP observations with the iteration as step', () => {
  const pre = surface.classify(samples.PreToolUse!).observations;
  assert.equal(
    pre.map((o) => [o.type, o.subject, o.step]),
    [['tool.requested', 'run_commands', '1']],
  );
  const post = surface.classify(samples.PostToolUse!).observations;
  assert.equal(
    post.map((o) => [o.type, (o.data as { duration_ms: number }).duration_ms]),
    [['tool.completed', 28]],
  );
  assert.equal(
    surface.classify(samples.TaskComplete!).observations.map((o) => [o.type, o.step]),
    [['run.finished', '2']],
  );
});

test('D37: a session is described by the workspace its hook inputs name (rootPath, else the first root); no title', () => {
  for (const input of Object.values(samples)) assert.equal(surface.classify(input).about, { cwd: '/home/dev/project' });
  const { workspaceInfo: _info, ...rootsOnly } = samples.TaskStart!;
  assert.equal(surface.classify({ ...rootsOnly, workspaceRoots: ['', '/w/two'] }).about, { cwd: '/w/two' });
  const { workspaceRoots: _roots, ...neither } = rootsOnly;
  assert.is(surface.classify(neither).about, undefined);
});

test('D8: PreToolUse and PostToolUse replies are {"contextModification": text}; everything else gets {}', () => {
  const c = surface.classify(samples.PostToolUse!);
  assert.equal(surface.contextReply(c, 'one\n\ntwo').body, { contextModification: 'one\n\ntwo' });
  assert.equal(surface.contextReply(surface.classify(samples.TaskStart!), 'x').body, {});
  assert.equal(surface.neutralReply(c).body, {});
});

test('D7: a spawned agent (typed parent id) never drains the main queue nor opens its turn', () => {
  const child = { ...samples.PreToolUse!, parent_agent_id: 'agent_root' };
  assert.is(summary(surface.classify(child).class), 'ineligible');
  const started = surface.classify({ ...samples.TaskStart!, parent_agent_id: 'agent_root' }).class;
  assert.ok(started.kind === 'moment' && started.turn === undefined);
});

test('session_shutdown is the end moment with its free-text reason collapsed (window closed: normal)', () => {
  assert.equal(surface.classify(inputs.session_shutdown!).class, { kind: 'end', reason: 'normal' });
});

test('observations reproduce every entry of the AEP mapping fixture for Cline', () => {
  const cases = fixtureCases(surface, 'cline');
  assert.ok(cases.length >= 14);
  for (const { name, expected: want, actual } of cases) assert.equal(actual, want, name);
});

test('the fixture steps: iteration becomes the envelope step as a plain string', () => {
  assert.equal(
    surface.classify(inputs.agent_end!).observations.map((o) => o.step),
    ['3'],
  );
  assert.equal(
    surface.classify(inputs.tool_result_error!).observations.map((o) => o.step),
    ['2'],
  );
  assert.equal(
    surface.classify(inputs.agent_start!).observations.map((o) => o.step),
    [undefined],
  );
});

test('observations validate against the AEP payload schemas', () => {
  for (const input of [...Object.values(inputs), ...Object.values(samples)]) {
    for (const o of surface.classify(input).observations) assert.is(schemaProblem(o), undefined);
  }
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(cline.moments)) assert.is(evidenceProblem(row.evidence), undefined, event);
});

test.run();
