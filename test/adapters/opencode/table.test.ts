// The opencode table tested as data (D50): the registry hands it out, frames of the 1.18.33 event
// stream (as the server connection passes them on) classify as observations whose payloads match
// the AEP schemas, a session's end is `session.deleted`, and every evidence string resolves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { opencode } from '../../../src/adapters/opencode/table.js';
import { arrivalBody, parseOpencodeEvent } from '../../../src/adapters/opencode/frames.js';
import { surfaceFor } from '../../../src/adapters/registry.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import { evidenceProblem, schemaProblem } from '../../support/mapping-fixture.js';

const surface = surfaceFrom(opencode);
const S = 'ses_db0bab0afffe5NsNvNuJQPNqH3';
const frame = (type: string, data: Record<string, unknown>) =>
  JSON.stringify({
    id: 'evt_1',
    type,
    durable: { aggregateID: S, seq: 1, version: 1 },
    location: { directory: '/p' },
    data: { sessionID: S, ...data },
  });
const input = (type: string, data: Record<string, unknown>, first = false) =>
  arrivalBody(parseOpencodeEvent(frame(type, data))!, first);

test('the registry hands out the opencode surface under its token', () => {
  const s = surfaceFor('opencode');
  assert.ok(s);
  assert.is(s.steeringType, 'x.opencode.control.instruct');
});

test('frames of the event stream map to AEP observations that match the schemas', () => {
  const cases: [Record<string, unknown>, string[]][] = [
    [input('aep.session.seen', {}, true), ['session.started']],
    [input('aep.turn.started', { turnId: 'msg_1' }), ['run.started']],
    [input('aep.turn.ended', { turnId: 'msg_1', interrupted: false }), ['run.finished']],
    [input('aep.turn.ended', { turnId: 'msg_1', interrupted: true }), []],
    [
      input('session.next.tool.called', { callID: 'call_1', tool: 'bash', input: { command: 'ls' } }),
      ['tool.requested'],
    ],
    [input('session.next.tool.success', { callID: 'call_1', tool: 'bash' }), ['tool.completed']],
    [
      input('session.next.tool.failed', {
        callID: 'call_1',
        error: { type: 'unknown', message: 'Tool execution interrupted' },
      }),
      ['tool.failed'],
    ],
    [input('permission.v2.asked', { id: 'per_1', action: 'bash', resources: ['ls'] }), []],
  ];
  for (const [body, types] of cases) {
    const c = surface.classify(body);
    assert.is(c.session, S);
    assert.equal(
      c.observations.map((o) => o.type),
      types,
      String(body.hook_event_name),
    );
    for (const o of c.observations) assert.is(schemaProblem(o), undefined, o.type);
  }
  const failed = surface.classify(
    input('session.next.tool.failed', { callID: 'c', error: { message: 'Tool execution interrupted' } }),
  );
  assert.equal((failed.observations[0]!.data as { error: unknown }).error, { type: 'interrupt' });
  const run = surface.classify(input('aep.turn.started', { turnId: 'msg_9' }));
  assert.is(run.observations[0]!.run, 'msg_9', 'each turn is its own run');
});

test('no frame carries steering (nothing is written back); session.deleted ends the session', () => {
  for (const event of Object.keys(opencode.moments)) {
    const row = opencode.moments[event]!;
    assert.ok(row.role === 'observe' || row.role === 'end', event);
  }
  assert.is(surface.classify(input('session.deleted', {})).class.kind, 'end');
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(opencode.moments))
    assert.is(evidenceProblem(row.evidence), undefined, event);
  assert.is(evidenceProblem(opencode.cancel!.evidence), undefined, 'cancel');
});

test.run();
