// `aep-steer mcp` under concurrency, driven by the MCP SDK's client over stdio against a real
// relay and the Claude Code adapter: 500 `instruct` calls in flight at once, each with its own
// idempotency_key, on one relay connection. Each call used to hold two relay subscriptions of
// the connection's 64, so at 63 concurrent calls 52 were refused; now they share one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { QUEUE_CAP } from '../../src/machines/queue.js';
import { startRelay } from '../../src/relay/server.js';
import { startTestTarget } from '../support/relay-target.js';
import { startTestStack, type TestStack } from '../cli/support.js';
import type { ScriptedSession } from '../../src/demo/scripted-session.js';
import { startMcp, type McpClient } from './support.js';

let stack: TestStack;
let mcp: McpClient;

test.before(async () => {
  stack = await startTestStack();
  mcp = await startMcp(['--relay', stack.relayUrl, '--token', stack.token, '--wait-ms', '120000']);
});
test.after(async () => {
  await mcp?.close();
  await stack?.stop();
});

const CALLS = 500;

test(`${CALLS} concurrent instruct calls on distinct keys are all answered: accepted, then delivered`, async () => {
  // The adapter queues at most QUEUE_CAP per session (D3): spread the calls over enough sessions.
  const sessions: ScriptedSession[] = [];
  for (let i = 0; i < CALLS / QUEUE_CAP; i++) sessions.push(await stack.openSession());
  const calls = Array.from({ length: CALLS }, (_, i) => {
    const s = sessions[i % sessions.length]!;
    const text = `instruction ${i} for ${s.session}`;
    return { s, text, result: mcp.call('instruct', { session: s.session, text, idempotency_key: `key-${i}` }) };
  });
  // Every call's command reaches the adapter and is acked before anything is delivered.
  const acked = () =>
    stack.seen.filter((e) => e.type === 'control.accepted' && sessions.some((s) => s.session === e.session)).length;
  for (let i = 0; i < 6000 && acked() < CALLS; i++) await new Promise((r) => setTimeout(r, 10));
  assert.is(acked(), CALLS, `acked ${acked()} of ${CALLS}; stderr: ${mcp.stderr().slice(-2000)}`);
  // Each session's next tool call carries its queued instructions.
  for (const s of sessions) await stack.postHook(s.toolCall[0]!);
  const results = await Promise.all(calls.map((c) => c.result));
  const outcomes = new Map<string, number>();
  for (const r of results)
    outcomes.set(String(r.facts['outcome']), (outcomes.get(String(r.facts['outcome'])) ?? 0) + 1);
  assert.equal(
    Object.fromEntries(outcomes),
    { delivered: CALLS },
    results.find((r) => r.facts['outcome'] !== 'delivered')?.text,
  );
  assert.is(new Set(results.map((r) => r.facts['command_id'])).size, CALLS, 'one command per key');
  // Each delivered event is the adapter's, caused by that call's command. The MCP server may hear
  // a delivered event before the test's own observer does: wait for the observer to see them all.
  const seenDelivered = () => results.every((r) => stack.seen.some((e) => e.id === r.facts['delivered_id']));
  for (let i = 0; i < 1000 && !seenDelivered(); i++) await new Promise((r) => setTimeout(r, 10));
  for (const [i, r] of results.entries()) {
    const cmd = stack.seen.find((e) => e.id === r.facts['command_id']);
    assert.equal(cmd?.data, { text: calls[i]!.text });
    assert.ok(
      stack.seen.some(
        (e) =>
          e.type === 'x.claude-code.instruction.delivered' && e.cause === cmd!.id && e.id === r.facts['delivered_id'],
      ),
    );
  }
});

test('a call after the burst is served as before, and the connection still holds few relay subscriptions', async () => {
  const s = await stack.openSession();
  const call = mcp.call('instruct', { session: s.session, text: 'one more', wait_ms: 20_000 });
  await stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  await stack.postHook(s.toolCall[0]!);
  const r = await call;
  assert.is(r.facts['outcome'], 'delivered', r.text);
  // The relay's own count: the observer's, the MCP server's wide ones; no call left one behind.
  const health = (await (
    await fetch(`${stack.relayUrl.replace(/^ws/, 'http').replace(/\/socket$/, '')}/healthz`, {
      headers: { authorization: `Bearer ${stack.token}` },
    })
  ).json()) as { subscriptions: number };
  assert.ok(health.subscriptions <= 4, `relay subscriptions: ${health.subscriptions}`);
});

test('a relay connection at its subscription limit: the refusal says to retry, is marked retryable, and a retry succeeds', async () => {
  // A relay allowing 3 subscriptions per connection: the server's two wide ones leave one for replays.
  const relay = await startRelay({
    port: 0,
    storePath: ':memory:',
    token: 'tight-token',
    limits: { maxSubscriptions: 3 },
  });
  const target = await startTestTarget({
    url: relay.socketUrl,
    token: 'tight-token',
    agent: 'claude-code',
    accepts: ['x.claude-code.control.instruct'],
    sessions: ['tight-1'],
  });
  const tight = await startMcp(['--relay', relay.socketUrl, '--token', 'tight-token']);
  try {
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        tight.call('instruct', { session: 'tight-1', text: `tight ${i}`, idempotency_key: `tight-${i}`, wait_ms: 300 }),
      ),
    );
    const refused = results.filter((r) => r.facts['code'] === 'limit-exceeded');
    assert.ok(refused.length > 0, 'the relay refused some for capacity');
    for (const r of refused) {
      assert.ok(r.isError);
      assert.is(r.facts['retryable'], true);
      assert.match(r.text, /at capacity .*retry the same call in a moment/);
    }
    // Every other call was accepted by the adapter (and is still queued there at 300 ms).
    for (const r of results.filter((x) => x.facts['code'] !== 'limit-exceeded'))
      assert.is(r.facts['stage'], 'delivery', r.text);
    const i = results.indexOf(refused[0]!);
    const again = await tight.call('instruct', {
      session: 'tight-1',
      text: `tight ${i}`,
      idempotency_key: `tight-${i}`,
      wait_ms: 300,
    });
    assert.is(again.facts['stage'], 'delivery', again.text);
    assert.ok(
      target.received.some((c) => (c.data as { text?: string }).text === `tight ${i}`),
      'the retry reached the adapter',
    );
  } finally {
    await tight.close();
    await target.close();
    await relay.close();
  }
});

test.run();
