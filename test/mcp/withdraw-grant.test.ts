// D32 through `aep-steer mcp` over stdio: the withdraw tool takes back another sender's
// instruction only when asked to use the token's withdraw grant (here the shared token, which
// serves one user and has every grant); without it the adapter refuses not-sender.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sendInstruction } from '../../src/consumer/instruct.js';
import { startTestStack, type TestStack } from '../cli/support.js';
import { startMcp, type McpClient } from './support.js';

let stack: TestStack;
let mcp: McpClient;

test.before(async () => {
  stack = await startTestStack();
  mcp = await startMcp(['--relay', stack.relayUrl, '--token', stack.token, '--sender', 'orchestrator']);
});
test.after(async () => {
  await mcp?.close();
  await stack?.stop();
});

test("another sender's instruction: not-sender, then withdrawn with granted; the agent never reads it", async () => {
  const s = await stack.openSession();
  const sent = await sendInstruction(
    stack.observer,
    { sender: 'alice' },
    { session: s.session, text: 'rename the module', noWait: true, timeoutMs: 10_000 },
  );
  assert.is(sent.outcome, 'accepted');
  const id = (sent as { command: string }).command;
  const plain = await mcp.call('withdraw', { session: s.session, instruction: id });
  assert.ok(plain.isError);
  assert.is(plain.facts['code'], 'not-sender');
  const granted = await mcp.call('withdraw', { session: s.session, instruction: id, granted: true });
  assert.not.ok(granted.isError, granted.text);
  assert.is(granted.facts['outcome'], 'withdrawn');
  const cmd = stack.seen.find((e) => e.id === granted.facts['command_id'])!;
  assert.equal([cmd.agent, cmd['grant']], ['orchestrator', 'withdraw']);
  const reply = await stack.postHook(s.toolCall[0]!);
  assert.is((reply.body as { hookSpecificOutput?: unknown }).hookSpecificOutput, undefined);
});

test.run();
