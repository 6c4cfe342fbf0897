// surfaceFrom interprets any table: a small made-up vendor exercises every row kind without any
// real vendor's data, so the interpreter cannot be leaning on one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { byFields, fallbackType, snakeCase, surfaceFrom, type VendorTable } from '../../src/adapters/table.js';
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
    turn_end: { role: 'context', unless: (i) => (i.again === true ? 'second end' : undefined), evidence: 'toy §2' },
    chatter: { role: 'observe', reason: 'nobody reads it', evidence: 'toy §3' },
    ask: {
      role: 'held',
      hold: (i) => ({ hold: 'permission', request: { kind: 'permission', prompt: `may I ${String(i.what)}`, options: [{ id: 'allow', label: 'Allow' }] } }),
      decide: (_h, d) => ({ verdict: d.option, why: d.message }),
      evidence: 'toy §4',
    },
    bye: { role: 'end', evidence: 'toy §5' },
  },
  replies: { neutral: undefined, context: (event, text) => ({ ctx: text, at: event }) },
  maps: { turn_start: () => [{ type: 'run.started', data: { trigger: 'user' } }], chatter: () => [] },
};
const s = surfaceFrom(toy);

test('the surface carries the table\'s token, steering verb, port and timeout', () => {
  assert.is(s.token, 'toy-agent');
  assert.is(s.steeringType, 'x.toy-agent.control.send_input');
  assert.is(s.port, 9999);
  assert.is(s.attentionTimeoutMs, 1234);
});

test('each row kind classifies as its role says', () => {
  assert.equal(s.classify({ sid: 'a', event: 'turn_start' }).class, { kind: 'moment', eligible: true });
  assert.equal(s.classify({ sid: 'a', event: 'turn_end', again: true }).class, { kind: 'moment', eligible: false, reason: 'second end' });
  assert.equal(s.classify({ sid: 'a', event: 'turn_end' }).class, { kind: 'moment', eligible: true });
  assert.equal(s.classify({ sid: 'a', event: 'chatter' }).class, { kind: 'moment', eligible: false, reason: 'nobody reads it' });
  assert.equal(s.classify({ sid: 'a', event: 'bye' }).class, { kind: 'end' });
  assert.equal(s.classify({ sid: 'a', event: 'mystery' }).class, { kind: 'moment', eligible: false, reason: 'not listed' });
  const held = s.classify({ sid: 'a', event: 'ask', what: 'jump' });
  assert.equal(held.class, { kind: 'held', hold: 'permission', request: { kind: 'permission', prompt: 'may I jump', options: [{ id: 'allow', label: 'Allow' }] } });
  assert.is(held.session, 'a');
  assert.is(held.event, 'ask');
});

test('a subagent\'s context moment is never eligible, whatever the row says', () => {
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
  assert.equal(s.classify({ sid: 'a', event: 'turn_start' }).observations, [{ type: 'run.started', data: { trigger: 'user' } }]);
  assert.equal(s.classify({ sid: 'a', event: 'chatter' }).observations, []);
  assert.equal(s.classify({ sid: 'a', event: 'mystery' }).observations, [{ type: 'x.toy-agent.session.mystery', data: { hook: 'mystery' } }]);
});

test('unreadable bodies are SteeringError HOOK_BODY_INVALID, including a row that throws', () => {
  const throwing = surfaceFrom({ ...toy, maps: { boom: () => { throw new TypeError('bad'); } } });
  for (const [surface, body] of [[s, {}], [s, { sid: 'a' }], [s, []], [throwing, { sid: 'a', event: 'boom' }]] as const) {
    try {
      surface.classify(body as Record<string, unknown>);
      assert.unreachable('should throw');
    } catch (e) {
      assert.instance(e, SteeringError);
      assert.is((e as SteeringError).code, 'HOOK_BODY_INVALID');
    }
  }
});

test('snakeCase and fallbackType name hooks the way AEP vendor types need', () => {
  assert.is(snakeCase('PostToolUseFailure'), 'post_tool_use_failure');
  assert.is(snakeCase('pre_llm_call'), 'pre_llm_call');
  assert.is(snakeCase('MCPServerStarted'), 'mcp_server_started');
  assert.is(snakeCase('on-session.finalize'), 'on_session_finalize');
  assert.is(fallbackType('claude-code', 'TeammateIdle'), 'x.claude-code.session.teammate_idle');
});

test.run();
