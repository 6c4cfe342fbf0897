// D44 through `aep-steer mcp` over stdio against a real relay and Claude Code adapter: the queue
// tools edit, move, promote and pause, answer once settled, give the adapter's codes, and a
// repeated call is the same command.
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

const contextOf = (reply: { body: unknown }) =>
  (reply.body as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;

test('edit, move, pause and resume: each settled, idempotent, and the next turn carries the new order', async () => {
  const s = await stack.openSession();
  const ids: string[] = [];
  for (const text of ['one', 'two', 'three']) {
    const r = await mcp.call('instruct', { session: s.session, text, delivery: 'queue', wait_ms: 300 });
    ids.push(r.facts['command_id'] as string);
  }
  const [one, two, three] = ids as [string, string, string];
  const edit = await mcp.call('edit_instruction', { session: s.session, instruction: two, text: 'two, edited' });
  assert.not.ok(edit.isError, edit.text);
  assert.equal([edit.facts['outcome'], edit.facts['version']], ['changed', 2]);
  assert.match(edit.text, `Edited in place: instruction ${two} now waits with text version 2`);
  const again = await mcp.call('edit_instruction', { session: s.session, instruction: two, text: 'two, edited' });
  assert.equal(
    [again.facts['command_id'], again.facts['version']],
    [edit.facts['command_id'], 2],
    'the same call is a retry, not a second edit',
  );
  const move = await mcp.call('move_instruction', { session: s.session, instruction: three, to: 'front' });
  assert.equal([move.facts['outcome'], move.facts['position']], ['changed', 1], move.text);
  const pause = await mcp.call('hold_queue', { session: s.session, paused: true });
  assert.equal([pause.facts['outcome'], pause.facts['paused']], ['changed', true], pause.text);
  const sessions = await mcp.call('list_sessions', {});
  assert.ok(sessions.text.length > 0);
  await stack.postHook(s.closing[0]!);
  assert.is(contextOf(await stack.postHook({ ...s.opening[1]!, prompt: 'next' })), undefined, 'paused');
  await stack.postHook(s.closing[0]!);
  const resume = await mcp.call('hold_queue', { session: s.session, paused: false });
  assert.not.ok(resume.isError, resume.text);
  assert.is(contextOf(await stack.postHook({ ...s.opening[1]!, prompt: 'again' })), 'three\n\none\n\ntwo, edited');
  void one;
});

test('refusals carry the code and a sentence; a refused promote leaves it in place', async () => {
  const s = await stack.openSession();
  await stack.postHook(s.closing[0]!);
  const r = await mcp.call('instruct', { session: s.session, text: 'waits', delivery: 'queue', wait_ms: 300 });
  const id = r.facts['command_id'] as string;
  const idle = await mcp.call('promote_instruction', { session: s.session, instruction: id });
  assert.ok(idle.isError);
  assert.equal([idle.facts['code'], idle.facts['reason']], ['session-idle', 'refused']);
  assert.match(idle.text, 'Not changed (session-idle): no turn is running');
  const empty = await mcp.call('edit_instruction', { session: s.session, instruction: id, text: ' ' });
  assert.equal(empty.facts['code'], 'text-empty');
  const bad = await mcp.call('move_instruction', { session: s.session, instruction: id, before: 'elsewhere' });
  assert.equal(bad.facts['code'], 'move-target-unknown');
  assert.match(bad.text, 'call session_events to see what still waits');
  assert.is(contextOf(await stack.postHook({ ...s.opening[1]!, prompt: 'go' })), 'waits', 'still there, unchanged');
});

test.run();
