// Attaching to a conversation that already has a history, as the real agent server sends it
// (software-agent-sdk v1.36.1 and main; tracker.ts cites the source): the `full_state` snapshot
// first, made at subscribe time and never stored, then the stored log resent, status changes
// included, while live events may overtake the resend. Replayed status changes are history: the
// bridge invents no run and no answer from them; the reconnect cursor is where the resend stood,
// never the snapshot's time; the tool call is the SDK's MessageToolCall with a plain `arguments`.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mapFrame } from '../../../src/adapters/openhands/map.js';
import { ConversationTracker } from '../../../src/adapters/openhands/tracker.js';
import { digest } from '../../../src/adapters/hook-maps.js';
import type { ObservationSpec } from '../../../src/streams/surface.js';
import type { AepEvent } from '../../../src/protocol/index.js';
import { startOpenHandsStack } from '../../support/openhands-stack.js';

const C = 'conv-replay';
const ts = (s: number) => `2026-12-01T10:00:${String(s).padStart(2, '0')}.000100`;
const status = (id: string, s: number, value: string) => ({
  id,
  timestamp: ts(s),
  source: 'environment',
  kind: 'ConversationStateUpdateEvent',
  key: 'execution_status',
  value,
});
const fullState = (s: number, execution: string) => ({
  id: `full-${s}`,
  timestamp: ts(s),
  source: 'environment',
  kind: 'ConversationStateUpdateEvent',
  key: 'full_state',
  value: { id: C, execution_status: execution, confirmation_policy: 'AlwaysConfirm', max_iterations: 500 },
});
const action = (id: string, s: number) => ({
  id,
  timestamp: ts(s),
  source: 'agent',
  kind: 'ActionEvent',
  thought: [],
  tool_name: 'execute_bash',
  tool_call_id: 'call_1',
  // MessageToolCall (openhands-sdk llm/message.py): `arguments` is a JSON string, no `function`.
  tool_call: { id: 'call_1', name: 'execute_bash', arguments: '{"command":"rm -rf build"}', origin: 'completion' },
  llm_response_id: 'resp_1',
  security_risk: 'LOW',
  action: { kind: 'ExecuteBashAction', command: 'rm -rf build', is_input: false },
});
const userMessage = (id: string, s: number) => ({
  id,
  timestamp: ts(s),
  source: 'user',
  kind: 'MessageEvent',
  llm_message: { role: 'user', content: [{ type: 'text', text: 'clean up' }] },
  activated_skills: [],
  sender: null,
});

function feed(t: ConversationTracker, events: Record<string, unknown>[]): ObservationSpec[] {
  return events.flatMap((e) => {
    const f = t.frame(e, Date.now(), false, true);
    return f === undefined ? [] : mapFrame(f);
  });
}

test('first attach to a conversation waiting for confirmation: one run, one open request, nothing answered', () => {
  const t = new ConversationTracker(C);
  t.attached();
  const out = feed(t, [
    fullState(9, 'waiting_for_confirmation'),
    // The stored log, resent behind the snapshot.
    status('s1', 1, 'idle'),
    userMessage('m1', 2),
    status('s2', 3, 'running'),
    action('a1', 4),
    status('s3', 5, 'waiting_for_confirmation'),
  ]);
  const types = out.map((o) => o.type);
  assert.equal(types.filter((x) => x === 'run.started').length, 1, types.join(' '));
  assert.equal(types.filter((x) => x === 'attention.requested').length, 1, 'the confirmation still waits');
  assert.equal(
    types.filter((x) => x === 'attention.resolved' || x === 'attention.answered' || x === 'run.finished').length,
    0,
    types.join(' '),
  );
  assert.is(t.lastStatus, 'waiting_for_confirmation');
  assert.equal(
    types.filter((x) => x === 'state.delta').length,
    3,
    'the resent status changes are on the stream as what they are',
  );
  const requested = out.find((o) => o.type === 'tool.requested')!;
  assert.is(requested.data?.args_digest, digest({ command: 'rm -rf build' }), 'the digest of tool_call.arguments');
  // Now the person answers: the live flip out of waiting resolves the request once.
  const live = feed(t, [status('s4', 12, 'running')]).map((o) => o.type);
  assert.ok(live.includes('attention.resolved'), live.join(' '));
  assert.not.ok(live.includes('run.started'), 'the same run goes on');
});

test('first attach to a finished conversation invents no run', () => {
  const t = new ConversationTracker(C);
  t.attached();
  const out = feed(t, [
    fullState(20, 'finished'),
    status('s1', 1, 'running'),
    action('a1', 2),
    status('s2', 3, 'finished'),
    status('s3', 4, 'idle'),
  ]);
  const types = out.map((o) => o.type);
  assert.equal(
    types.filter((x) => x.startsWith('run.')),
    [],
    types.join(' '),
  );
  assert.not.ok(types.includes('attention.requested'));
});

test('the reconnect cursor is where the resend stood: never the snapshot, never a live event that overtook it', () => {
  const t = new ConversationTracker(C);
  t.attached();
  feed(t, [fullState(30, 'running'), userMessage('m1', 1), status('s1', 2, 'running')]);
  assert.is(t.since, ts(2), "not the snapshot's time");
  // A live event overtakes the rest of the resend, then the socket drops.
  feed(t, [action('live-1', 31)]);
  assert.is(t.since, ts(2), 'a drop now resumes from the resend, so its older rest is not skipped');
  // The reconnect: a new snapshot, the resend since the cursor (overlap deduped), the rest arrives.
  t.attached();
  const again = feed(t, [
    fullState(40, 'running'),
    status('s1', 2, 'running'),
    action('a-rest', 3),
    action('live-1', 31),
  ]);
  assert.equal(
    again.filter((o) => o.type === 'tool.requested').map((o) => o.data?.vendor_event_id),
    ['a-rest'],
    'the skipped-over event arrives, once',
  );
  assert.is(t.since, ts(31));
});

test('a restarted bridge resumes where the resend stood, from its own log', () => {
  const logged = (type: string, s: number, id: string): AepEvent => ({
    aep: '0.1',
    id: `aep-${id}`,
    type,
    time: '2026-12-01T10:00:00Z',
    source: 'aep://h/agent/openhands',
    agent: 'openhands',
    session: C,
    data: { vendor_ts: ts(s), vendor_event_id: id },
  });
  const t = new ConversationTracker(C);
  // Arrival order: the snapshot, two resent events, then a live one that overtook the resend.
  t.restore([
    logged('state.snapshot', 9, 'full-9'),
    logged('x.openhands.message.event', 1, 'm1'),
    logged('state.delta', 2, 's1'),
    logged('tool.requested', 10, 'live'),
  ]);
  assert.is(t.since, ts(2));
  const fresh = new ConversationTracker(C);
  fresh.restore([
    logged('state.snapshot', 9, 'full-9'),
    logged('tool.requested', 10, 'live'),
    logged('tool.completed', 11, 'live-2'),
  ]);
  assert.is(fresh.since, ts(10), 'nothing was resent: from the oldest event seen');
});

test('the bridge attached to a stand-in conversation that already waits for confirmation: no run or answer invented', async () => {
  let id = '';
  const stack = await startOpenHandsStack({
    control: true,
    beforeBridge: async (server) => {
      id = server.create({ message: '[[TURN]] [[TOOLS:1]] run it', confirmation: true, run: true });
      await server.until(id, 'waiting_for_confirmation');
    },
  });
  try {
    // The stored log holds the status changes the real server stores.
    assert.ok(
      stack.server
        .conversation(id)!
        .events.some((e) => e.kind === 'ConversationStateUpdateEvent' && e.value === 'running'),
    );
    await stack.waitFor((e) => e.session === id && e.type === 'attention.requested');
    await stack.waitFor((e) => e.session === id && e.type === 'tool.requested');
    await new Promise((r) => setTimeout(r, 300));
    const types = stack.session(id).map((e) => e.type);
    assert.equal(types.filter((x) => x === 'run.started').length, 1, types.join(' '));
    assert.equal(types.filter((x) => x === 'attention.requested').length, 1, types.join(' '));
    assert.equal(
      types.filter((x) => x === 'attention.answered' || x === 'attention.resolved' || x === 'run.finished').length,
      0,
      types.join(' '),
    );
    const tool = stack.session(id).find((e) => e.type === 'tool.requested')!;
    const call = stack.server.conversation(id)!.events.find((e) => e.kind === 'ActionEvent')!.tool_call as {
      arguments: string;
    };
    assert.is(tool.data?.['args_digest'], digest(JSON.parse(call.arguments)));
  } finally {
    await stack.stop();
  }
});

test.run();
