// surfaceFrom interprets any table: a small made-up vendor exercises every row kind without any
// real vendor's data, so the interpreter cannot be leaning on one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { byFields, collapseEndReason, fallbackType, snakeCase, type VendorTable } from '../../src/adapters/table.js';
import { holdsAny, optionFor, surfaceFrom } from '../../src/adapters/surface-from.js';
import { vendorTables } from '../../src/adapters/registry.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import { SteeringError } from '../../src/protocol/errors.js';

const toy: VendorTable = {
  token: 'toy-agent',
  version: '1.0.0',
  steering: 'send_input',
  port: 9999,
  attentionTimeoutMs: 1234,
  identify: byFields('sid', 'event'),
  subagent: (input) => input.child === true,
  unlistedReason: 'not listed',
  moments: {
    turn_start: { role: 'context', evidence: 'toy §1' },
    hello: { role: 'observe', starts: true, reason: 'greeting only', evidence: 'toy §0' },
    turn_end: { role: 'context', unless: (i) => (i.again === true ? 'second end' : undefined), evidence: 'toy §2' },
    chatter: { role: 'observe', reason: 'nobody reads it', evidence: 'toy §3' },
    ask: {
      role: 'held',
      hold: (i) => ({
        hold: 'permission',
        request: { kind: 'permission', prompt: `may I ${String(i.what)}`, options: [{ id: 'allow', label: 'Allow' }] },
      }),
      decide: (_h, d) => ({ verdict: d.option, why: d.message }),
      evidence: 'toy §4',
    },
    bye: { role: 'end', reason: (i) => collapseEndReason(i.why), evidence: 'toy §5' },
    tool: {
      role: 'gated',
      tool: (i) => String(i.name),
      hold: (i) => ({ hold: 'permission', request: { kind: 'permission', prompt: `run ${String(i.name)}?` } }),
      decide: (_h, d) => ({ gate: d.option }),
      open: { role: 'context', evidence: 'toy §7' },
      evidence: 'toy §6',
    },
  },
  options: [
    { flag: '--control', env: 'TOY_CONTROL', sets: 'gate', help: 'hold tool' },
    { flag: '--gate-tools <regex>', env: 'TOY_GATE_TOOLS', sets: 'gate-tools', help: 'which tools' },
  ],
  replies: { neutral: undefined, context: (event, text) => ({ ctx: text, at: event }) },
  maps: { turn_start: () => [{ type: 'run.started', data: { trigger: 'user' } }], chatter: () => [] },
};
const s = surfaceFrom(toy);

test("the surface carries the table's token, steering verb, port and timeout", () => {
  assert.is(s.token, 'toy-agent');
  assert.is(s.steeringType, 'x.toy-agent.control.send_input');
  assert.is(s.port, 9999);
  assert.is(s.attentionTimeoutMs, 1234);
});

test('each row kind classifies as its role says', () => {
  assert.equal(s.classify({ sid: 'a', event: 'turn_start' }).class, { kind: 'moment', eligible: true });
  assert.equal(s.classify({ sid: 'a', event: 'turn_end', again: true }).class, {
    kind: 'moment',
    eligible: false,
    reason: 'second end',
  });
  assert.equal(s.classify({ sid: 'a', event: 'turn_end' }).class, { kind: 'moment', eligible: true });
  assert.equal(s.classify({ sid: 'a', event: 'chatter' }).class, {
    kind: 'moment',
    eligible: false,
    reason: 'nobody reads it',
  });
  assert.equal(s.classify({ sid: 'a', event: 'bye' }).class, { kind: 'end', reason: 'normal' });
  assert.equal(s.classify({ sid: 'a', event: 'bye', why: 'killed by signal' }).class, {
    kind: 'end',
    reason: 'killed',
  });
  assert.equal(s.classify({ sid: 'a', event: 'mystery' }).class, {
    kind: 'moment',
    eligible: false,
    reason: 'not listed',
  });
  const held = s.classify({ sid: 'a', event: 'ask', what: 'jump' });
  assert.equal(held.class, {
    kind: 'held',
    hold: 'permission',
    request: { kind: 'permission', prompt: 'may I jump', options: [{ id: 'allow', label: 'Allow' }] },
  });
  assert.is(held.session, 'a');
  assert.is(held.event, 'ask');
});

test("a subagent's context moment is never eligible, whatever the row says", () => {
  const c = s.classify({ sid: 'a', event: 'turn_start', child: true });
  assert.is(c.class.kind === 'moment' && c.class.eligible, false);
});

test('replies: context only at eligible moments, decisions only on held rows, neutral otherwise', () => {
  const start = s.classify({ sid: 'a', event: 'turn_start' });
  const chatter = s.classify({ sid: 'a', event: 'chatter' });
  const ask = s.classify({ sid: 'a', event: 'ask', what: 'x' });
  assert.equal(s.contextReply(start, 'hello').body, { ctx: 'hello', at: 'turn_start' });
  assert.is(s.contextReply(chatter, 'hello').body, undefined);
  assert.is(s.contextReply(ask, 'hello').body, undefined);
  assert.equal(s.decisionReply(ask, { option: 'deny', message: 'no' }).body, { verdict: 'deny', why: 'no' });
  assert.is(s.decisionReply(ask, undefined).body, undefined);
  assert.is(s.decisionReply(start, { option: 'allow' }).body, undefined);
  assert.is(s.neutralReply(undefined).body, undefined);
});

test('observations come from maps; an unmapped hook gets x.{token}.session.<snake_case>', () => {
  assert.equal(s.classify({ sid: 'a', event: 'turn_start' }).observations, [
    { type: 'run.started', data: { trigger: 'user' } },
  ]);
  assert.equal(s.classify({ sid: 'a', event: 'chatter' }).observations, []);
  assert.equal(s.classify({ sid: 'a', event: 'mystery' }).observations, [
    { type: 'x.toy-agent.session.mystery', data: { hook: 'mystery' } },
  ]);
});

test('unreadable bodies are SteeringError HOOK_BODY_INVALID, including a row that throws', () => {
  const throwing = surfaceFrom({
    ...toy,
    maps: {
      boom: () => {
        throw new TypeError('bad');
      },
    },
  });
  for (const [surface, body] of [
    [s, {}],
    [s, { sid: 'a' }],
    [s, []],
    [throwing, { sid: 'a', event: 'boom' }],
  ] as const) {
    try {
      surface.classify(body as Record<string, unknown>);
      assert.unreachable('should throw');
    } catch (e) {
      assert.instance(e, SteeringError);
      assert.is((e as SteeringError).code, 'HOOK_BODY_INVALID');
    }
  }
});

test('a start row marks its moment starts, except inside a subagent', () => {
  assert.equal(s.classify({ sid: 'a', event: 'hello' }).class, {
    kind: 'moment',
    eligible: false,
    reason: 'greeting only',
    starts: true,
  });
  assert.equal(s.classify({ sid: 'a', event: 'hello', child: true }).class, {
    kind: 'moment',
    eligible: false,
    reason: 'greeting only',
  });
  const eligibleStart = surfaceFrom({
    ...toy,
    moments: { ...toy.moments, turn_start: { role: 'context', starts: true, evidence: 'toy §1' } },
  });
  assert.equal(eligibleStart.classify({ sid: 'a', event: 'turn_start' }).class, {
    kind: 'moment',
    eligible: true,
    starts: true,
  });
  assert.equal(eligibleStart.classify({ sid: 'a', event: 'turn_start', child: true }).class, {
    kind: 'moment',
    eligible: false,
    reason: 'fired inside a subagent (D7)',
  });
});

test('vendor end reasons collapse into the session.ended enum: normal unless they plainly say otherwise', () => {
  for (const r of [
    'other',
    'prompt_input_exit',
    'clear',
    'logout',
    'shutdown',
    'window closed',
    'new_session',
    undefined,
    42,
  ])
    assert.is(collapseEndReason(r), 'normal', String(r));
  assert.is(collapseEndReason('idle_timeout'), 'timeout');
  assert.is(collapseEndReason('Timed out'), 'timeout');
  assert.is(collapseEndReason('killed'), 'killed');
  assert.is(collapseEndReason('crash'), 'error');
  assert.is(collapseEndReason('compaction'), 'compaction');
});

test('the opt-in gate: off by default, on with control, scoped by the tool pattern matched in full', () => {
  assert.equal(s.classify({ sid: 'a', event: 'tool', name: 'rm' }).class, { kind: 'moment', eligible: true });
  const all = surfaceFrom(toy, { control: true });
  assert.equal(all.classify({ sid: 'a', event: 'tool', name: 'rm' }).class, {
    kind: 'held',
    hold: 'permission',
    request: { kind: 'permission', prompt: 'run rm?' },
  });
  const scoped = surfaceFrom(toy, { control: true, gateTools: 'rm|mv' });
  assert.is(scoped.classify({ sid: 'a', event: 'tool', name: 'mv' }).class.kind, 'held');
  assert.equal(
    scoped.classify({ sid: 'a', event: 'tool', name: 'rmdir' }).class,
    { kind: 'moment', eligible: true },
    'matched in full, not as a prefix',
  );
  assert.equal(
    scoped.decisionReply(scoped.classify({ sid: 'a', event: 'tool', name: 'rm' }), { option: 'deny' }).body,
    { gate: 'deny' },
  );
});

test('a bad gate pattern, or control on a table without a gate, is CONFIG_INVALID when the surface is built', () => {
  const { options: _options, ...rest } = toy;
  const noGate: VendorTable = {
    ...rest,
    moments: Object.fromEntries(Object.entries(toy.moments).filter(([k]) => k !== 'tool')),
  };
  for (const build of [
    () => surfaceFrom(toy, { control: true, gateTools: '(' }),
    () => surfaceFrom(noGate, { control: true }),
  ]) {
    try {
      build();
      assert.unreachable('should throw');
    } catch (e) {
      assert.instance(e, SteeringError);
      assert.is((e as SteeringError).code, 'CONFIG_INVALID');
    }
  }
  assert.match(
    String(
      (() => {
        try {
          surfaceFrom(toy, { control: true, gateTools: '(' });
        } catch (e) {
          return (e as Error).message;
        }
        return '';
      })(),
    ),
    /TOY_GATE_TOOLS/,
  );
});

test('holds: an always-held row holds; a gated row only with its gate on', () => {
  assert.is(s.holds, true, 'the toy has an always-held row');
  const gatedOnly: VendorTable = {
    ...toy,
    moments: Object.fromEntries(Object.entries(toy.moments).filter(([k]) => k !== 'ask')),
  };
  assert.is(holdsAny(gatedOnly), false);
  assert.is(surfaceFrom(gatedOnly).holds, false);
  assert.is(surfaceFrom(gatedOnly, { control: true }).holds, true);
});

test('every registered table: a gate option exactly when it has gated rows or vendor-API controls; one start row, no end row mapped to session.ended', () => {
  for (const [token, t] of vendorTables) {
    const rows = Object.entries(t.moments);
    assert.is(
      optionFor(t, 'gate') !== undefined,
      rows.some(([, r]) => r.role === 'gated') || t.controls !== undefined,
      token,
    );
    // A bridge's sessions never reopen: an OpenHands conversation that reached `deleting` is gone.
    if (t.source === undefined)
      assert.ok(
        rows.some(([, r]) => r.starts === true),
        `${token} names its start moment`,
      );
    for (const [event] of rows.filter(([, row]) => row.role === 'end')) {
      const mapped = t.maps[event]?.({ hook_event_name: event, session_id: 's', extra: {} }) ?? [];
      assert.not.ok(
        mapped.some((o) => o.type === 'session.ended'),
        `${token} ${event}: the runtime alone emits session.ended`,
      );
    }
  }
});

test("through the runtime, each vendor's end moment yields exactly one session.ended, with its reason", () => {
  let vendorsWithEnd = 0;
  for (const [token, t] of vendorTables) {
    const endEvent = Object.entries(t.moments).find(([, r]) => r.role === 'end')?.[0];
    const startEvent = Object.entries(t.moments).find(([, r]) => r.starts === true)?.[0];
    if (endEvent === undefined || startEvent === undefined) continue;
    vendorsWithEnd += 1;
    const surface = surfaceFrom(t);
    const host = new ActorHost({ surface, instruct: true, host: 'table-test' });
    // Claude-style field names, Cline's (`taskId`, `hookName`) and Copilot's (`sessionId`).
    const body = (event: string, extra: Record<string, unknown> = {}) => ({
      session_id: 's-end',
      sessionId: 's-end',
      hook_event_name: event,
      taskId: 's-end',
      hookName: event,
      extra: { reason: 'shutdown' },
      ...extra,
    });
    const events = [
      ...host.step({ kind: 'hook', session: 's-end', hookId: 'h1', at: 1000, hook: surface.classify(body(startEvent)) })
        .events,
      ...host.step({
        kind: 'hook',
        session: 's-end',
        hookId: 'h2',
        at: 2000,
        hook: surface.classify(body(endEvent, { reason: 'other' })),
      }).events,
    ];
    const ended = events.filter((e) => e.type === 'session.ended');
    assert.is(ended.length, 1, token);
    assert.equal(ended[0]!.data, { reason: 'normal' }, token);
    assert.is(host.stateValue('s-end'), 'ended', token);
  }
  assert.is(vendorsWithEnd, 7, 'Claude Code, Codex, Qwen Code, Hermes, Cline, Copilot and opencode have an end moment');
});

test('snakeCase and fallbackType name hooks the way AEP vendor types need', () => {
  assert.is(snakeCase('PostToolUseFailure'), 'post_tool_use_failure');
  assert.is(snakeCase('pre_llm_call'), 'pre_llm_call');
  assert.is(snakeCase('MCPServerStarted'), 'mcp_server_started');
  assert.is(snakeCase('on-session.finalize'), 'on_session_finalize');
  assert.is(fallbackType('claude-code', 'TeammateIdle'), 'x.claude-code.session.teammate_idle');
});

test.run();
