// D31, D32 through `aep-steer mcp` over stdio against a real relay and Claude Code adapter:
// instruct's delivery, the withdraw tool (idempotent, the adapter's codes) and their sentences.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestStack, type TestStack } from '../cli/support.js';
import { startMcp, type McpClient } from './support.js';

let stack: TestStack;
let mcp: McpClient;

test.before(async () => {
  stack = await startTestStack();
  mcp = await startMcp(['--relay', stack.relayUrl, '--token', stack.token, '--wait-ms', '20000']);
});
test.after(async () => {
  await mcp?.close();
  await stack?.stop();
});

test('instruct with delivery queue waits for the next turn; withdraw takes it back, twice the same answer', async () => {
  const s = await stack.openSession();
  const sent = await mcp.call('instruct', {
    session: s.session,
    text: 'then write the summary',
    delivery: 'queue',
    wait_ms: 500,
  });
  assert.not.ok(sent.isError, sent.text);
  const id = sent.facts['command_id'] as string;
  assert.ok(id);
  const reply = await stack.postHook(s.toolCall[0]!);
  assert.is(
    (reply.body as { hookSpecificOutput?: unknown }).hookSpecificOutput,
    undefined,
    'queue never rides the running turn',
  );
  const w = await mcp.call('withdraw', { session: s.session, instruction: id });
  assert.not.ok(w.isError, w.text);
  assert.is(w.facts['outcome'], 'withdrawn');
  assert.match(w.text, `Withdrawn: instruction ${id} will never reach session ${s.session}.`);
  const again = await mcp.call('withdraw', { session: s.session, instruction: id });
  assert.equal(
    [again.facts['outcome'], again.facts['command_id']],
    ['withdrawn', w.facts['command_id']],
    'a repeated call is the same withdraw',
  );
  await stack.postHook(s.closing[0]!);
  const next = await stack.postHook({ ...s.opening[1]!, prompt: 'next' });
  assert.is(
    (next.body as { hookSpecificOutput?: unknown }).hookSpecificOutput,
    undefined,
    'the withdrawn instruction never reaches the agent',
  );
});

test("refusals carry the adapter's code and a sentence: session-idle, unknown-instruction, already-delivered", async () => {
  const s = await stack.openSession();
  await stack.postHook(s.closing[0]!);
  const idle = await mcp.call('instruct', { session: s.session, text: 'x', delivery: 'steer' });
  assert.ok(idle.isError);
  assert.is(idle.facts['code'], 'session-idle');
  assert.match(
    idle.text,
    'no turn is running, and a steer never starts one: send it with delivery queue, or as a moment',
  );
  const unknown = await mcp.call('withdraw', { session: s.session, instruction: 'nope' });
  assert.ok(unknown.isError);
  assert.is(unknown.facts['code'], 'unknown-instruction');
  const d = mcp.call('instruct', { session: s.session, text: 'look at the logs' });
  await stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  await stack.postHook({ ...s.opening[1]!, prompt: 'go on' });
  const delivered = await d;
  assert.is(delivered.facts['outcome'], 'delivered', delivered.text);
  assert.is(delivered.facts['delivery'], 'moment');
  const late = await mcp.call('withdraw', { session: s.session, instruction: delivered.facts['command_id'] as string });
  assert.ok(late.isError);
  assert.is(late.facts['code'], 'already-delivered');
  assert.match(late.text, 'the agent has it already');
});

test.run();
