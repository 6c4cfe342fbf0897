// Every refusal a consumer shows says what happened (the detail the relay or adapter sent) and
// what to do next, in that consumer's own words: the CLI never names an MCP tool, MCP never names
// a CLI command or flag.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { paintFor } from '../../src/audit/paint.js';
import { describeOutcome, explainSteer, explainWithdraw } from '../../src/consumer/explain.js';
import { CLI_VOICE, CONSOLE_VOICE, MCP_VOICE, nextStep } from '../../src/consumer/next-step.js';
import type { InstructOutcome } from '../../src/consumer/verb.js';

const MCP_TOOLS = /\b(list_sessions|session_events|pending_requests|send_input)\b/;
const CLI_WORDS = /aep-steer |(^|\s)--[a-z]/;
const p = paintFor({});

/** Every code a relay, the roster or an adapter can answer a steering command with. */
const CODES = [
  'no-route',
  'adapter-offline',
  'vendor-mismatch',
  'ambiguous',
  'unsupported',
  'unauthorized',
  'store-unavailable',
  'text-empty',
  'text-too-long',
  'text-not-string',
  'queue-full',
  'unknown-session',
  'session-ended',
  'gate-off',
  'unknown-request',
  'not-pending',
  'answer-invalid',
  'delivery-invalid',
  'already-delivered',
  'not-waiting',
  'unknown-instruction',
  'not-sender',
  'transport-down',
  'input-pending-identical',
  'cancel-scope',
  'no-active-run',
  'cancel-pending',
  'cancel-refused',
  'vendor-refused',
  'status-guard',
];
/** Codes whose adapter detail is itself the advice (it names what the session takes instead). */
const DETAIL_IS_ADVICE = ['session-idle', 'delivery-unsupported', 'lane-unreached'];

test('every code has a next step in every voice, and no voice names another consumer', () => {
  for (const code of CODES) {
    const ctx = { session: 's-1', vendor: 'codex' };
    const cli = nextStep(code, CLI_VOICE, ctx);
    const mcp = nextStep(code, MCP_VOICE, ctx);
    const console = nextStep(code, CONSOLE_VOICE, ctx);
    assert.ok(cli && mcp && console, `${code} has a next step in each voice`);
    assert.not.match(cli!, MCP_TOOLS, `the CLI's ${code} names no MCP tool`);
    assert.not.match(mcp!, CLI_WORDS, `MCP's ${code} names no CLI command or flag`);
    assert.not.match(console!, MCP_TOOLS, `the console's ${code} names no MCP tool`);
  }
  for (const code of DETAIL_IS_ADVICE) assert.is(nextStep(code, CLI_VOICE, { session: 's' }), undefined);
});

const rejected = (code: string, detail: string): InstructOutcome => ({
  outcome: 'rejected',
  command: 'c-1',
  session: 's-1',
  vendor: 'codex',
  ack: 'a-1',
  reason: 'unsupported',
  code,
  detail,
});

test("a delivery the session cannot take shows the adapter's detail, with the way that would, everywhere", () => {
  const detail =
    'this session cannot take delivery "steer": it accepts moment, queue; start it with `aep-steer run codex` to steer it';
  const o = rejected('delivery-unsupported', detail);
  assert.match(describeOutcome(o, p), `rejected by the adapter (delivery-unsupported): ${detail}; nothing was queued`);
  for (const voice of [MCP_VOICE, CONSOLE_VOICE]) {
    const e = explainSteer(o, { waitMs: 1000, noun: 'instruction', voice });
    assert.match(e.text, detail);
    assert.ok(e.isError);
  }
});

test('a delivered start says whether it began the turn (with its id) or went into one begun meanwhile (D43)', () => {
  const base = {
    outcome: 'delivered',
    command: 'c-1',
    session: 's-1',
    vendor: 'codex',
    ack: 'e-ack',
    delivered: 'e-del',
    queuedMs: 12,
  } as const;
  const began = describeOutcome({ ...base, delivery: 'steer', started: true, ref: 'turn-7' }, p);
  assert.match(began, "delivered after 12 ms (event e-del): it started the agent's turn turn-7");
  // The delivery is not named twice: the start's sentence says what happened.
  assert.not.match(began, '(steer)');
  const raced = describeOutcome({ ...base, delivery: 'queue', started: false }, p);
  assert.match(raced, 'a turn had begun meanwhile, so it went into that turn as queue instead of starting one');
  assert.not.match(raced, 'started the agent');
  // A plain delivery says neither.
  const plain = describeOutcome({ ...base, delivery: 'steer' }, p);
  assert.match(plain, 'delivered (steer) after 12 ms (event e-del)');
  assert.not.match(plain, /turn/);
});

test('steering off, relay down and no route say what to do, each in its own voice', () => {
  const off: InstructOutcome = {
    outcome: 'refused',
    session: 's-1',
    vendor: 'codex',
    code: 'unsupported',
    by: 'roster',
    detail: 'codex does not declare x.codex.control.instruct: its adapter runs with steering off (steering is opt-in)',
    steeringOff: true,
  };
  assert.match(describeOutcome(off, p), '`aep-steer up codex --instruct`');
  const mcpOff = explainSteer(off, { waitMs: 1, noun: 'instruction', voice: MCP_VOICE }).text;
  assert.match(mcpOff, 'restart the adapter with steering on');
  assert.not.match(mcpOff, CLI_WORDS);

  const down: InstructOutcome = { outcome: 'unreachable', session: 's-1', detail: 'cannot reach relay at ws://x' };
  const mcpDown = explainSteer(down, { waitMs: 1, noun: 'instruction', voice: MCP_VOICE }).text;
  assert.match(mcpDown, 'the relay it follows is down');
  assert.not.match(mcpDown, CLI_WORDS);
  assert.match(explainSteer(down, { waitMs: 1, noun: 'instruction', voice: CONSOLE_VOICE }).text, '`aep-steer up`');

  const noRoute: InstructOutcome = {
    outcome: 'refused',
    session: 's-9',
    code: 'no-route',
    by: 'roster',
    detail: 'session s-9 has no live claimant on the relay',
  };
  assert.match(describeOutcome(noRoute, p), '`aep-steer sessions` lists the live ones');
  assert.not.match(describeOutcome(noRoute, p), MCP_TOOLS);
  const w = explainWithdraw({ ...noRoute, instruction: 'i-1' } as Parameters<typeof explainWithdraw>[0], MCP_VOICE);
  assert.match(w.text, 'call list_sessions');
});

test('a timeout says where the instruction stands and how to take it back, on the CLI', () => {
  const line = describeOutcome(
    { outcome: 'timeout', command: 'c-7', session: 's-1', vendor: 'codex', stage: 'delivery', sent: 1 },
    p,
  );
  assert.match(line, '`aep-steer queue --session s-1`');
  assert.match(line, '`aep-steer withdraw --session s-1 --instruction c-7`');
});

test("a link to the agent's own channel that is down is not called an adapter that is down", () => {
  const ctx = { session: 's-1', vendor: 'cline' };
  for (const voice of [CLI_VOICE, MCP_VOICE, CONSOLE_VOICE]) {
    const step = nextStep('transport-down', voice, ctx)!;
    assert.match(step, "has not reached the agent's own channel");
    assert.not.match(step, 'start its adapter again');
  }
  assert.match(nextStep('adapter-offline', CLI_VOICE, ctx)!, '`aep-steer up cline`');
});
test.run();
