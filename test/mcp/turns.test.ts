// D45 through `aep-steer mcp` over stdio against a real relay and Claude Code adapter: `wait` is
// bounded (a timeout answers "still running"), returns the turn's end with what to call next, and
// `read` gives the final answer the Stop hook carried.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mcpOnStack } from './support.js';

const on = mcpOnStack();

test('wait: still running within its bound, then the turn end and the next step; read: the final answer', async () => {
  const s = await on.stack.openSession();
  const running = await on.mcp.call('wait', { session: s.session, wait_ms: 300 });
  assert.not.ok(running.isError, running.text);
  assert.is(running.facts['outcome'], 'timeout');
  assert.match(running.text, /^Still running: turn 1 of session .* Wait again/);
  const waiting = on.mcp.call('wait', { session: s.session, for: ['turn-end'] });
  for (const h of s.toolCall) await on.stack.postHook(h);
  await on.stack.postHook(s.closing[0]!);
  const ended = await waiting;
  assert.is(ended.facts['outcome'], 'turn-ended');
  assert.match(ended.text, /Turn 1 of session .* finished\. Next: call read \{session: ".*", turn: 1\}/);
  const read = await on.mcp.call('read', { session: s.session });
  assert.not.ok(read.isError, read.text);
  assert.match(read.text, /Its final answer:\nPrinted hi\./);
  assert.is((read.facts['turn'] as { answer?: string }).answer, 'Printed hi.');
});

test.run();
