// `send_input` from the MCP SDK's client over stdio to a real `aep-steer adapter openhands` with
// its control gate on (D29), in front of the stand-in agent server: held until the adapter reports
// `x.openhands.input.sent`, and the conversation's next model request carries the text.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startOpenHandsStack, type OpenHandsStack } from '../support/openhands-stack.js';
import { startMcp, type McpClient } from './support.js';

const STEER = 'STEER-CANARY-MCP: also count the markdown files';

let stack: OpenHandsStack;
let mcp: McpClient;

test.before(async () => {
  stack = await startOpenHandsStack({ control: true });
  mcp = await startMcp(['--relay', stack.relay.socketUrl, '--token', stack.token]);
});
test.after(async () => {
  await mcp?.close();
  await stack?.stop();
});

test('send_input to a running OpenHands conversation: delivered once input.sent is on the stream, and the next model request has it', async () => {
  const id = stack.server.create({ message: '[[TURN]] [[TOOLS:2]] list the files, then summarise' });
  await stack.waitFor((e) => e.session === id && e.type === 'state.snapshot');
  const listed = await mcp.call('list_sessions', {});
  const row = (listed.facts['sessions'] as Record<string, unknown>[]).find((r) => r['session'] === id)!;
  assert.ok(row, listed.text);
  assert.is(row['vendor'], 'openhands');
  assert.ok((row['steering'] as string[]).includes('x.openhands.control.send_input'));

  const held = stack.model.hold();
  stack.server.run(id);
  await held.arrived;
  const before = stack.model.modelRequests().length;
  const r = await mcp.call('send_input', { session: id, text: STEER, idempotency_key: 'oh-1' });
  assert.not.ok(r.isError, r.text);
  assert.is(r.facts['outcome'], 'delivered');
  assert.is(r.facts['vendor'], 'openhands');
  assert.match(r.text, `the input reached session ${id}`);
  const sent = stack.seen.find((e) => e.type === 'x.openhands.input.sent' && e.cause === r.facts['command_id'])!;
  assert.is(r.facts['delivered_id'], sent.id);
  // The same key again: the same command, the same result, one append to the conversation.
  const again = await mcp.call('send_input', { session: id, text: STEER, idempotency_key: 'oh-1' });
  assert.equal(again.facts, r.facts);
  held.release();
  await stack.server.until(id, 'finished');
  const requests = stack.model.modelRequests();
  assert.ok(requests[before]!.text.includes('STEER-CANARY-MCP'), 'the next model request carries it');
  const appends = stack.server.requests.filter(
    (q) => q.transport === 'http' && q.method === 'POST' && q.path === `/api/conversations/${id}/events`,
  );
  assert.is(appends.length, 1);
});

test('instruct to an OpenHands session is refused by the roster: it takes send_input, not instruct', async () => {
  const id = stack.server.create({ message: '[[TURN]] hello' });
  await stack.waitFor((e) => e.session === id && e.type === 'state.snapshot');
  const r = await mcp.call('instruct', { session: id, text: 'hello' });
  assert.ok(r.isError);
  assert.is(r.facts['code'], 'unsupported');
  assert.match(r.text, 'does not declare x.openhands.control.instruct');
});

test.run();
