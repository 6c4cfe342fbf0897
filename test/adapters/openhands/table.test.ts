// The OpenHands table and its pure mapping, tested as data against the AEP mapping fixture (read
// in place). The fixture's inputs are transport-shaped at v1.35 (no parent_id); every entry is
// also run with a v1.37-style parent_id added, which must change nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { openhands } from '../../../src/adapters/openhands/table.js';
import { kindType, mapEvent, mapFrame, statusMoments, type Status } from '../../../src/adapters/openhands/map.js';
import { canonicalJson, digest } from '../../../src/adapters/hook-maps.js';
import { surfaceFor } from '../../../src/adapters/registry.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';
import type { ObservationSpec } from '../../../src/streams/surface.js';
import { classSummary, evidenceProblem, schemaProblem } from '../../support/mapping-fixture.js';
import { aepFile, readJson } from '../../support/shared-dir.js';

type Expected = { type: string; data?: Record<string, unknown>; subject?: string; step?: string };
interface Entry {
  input: Record<string, unknown>;
  expected: Expected | null;
  deltas_expected?: Expected | null;
}
interface Fixture {
  events: Record<string, Entry>;
  fallback: Entry;
  status_transitions: Record<
    string,
    { prev: Status | null; next: Status; expected: { type: string; data: Record<string, unknown> }[] }
  >;
}

const fixture = readJson<Fixture>(aepFile('fixtures', 'mappings', 'openhands.json'));

const shape = (o: ObservationSpec): Expected => {
  const out: Expected = { type: o.type, data: o.data ?? {} };
  if (o.subject !== undefined) out.subject = o.subject;
  if (o.step !== undefined) out.step = o.step;
  return out;
};

/**
 * The fixture's args_digest is not the digest of its arguments: for `{"command":"ls -la"}` the
 * Codex fixture pins 1df8…, the digest this project computes everywhere (AEP-0003 §9.3), and the
 * OpenHands fixture the digest of the whole `action` object written as canonical JSON text and
 * that text digested again as a JSON string (encoded twice; the test below shows it). The digest
 * is checked for its form and for being the one the arguments give; every other field exactly.
 */
function withoutArgsDigest(e: Expected): Expected {
  if (e.data?.args_digest === undefined) return e;
  const { args_digest: _d, ...data } = e.data;
  return { ...e, data };
}

const entries = (): [string, Entry][] => [...Object.entries(fixture.events), ['(fallback)', fixture.fallback]];

test('every fixture event maps to its pinned AEP event at the default posture (deltas off)', () => {
  assert.ok(entries().length >= 22);
  for (const [name, entry] of entries()) {
    const got = mapEvent(entry.input).map(shape);
    const want = entry.expected === null ? [] : [entry.expected];
    assert.equal(got.map(withoutArgsDigest), want.map(withoutArgsDigest), name);
    for (const g of got)
      if (g.data?.args_digest !== undefined) assert.match(String(g.data.args_digest), /^[0-9a-f]{32}$/, name);
  }
});

test("the fixture's args_digest is the action object encoded twice; the mapping digests the arguments", () => {
  const entry = Object.values(fixture.events).find((e) => e.input.kind === 'ActionEvent')!;
  const action = entry.input.action as Record<string, unknown>;
  assert.is(
    entry.expected!.data!.args_digest,
    digest(canonicalJson(action)),
    'canonical JSON text of the action, digested as a string',
  );
  assert.is.not(entry.expected!.data!.args_digest, digest(action));
  const args = JSON.parse(
    String((entry.input.tool_call as { function: { arguments: string } }).function.arguments),
  ) as unknown;
  assert.is(mapEvent(entry.input)[0]!.data!.args_digest, digest(args));
});

test('AEP_OPENHANDS_DELTAS: StreamingDeltaEvent maps under the opt-in; TokenEvent maps to nothing even then', () => {
  for (const [name, entry] of entries()) {
    if (!('deltas_expected' in entry)) continue;
    const got = mapEvent(entry.input, { deltas: true }).map(shape);
    assert.equal(got, entry.deltas_expected === null ? [] : [entry.deltas_expected], name);
  }
});

test('events with a v1.37 parent_id map exactly as the stripped v1.36 transport shape does', () => {
  for (const [name, entry] of entries()) {
    const withParent = { ...entry.input, parent_id: 'ev_parent_0' };
    assert.equal(mapEvent(withParent).map(shape), mapEvent(entry.input).map(shape), name);
  }
});

test('the status plane: every pinned transition gives the pinned moments', () => {
  const cases = Object.entries(fixture.status_transitions);
  assert.ok(cases.length >= 16);
  for (const [name, c] of cases) assert.equal(statusMoments(c.prev, c.next), c.expected, name);
});

test('a framed status flip carries the run ids: run.started the new run, a closer the run it closes', () => {
  const flip = (value: Status) => ({
    kind: 'ConversationStateUpdateEvent',
    id: `ev_${value}`,
    timestamp: '2026-07-12T10:15:00.123456',
    source: 'environment',
    key: 'execution_status',
    value,
  });
  const opened = mapFrame({
    conversation_id: 'c1',
    event: flip('running'),
    status_before: 'idle',
    run_after: 'run:c1:1',
  });
  assert.equal(
    opened.map((o) => [o.type, o.run]),
    [
      ['state.delta', undefined],
      ['run.started', 'run:c1:1'],
    ],
  );
  const waiting = mapFrame({
    conversation_id: 'c1',
    event: flip('waiting_for_confirmation'),
    status_before: 'running',
    run_before: 'run:c1:1',
    run_after: 'run:c1:1',
    attention: 'att_1',
  });
  assert.equal(
    waiting.map((o) => [o.type, o.run, o.id]),
    [
      ['state.delta', 'run:c1:1', undefined],
      ['attention.requested', 'run:c1:1', 'att_1'],
    ],
  );
  const answered = mapFrame({
    conversation_id: 'c1',
    event: flip('running'),
    status_before: 'waiting_for_confirmation',
    run_before: 'run:c1:1',
    run_after: 'run:c1:1',
    attention: 'att_1',
  });
  assert.equal(
    answered.map((o) => [o.type, o.subject]),
    [
      ['state.delta', undefined],
      ['attention.resolved', 'att_1'],
    ],
  );
  const done = mapFrame({
    conversation_id: 'c1',
    event: flip('finished'),
    status_before: 'running',
    run_before: 'run:c1:1',
  });
  assert.equal(
    done.map((o) => [o.type, o.run]),
    [
      ['state.delta', 'run:c1:1'],
      ['run.finished', 'run:c1:1'],
    ],
  );
});

test('first sight opens the session: session.started with the server as client, then the event', () => {
  const got = mapFrame({
    conversation_id: 'c1',
    first: true,
    event: fixture.events.state_full!.input,
    status_before: null,
    run_after: 'run:c1:1',
  });
  assert.equal(
    got.map((o) => o.type),
    ['session.started', 'state.snapshot', 'run.started'],
  );
  assert.equal(got[0]!.data, { client: { name: 'openhands-agent-server' } });
});

test('vendor types are mechanical from the kind, two segments after the token', () => {
  assert.is(kindType('MessageEvent'), 'x.openhands.message.event');
  assert.is(kindType('ACPToolCallEvent'), 'x.openhands.acp_tool.call');
  assert.is(kindType('UserRejectObservation'), 'x.openhands.user_reject.observation');
  assert.is(kindType('LLMCompletionLogEvent'), 'x.openhands.llm_completion.log');
  assert.is(kindType('Brandnew'), 'x.openhands.brandnew.event');
});

test('the table: conversation id is the session, the kind the event; deleting is the end moment, nothing is eligible', () => {
  const surface = surfaceFrom(openhands);
  const c = surface.classify({ conversation_id: 'c1', event: fixture.events.action_event!.input });
  assert.is(c.session, 'c1');
  assert.is(c.event, 'ActionEvent');
  assert.is(classSummary(c.class), 'ineligible');
  const del = surface.classify({
    conversation_id: 'c1',
    status_before: 'running',
    run_before: 'run:c1:1',
    event: {
      kind: 'ConversationStateUpdateEvent',
      id: 'x',
      timestamp: 't',
      source: 'environment',
      key: 'execution_status',
      value: 'deleting',
    },
  });
  assert.is(classSummary(del.class), 'end');
  assert.equal(del.class, { kind: 'end', reason: 'killed' });
  assert.equal(
    del.observations.map((o) => o.type),
    ['state.delta', 'run.cancelled'],
  );
  assert.throws(() => surface.classify({ event: {} }), /lacks its session id/);
});

test('the registry hands out the OpenHands surface: send_input, port 8397, no held loop', () => {
  const s = surfaceFor('openhands');
  assert.ok(s);
  assert.is(s.steeringType, 'x.openhands.control.send_input');
  assert.is(s.port, 8397);
  assert.is(s.holds, false);
});

test('observations validate against the AEP payload schemas', () => {
  for (const [name, entry] of entries())
    for (const o of mapEvent(entry.input, { deltas: true })) assert.is(schemaProblem(o), undefined, name);
  for (const c of Object.values(fixture.status_transitions))
    for (const m of statusMoments(c.prev, c.next)) assert.is(schemaProblem(m), undefined, m.type);
});

test('every evidence string resolves', () => {
  for (const [event, row] of Object.entries(openhands.moments))
    assert.is(evidenceProblem(row.evidence), undefined, event);
});

test.run();
