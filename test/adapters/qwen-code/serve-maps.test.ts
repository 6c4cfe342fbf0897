// The qwen serve lane's maps, pure: SSE frames (shaped as Qwen Code 0.24.4 sent them) as lane
// facts, and the daemon's HTTP answers as lane outcomes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  factsOf,
  optionsOf,
  parseServeEvent,
  permissionAnswer,
  queueOutcome,
  removedOf,
  steerOutcome,
  type ServeEvent,
  type SessionView,
} from '../../../src/adapters/qwen-code/serve/maps.js';
import { sseData } from '../../../src/adapters/qwen-code/serve/sse.js';
import { qwenCode } from '../../../src/adapters/qwen-code/table.js';
import { readFileSync } from 'node:fs';

const S = 'sess-1';
const AT = 1000;
const view = (o: Partial<SessionView> = {}): SessionView => ({
  ended: new Set(),
  commandOf: (ref) => ({ 'm-1': 'cmd-1', 'p-q': 'cmd-q' })[ref],
  optionsOf: () => undefined,
  ...o,
});
const ev = (type: string, promptId: string | undefined, data: Record<string, unknown> = {}): ServeEvent => ({
  type,
  ...(promptId === undefined ? {} : { promptId }),
  data: { sessionId: S, ...data },
});

test('SSE text splits into frame data; a partial frame waits for the next chunk', () => {
  const text = 'id: 1\nevent: session_update\ndata: {"id":1}\n\nid: 2\r\ndata: {"id":2}\r\n\r\nid: 3\ndata: {"i';
  assert.equal(sseData(text), { frames: ['{"id":1}', '{"id":2}'], rest: 'id: 3\ndata: {"i' });
  assert.equal(sseData(': keepalive\n\n'), { frames: [], rest: '' }, 'a comment frame carries no data');
});

test('an envelope parses; anything else is no event', () => {
  assert.equal(
    parseServeEvent('{"id":7,"v":1,"type":"turn_complete","promptId":"p1","data":{"stopReason":"end_turn"}}'),
    {
      id: 7,
      type: 'turn_complete',
      promptId: 'p1',
      data: { stopReason: 'end_turn' },
    },
  );
  assert.is(parseServeEvent('not json'), undefined);
  assert.is(parseServeEvent('{"id":1}'), undefined);
  assert.is(parseServeEvent('[1]'), undefined);
});

test("a prompt's first frame starts its turn; its later frames and other prompts' queue entries do not", () => {
  const echo = ev('session_update', 'p1', { update: { sessionUpdate: 'user_message_chunk' } });
  assert.equal(factsOf(S, echo, view(), AT), [{ kind: 'turn.started', session: S, at: AT, turnId: 'p1' }]);
  assert.equal(factsOf(S, echo, view({ turn: 'p1' }), AT), [], 'already running');
  assert.equal(factsOf(S, echo, view({ ended: new Set(['p1']) }), AT), [], 'a late frame of an ended turn');
  assert.equal(factsOf(S, ev('pending_prompt_added', 'p2'), view({ turn: 'p1' }), AT), [], 'queued, not started');
  assert.equal(factsOf(S, ev('session_update', undefined, { update: {} }), view(), AT), [], 'no prompt: no turn');
  assert.equal(factsOf(S, ev('followup_suggestion', undefined, { promptId: 'x####1' }), view(), AT), []);
});

test('turn_complete ends the prompt it names, with its stop reason', () => {
  const done = ev('turn_complete', 'p1', { promptId: 'p1', stopReason: 'cancelled' });
  assert.equal(factsOf(S, done, view({ turn: 'p1' }), AT), [
    { kind: 'turn.ended', session: S, at: AT, turnId: 'p1', status: 'cancelled', interrupted: true },
  ]);
  assert.equal(factsOf(S, done, view({ ended: new Set(['p1']) }), AT), [], 'once');
});

test('a queued prompt taken back gets a turn_complete of its own: it ends no turn while another runs', () => {
  const removed = ev('turn_complete', 'p-q', { promptId: 'p-q', stopReason: 'cancelled' });
  assert.equal(factsOf(S, removed, view({ turn: 'p1' }), AT), [], 'the running turn p1 goes on');
});

test('a queue sent while no turn ran starts its turn with its echo: that start is its receipt', () => {
  const echo = ev('session_update', 'p-q', { update: { sessionUpdate: 'user_message_chunk' } });
  assert.equal(factsOf(S, echo, view(), AT), [
    { kind: 'turn.started', session: S, at: AT, turnId: 'p-q' },
    { kind: 'delivered', session: S, at: AT, commandId: 'cmd-q', ref: 'p-q' },
  ]);
  assert.equal(factsOf(S, echo, view({ turn: 'p-q' }), AT), [], 'its later frames are no second receipt');
});

test("mid_turn_message_injected is the receipt of the lane's own message ids only", () => {
  const injected = ev('mid_turn_message_injected', 'p1', {
    messages: ['STEER', 'from the web shell'],
    messageIds: ['m-1', 'web-7'],
  });
  assert.equal(factsOf(S, injected, view({ turn: 'p1' }), AT), [
    { kind: 'delivered', session: S, at: AT, commandId: 'cmd-1', ref: 'm-1' },
  ]);
});

test("pending_prompt_started starts the queued prompt's turn and is its receipt (and a promoted message's)", () => {
  assert.equal(factsOf(S, ev('pending_prompt_started', 'p-q', { promptId: 'p-q' }), view(), AT), [
    { kind: 'turn.started', session: S, at: AT, turnId: 'p-q' },
    { kind: 'delivered', session: S, at: AT, commandId: 'cmd-q', ref: 'p-q' },
  ]);
  // A mid-turn message still waiting at a cancel runs as a prompt whose id is the message id.
  assert.equal(factsOf(S, ev('pending_prompt_started', 'm-1', { promptId: 'm-1' }), view(), AT), [
    { kind: 'turn.started', session: S, at: AT, turnId: 'm-1' },
    { kind: 'delivered', session: S, at: AT, commandId: 'cmd-1', ref: 'm-1' },
  ]);
  assert.equal(factsOf(S, ev('pending_prompt_started', 'p-other', { promptId: 'p-other' }), view(), AT), [
    { kind: 'turn.started', session: S, at: AT, turnId: 'p-other' },
  ]);
});

const request = ev('permission_request', 'p1', {
  requestId: 'r-1',
  toolCall: {
    _meta: { toolName: 'run_shell_command' },
    kind: 'execute',
    rawInput: { command: 'rm -rf build/', description: 'clean', is_background: false },
    title: 'rm -rf build/ (clean)',
    toolCallId: 'call_1',
  },
  options: [
    { kind: 'allow_once', name: 'Allow', optionId: 'proceed_once' },
    { kind: 'allow_once', name: 'Switch to Default Mode and allow once', optionId: 'proceed_once_and_switch' },
    { kind: 'reject_once', name: 'Reject', optionId: 'cancel' },
    { name: 'no kind' },
  ],
});

test('permission_request is an approval saying what the tool will do; its options are kept for the answer', () => {
  assert.equal(factsOf(S, request, view({ turn: 'p1' }), AT), [
    {
      kind: 'approval',
      session: S,
      at: AT,
      approvalId: 'r-1',
      request: {
        kind: 'permission',
        prompt: 'qwen-code requests permission to use run_shell_command',
        subject: 'run_shell_command',
        options: [
          { id: 'allow', label: 'Allow' },
          { id: 'deny', label: 'Deny' },
        ],
        respondVia: ['control', 'oob'],
        context: { requestId: 'r-1', toolCallId: 'call_1' },
        detail: 'rm -rf build/',
      },
    },
  ]);
  const options = optionsOf(request);
  assert.equal(
    options.map((o) => o.optionId),
    ['proceed_once', 'proceed_once_and_switch', 'cancel'],
  );
  assert.equal(permissionAnswer(options, true), { outcome: { outcome: 'selected', optionId: 'proceed_once' } });
  assert.equal(permissionAnswer(options, false), { outcome: { outcome: 'selected', optionId: 'cancel' } });
  assert.equal(permissionAnswer(options.slice(0, 1), false), { outcome: { outcome: 'cancelled' } }, 'no reject option');
});

test('permission_resolved says approved or denied by the option chosen; unknown when the options are not known', () => {
  const options = optionsOf(request);
  const resolved = (optionId: string) =>
    ev('permission_resolved', 'p1', { requestId: 'r-1', outcome: { outcome: 'selected', optionId } });
  const known = view({ optionsOf: (id) => (id === 'r-1' ? options : undefined) });
  assert.equal(factsOf(S, resolved('proceed_once'), known, AT), [
    { kind: 'approval.resolved', session: S, at: AT, approvalId: 'r-1', approved: true },
  ]);
  assert.equal(factsOf(S, resolved('cancel'), known, AT), [
    { kind: 'approval.resolved', session: S, at: AT, approvalId: 'r-1', approved: false },
  ]);
  assert.equal(factsOf(S, resolved('cancel'), view(), AT), [
    { kind: 'approval.resolved', session: S, at: AT, approvalId: 'r-1' },
  ]);
});

test('steer answers: accepted, idle (or turn-ended when a turn was seen running), another text, errors', () => {
  assert.equal(steerOutcome({ status: 200, body: { accepted: true, messageId: 'c1' } }, 'c1', true), {
    ok: true,
    ref: 'c1',
  });
  const idle = { status: 200, body: { accepted: false, reason: 'session_idle' } };
  assert.equal(steerOutcome(idle, 'c1', false).ok === false && steerOutcome(idle, 'c1', false), {
    ok: false,
    reason: 'idle',
    detail: 'no turn runs in this qwen serve session; a steer never starts one',
  });
  const raced = steerOutcome(idle, 'c1', true);
  assert.equal(raced.ok ? raced : raced.reason, 'turn-ended');
  const other = steerOutcome({ status: 200, body: { accepted: false } }, 'c1', true);
  assert.equal(other.ok ? other : [other.reason, other.detail], [
    'refused',
    'qwen serve refused message id c1: it already holds another text under that id',
  ]);
  const big = steerOutcome({ status: 400, body: { error: '`message` must be at most 16384 characters' } }, 'c1', true);
  assert.equal(big.ok ? big : [big.reason, big.detail], [
    'refused',
    'qwen serve answered the mid-turn message with HTTP 400: `message` must be at most 16384 characters',
  ]);
  const gone = steerOutcome({ status: 404, body: { error: 'session not found' } }, 'c1', true);
  assert.equal(gone.ok ? gone : gone.reason, 'unreachable');
});

test('queue and withdrawal answers', () => {
  assert.equal(queueOutcome({ status: 202, body: { promptId: 'p9', lastEventId: 3 } }), { ok: true, ref: 'p9' });
  const full = queueOutcome({ status: 503, body: { code: 'prompt_queue_full' } });
  assert.equal(full.ok ? full : [full.reason, full.detail], [
    'unreachable',
    'qwen serve answered the queued prompt with HTTP 503: prompt_queue_full',
  ]);
  assert.equal(removedOf({ status: 200, body: { removed: true } }), { removed: true });
  assert.equal(removedOf({ status: 200, body: { removed: false } }), { removed: false });
  assert.equal(removedOf({ status: 404, body: { error: 'no session' } }), {
    error: 'qwen serve answered the withdrawal with HTTP 404: no session',
  });
});

test("the vendor table's lane row names the end-to-end tests that prove it", () => {
  const row = qwenCode.lanes?.find((l) => l.joins === 'attached');
  if (row?.joins !== 'attached') throw new Error('the Qwen Code table attaches no lane');
  assert.is(row.name, 'serve');
  assert.equal(
    qwenCode.options?.map((o) => [o.flag, o.env, o.sets]),
    [
      ['--serve <url>', 'AEP_QWEN_SERVE_URL', 'lane-url'],
      ['--serve-token-file <path>', 'AEP_QWEN_SERVE_TOKEN_FILE', 'lane-token-file'],
    ],
  );
  const refs = row.evidence.split(/; (?=e2e\/)/);
  assert.ok(refs.length >= 2, row.evidence);
  for (const ref of refs) {
    const m = /^e2e\/(qwen-serve-(?:lane|adapter))#(.+)$/.exec(ref);
    assert.ok(m, ref);
    const e2e = readFileSync(new URL(`../../e2e/${m![1]}.e2e.ts`, import.meta.url), 'utf8');
    assert.ok(
      [`test('${m![2]}'`, `test("${m![2]}"`].some((s) => e2e.includes(s)),
      `no e2e test named "${m![2]}" in ${m![1]}`,
    );
  }
});

test.run();
