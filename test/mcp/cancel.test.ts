// D33 through `aep-steer mcp` over stdio against a real relay: the cancel tool sends
// control.cancel {scope:"run"} through the shared consumer core and settles on the cause-linked
// run.cancelled; a session that takes no cancel is refused by the roster with nothing sent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startTestTarget, type TestTarget } from '../support/relay-target.js';
import { startTestStack, type TestStack } from '../cli/support.js';
import { startMcp, type McpClient } from './support.js';

let stack: TestStack;
let target: TestTarget;
let mcp: McpClient;

test.before(async () => {
  stack = await startTestStack();
  target = await startTestTarget({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'cline',
    accepts: ['control.cancel'],
    sessions: ['hub-9'],
  });
  await stack.waitFor((e) => e.session === 'hub-9');
  mcp = await startMcp(['--relay', stack.relayUrl, '--token', stack.token, '--wait-ms', '20000']);
});
test.after(async () => {
  await mcp?.close();
  await target?.close();
  await stack?.stop();
});

test("list_sessions names control.cancel among a cancelling session's steering verbs", async () => {
  const r = await mcp.call('list_sessions', {});
  const row = (r.facts['sessions'] as Record<string, unknown>[]).find((x) => x['session'] === 'hub-9');
  assert.ok(row, r.text);
  assert.ok((row!['steering'] as string[]).includes('control.cancel'), r.text);
});

test('cancel with clear asks the lane to withdraw what waits as well (D44)', async () => {
  const r = await mcp.call('cancel', { session: 'hub-9', run: 'run-4', clear: true });
  assert.not.ok(r.isError, r.text);
  const cmd = target.received.find((c) => c.id === r.facts['command_id'])!;
  assert.equal(cmd.data, { scope: 'run', clear: true, surface: 'mcp' });
});

test('cancel stops the running turn: control.cancel {scope:"run"}, settled on run.cancelled', async () => {
  const r = await mcp.call('cancel', { session: 'hub-9', run: 'run-3' });
  assert.not.ok(r.isError, r.text);
  assert.is(r.facts['outcome'], 'cancelled');
  const cmd = target.received.find((c) => c.id === r.facts['command_id'])!;
  assert.ok(cmd, 'the target received the command the result names');
  assert.equal([cmd.type, cmd.data, cmd.run], ['control.cancel', { scope: 'run', surface: 'mcp' }, 'run-3']);
  const cancelled = stack.seen.find((e) => e.id === r.facts['cancelled_id'])!;
  assert.equal([cancelled.type, cancelled.cause], ['run.cancelled', cmd.id]);
  assert.match(r.text, `Cancelled: session hub-9 stopped its running turn (run.cancelled ${cancelled.id}).`);
});

test('accepted without run.cancelled in wait_ms is an error that says the turn is not known stopped', async () => {
  // This target reports run.cancelled only for a command naming its run.
  const r = await mcp.call('cancel', { session: 'hub-9', wait_ms: 400 });
  assert.ok(r.isError);
  assert.equal([r.facts['outcome'], r.facts['stage']], ['timeout', 'delivery']);
  assert.match(r.text, 'has not reported the turn stopped yet');
});

test('a session that takes no cancel is refused by the roster (unsupported), nothing sent', async () => {
  const s = await stack.openSession();
  const r = await mcp.call('cancel', { session: s.session });
  assert.ok(r.isError);
  assert.equal([r.facts['outcome'], r.facts['code'], r.facts['by']], ['refused', 'unsupported', 'roster']);
  assert.match(r.text, 'Refused (unsupported): claude-code does not declare control.cancel');
  assert.not.ok(stack.seen.some((e) => e.type === 'control.cancel' && e.session === s.session));
});

test('an unknown session is refused no-route', async () => {
  const r = await mcp.call('cancel', { session: 'no-such-session' });
  assert.ok(r.isError);
  assert.is(r.facts['code'], 'no-route');
  assert.match(r.text, 'call list_sessions to see the live ones');
});

test.run();
