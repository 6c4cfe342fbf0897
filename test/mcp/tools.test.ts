// `aep-steer mcp` driven by the MCP SDK's own client over stdio, against a real relay (SQLite
// store) and the Claude Code adapter in-process, with scripted hook inputs standing in for the
// agent: every tool, its settled outcomes and its refusals.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer } from 'node:net';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { startTestTarget } from '../support/relay-target.js';
import { heldPermission, permissionRequest, startTestStack, type TestStack } from '../cli/support.js';
import { openHook } from '../support/open-hook.js';
import { scriptedSession } from '../../src/demo/scripted-session.js';
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

/** A port that was free a moment ago (the relay is started on it later). */
const freePort = (): Promise<number> =>
  new Promise((resolve) => {
    const srv = createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });

const acceptedOn = (session: string) => stack.waitFor((e) => e.session === session && e.type === 'control.accepted');

test('tools/list: the steering tools, each described, with typed inputs', async () => {
  const { tools } = await mcp.client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.equal(names, [
    'cancel',
    'edit_instruction',
    'hold_queue',
    'instruct',
    'list_sessions',
    'move_instruction',
    'pending_requests',
    'promote_instruction',
    'read',
    'respond',
    'send_input',
    'session_events',
    'spawn',
    'stop',
    'wait',
    'withdraw',
  ]);
  for (const t of tools) assert.ok((t.description ?? '').length > 120, `${t.name} has a description a model can use`);
  const instruct = tools.find((t) => t.name === 'instruct')!;
  assert.equal((instruct.inputSchema as { required?: string[] }).required?.sort(), ['session', 'text']);
  assert.ok('idempotency_key' in (instruct.inputSchema as { properties: Record<string, unknown> }).properties);
});

/**
 * Calls list_sessions until `session` is listed. The adapter answers a hook without waiting for
 * the relay (steering never slows the agent), so a session it just announced is listed once the
 * relay has its claim: the roster reflects what the relay has received. Bounded: it must appear.
 */
async function listedSoon(
  session: string,
  ms = 10_000,
): Promise<{ r: Awaited<ReturnType<McpClient['call']>>; row: Record<string, unknown> }> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await mcp.call('list_sessions', {});
    assert.not.ok(r.isError, r.text);
    const row = (r.facts['sessions'] as Record<string, unknown>[]).find((x) => x['session'] === session);
    if (row) return { r, row };
    if (Date.now() > end) assert.unreachable(`session ${session} was never listed within ${ms} ms: ${r.text}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('list_sessions: vendor, state, steering verbs, queue length, last activity', async () => {
  // Straight after the hooks, without waiting for the relay: listed as soon as the relay has it.
  const s = scriptedSession();
  for (const h of s.opening) await stack.postHook(h);
  const { r, row } = await listedSoon(s.session);
  assert.is(row['vendor'], 'claude-code');
  assert.is(row['state'], 'idle');
  assert.is(row['live'], true);
  assert.ok((row['steering'] as string[]).includes('x.claude-code.control.instruct'));
  assert.ok((row['steering'] as string[]).includes('control.attention.respond'));
  assert.is(row['queue_length'], 0);
  assert.type(row['last_activity'], 'string');
  assert.match(r.text, s.session);
});

test('instruct: the result is held until delivered, with queued_ms, the moment time and the ids', async () => {
  const s = await stack.openSession();
  const accepted = acceptedOn(s.session);
  const call = mcp.call('instruct', { session: s.session, text: 'run the linter before you commit' });
  await accepted;
  // While it waits, the board shows it queued.
  const listed = await mcp.call('list_sessions', {});
  const row = (listed.facts['sessions'] as Record<string, unknown>[]).find((x) => x['session'] === s.session)!;
  assert.is(row['queue_length'], 1);
  assert.is(row['state'], 'queued');
  const reply = await stack.postHook(s.toolCall[0]!);
  assert.equal(
    (reply.body as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext,
    'run the linter before you commit',
  );
  const r = await call;
  assert.not.ok(r.isError, r.text);
  assert.is(r.facts['outcome'], 'delivered');
  assert.type(r.facts['queued_ms'], 'number');
  assert.match(r.text, /^Delivered after \d+ ms in the queue at its PreToolUse moment \(/);
  assert.is(r.facts['moment'], 'PreToolUse');
  const delivered = stack.seen.find(
    (e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === r.facts['command_id'],
  )!;
  assert.is(r.facts['delivered_id'], delivered.id);
  assert.is(r.facts['delivered_at'], delivered.time);
  const cmd = stack.seen.find((e) => e.id === r.facts['command_id'])!;
  assert.is(cmd.agent, 'aep-steer-mcp');
});

test('instruct with idempotency_key: a second call is the same command, one delivery, the same result', async () => {
  const s = await stack.openSession();
  const accepted = acceptedOn(s.session);
  const first = mcp.call('instruct', { session: s.session, text: 'stop and summarise', idempotency_key: 'summary-1' });
  await accepted;
  await stack.postHook(s.toolCall[0]!);
  const a = await first;
  assert.is(a.facts['outcome'], 'delivered', a.text);
  const b = await mcp.call('instruct', {
    session: s.session,
    text: 'stop and summarise',
    idempotency_key: 'summary-1',
  });
  assert.equal(b.facts, a.facts);
  assert.is(b.text, a.text);
  // One delivery: the next moment carries nothing, and the stream holds one delivered for the id.
  const next = await stack.postHook(s.toolCall[1]!);
  assert.not.match(JSON.stringify(next.body ?? {}), 'stop and summarise');
  assert.is(
    stack.seen.filter((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === a.facts['command_id'])
      .length,
    1,
  );
  // The same key with other text names another instruction: refused, nothing sent.
  const c = await mcp.call('instruct', { session: s.session, text: 'something else', idempotency_key: 'summary-1' });
  assert.ok(c.isError);
  assert.is(c.facts['code'], 'idempotency-conflict');
});

test('instruct idle start: sent as data.idle; a session no lane can start is refused start-unsupported; list_sessions says startable false (D43)', async () => {
  const s = await stack.openSession();
  const ended = stack.waitFor((e) => e.session === s.session && e.type === 'run.finished');
  await stack.postHook(s.closing[0]!);
  await ended;
  const r = await mcp.call('instruct', { session: s.session, text: 'wake up', idle: 'start' });
  assert.ok(r.isError, r.text);
  assert.is(r.facts['code'], 'start-unsupported');
  const cmd = stack.seen.find((e) => e.type === 'x.claude-code.control.instruct' && e.session === s.session)!;
  assert.equal(cmd.data, { text: 'wake up', idle: 'start' });
  const listed = await mcp.call('list_sessions', {});
  const row = (listed.facts['sessions'] as Record<string, unknown>[]).find((x) => x['session'] === s.session);
  assert.is(row?.['startable'], false);
});

/** Calls list_sessions until the session's row is as `ok` wants: the board follows the stream. Bounded. */
async function rowWhen(session: string, ok: (row: Record<string, unknown>) => boolean, ms = 10_000) {
  const end = Date.now() + ms;
  for (;;) {
    const r = await mcp.call('list_sessions', {});
    const row = (r.facts['sessions'] as Record<string, unknown>[] | undefined)?.find((x) => x['session'] === session);
    if (row !== undefined && ok(row)) return row;
    if (Date.now() > end) assert.unreachable(`session ${session} never listed as expected: ${r.text}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('list_sessions says running while a turn runs, though its state is idle; not once the turn ended (D43)', async () => {
  const s = await stack.openSession();
  const during = await rowWhen(s.session, (row) => row['running'] === true);
  // Nothing waits, so the state is idle: running is what says a start would go into a turn.
  assert.is(during['state'], 'idle');
  const ended = stack.waitFor((e) => e.session === s.session && e.type === 'run.finished');
  await stack.postHook(s.closing[0]!);
  await ended;
  const after = await rowWhen(s.session, (row) => row['running'] === false);
  assert.is(after['state'], 'idle');
});

test('instruct: still queued at wait_ms is a result, not an error; a retry with the key then sees the delivery', async () => {
  const s = await stack.openSession();
  const r = await mcp.call('instruct', {
    session: s.session,
    text: 'check the migration',
    idempotency_key: 'mig',
    wait_ms: 400,
  });
  assert.not.ok(r.isError, r.text);
  assert.is(r.facts['outcome'], 'timeout');
  assert.is(r.facts['stage'], 'delivery');
  assert.match(r.text, /^Still queued after 400 ms/);
  await stack.postHook(s.toolCall[0]!);
  const again = await mcp.call('instruct', {
    session: s.session,
    text: 'check the migration',
    idempotency_key: 'mig',
    wait_ms: 5000,
  });
  assert.is(again.facts['outcome'], 'delivered', again.text);
  assert.is(again.facts['command_id'], r.facts['command_id']);
});

test('instruct: dropped at SessionEnd names the reason', async () => {
  const s = await stack.openSession();
  const accepted = acceptedOn(s.session);
  const call = mcp.call('instruct', { session: s.session, text: 'too late' });
  await accepted;
  await stack.postHook(s.closing[1]!);
  const r = await call;
  assert.is(r.facts['outcome'], 'dropped', r.text);
  assert.is(r.facts['reason'], 'session-ended');
  assert.match(r.text, /^Dropped \(session-ended\)/);
});

test('instruct refusals are tool errors with the code and a sentence: rejected, no-route, unsupported', async () => {
  const s = await stack.openSession();
  const rejected = await mcp.call('instruct', { session: s.session, text: '   ' });
  assert.ok(rejected.isError);
  assert.is(rejected.facts['outcome'], 'rejected');
  assert.is(rejected.facts['reason'], 'invalid');
  assert.match(rejected.text, 'Rejected by the adapter (text-empty): text is empty; fix the text and send it again.');

  const noRoute = await mcp.call('instruct', { session: 'no-such-session', text: 'hello' });
  assert.ok(noRoute.isError);
  assert.is(noRoute.facts['code'], 'no-route');
  assert.match(
    noRoute.text,
    'Refused (no-route): session no-such-session has no live claimant on the relay; no adapter claims session no-such-session now: call list_sessions to see the live ones.',
  );

  // Claude Code takes instruct, not send_input: the roster says so before anything is sent.
  const wrong = await mcp.call('send_input', { session: s.session, text: 'hello' });
  assert.ok(wrong.isError);
  assert.is(wrong.facts['code'], 'unsupported');
  assert.match(wrong.text, 'does not declare x.claude-code.control.send_input');
  assert.not.ok(stack.seen.some((e) => e.type === 'x.claude-code.control.send_input'));
});

test('input validation: a missing required argument is a tool error, and nothing is sent', async () => {
  const before = stack.seen.length;
  const r = await mcp.call('instruct', { text: 'no session given' });
  assert.ok(r.isError);
  assert.match(r.text, 'session');
  assert.is(
    stack.seen.filter((e) => e.type.endsWith('.control.instruct')).length,
    stack.seen.slice(0, before).filter((e) => e.type.endsWith('.control.instruct')).length,
  );
});

test('pending_requests shows the command (D35); a request the agent ends itself leaves the list, and respond says not-pending (D34)', async () => {
  const s = await stack.openSession();
  const held = openHook(stack.hookUrl, {
    ...permissionRequest(s),
    tool_input: { command: 'rm -rf build/', description: 'clean' },
  });
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  let rows: Record<string, unknown>[] = [];
  for (let i = 0; i < 200 && rows.length === 0; i += 1) {
    rows = (await mcp.call('pending_requests', { session: s.session })).facts['requests'] as Record<string, unknown>[];
    if (rows.length === 0) await new Promise((r) => setTimeout(r, 10));
  }
  assert.match(String(rows[0]!['prompt']), 'Bash: rm -rf build/');
  held.abort();
  await stack.waitFor((e) => e.type === 'attention.resolved' && e.subject === requested.id);
  for (let i = 0; i < 200 && rows.length > 0; i += 1) {
    rows = (await mcp.call('pending_requests', { session: s.session })).facts['requests'] as Record<string, unknown>[];
    if (rows.length > 0) await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(rows, [], 'gone once the agent ended it');
  const late = await mcp.call('respond', { session: s.session, request: requested.id, decision: 'allow' });
  assert.ok(late.isError);
  assert.is(late.facts['code'], 'not-pending');
  assert.match(late.text, 'Not pending: dismissed at the agent');
});

test('pending_requests lists a held permission; respond allows it and the held hook returns allow', async () => {
  const s = await stack.openSession();
  const { request, reply } = await heldPermission(stack, s);
  const pending = await mcp.call('pending_requests', { session: s.session });
  const rows = pending.facts['requests'] as Record<string, unknown>[];
  assert.is(rows.length, 1, pending.text);
  assert.is(rows[0]!['request'], request);
  assert.is(rows[0]!['kind'], 'permission');
  assert.equal(rows[0]!['options'], ['allow', 'deny']);
  assert.match(pending.text, request);

  const bad = await mcp.call('respond', { session: s.session, request, decision: 'allow', text: 'and this' });
  assert.ok(bad.isError);
  assert.is(bad.facts['code'], 'invalid-answer');

  const r = await mcp.call('respond', { session: s.session, request, decision: 'allow' });
  assert.not.ok(r.isError, r.text);
  assert.is(r.facts['outcome'], 'answered');
  const hook = await reply;
  assert.equal(hook.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  const after = await mcp.call('pending_requests', { session: s.session });
  assert.equal(after.facts['requests'], []);

  const again = await mcp.call('respond', { session: s.session, request, decision: 'deny' });
  assert.ok(again.isError);
  assert.is(again.facts['outcome'], 'rejected');
});

test('session_events: recent events at the capture ceiling; metadata carries no instruction text', async () => {
  const s = await stack.openSession();
  const accepted = acceptedOn(s.session);
  const call = mcp.call('instruct', { session: s.session, text: 'secret plan B' });
  await accepted;
  await stack.postHook(s.toolCall[0]!);
  const done = await call;
  const meta = await mcp.call('session_events', { session: s.session });
  const events = meta.facts['events'] as { type: string; id: string; data?: Record<string, unknown> }[];
  const types = events.map((e) => e.type);
  for (const t of [
    'session.started',
    'x.claude-code.control.instruct',
    'control.accepted',
    'x.claude-code.instruction.delivered',
  ])
    assert.ok(types.includes(t), `${t} in ${types.join(', ')}`);
  assert.not.match(JSON.stringify(meta.facts), 'secret plan B');
  const red = await mcp.call('session_events', {
    session: s.session,
    capture: 'redacted',
    types: ['x.claude-code.control.instruct'],
  });
  const cmds = red.facts['events'] as { id: string; data?: Record<string, unknown> }[];
  assert.is(cmds.length, 1);
  assert.is(cmds[0]!.id, done.facts['command_id']);
  assert.equal(cmds[0]!.data, { text: 'secret plan B' });
  const last = await mcp.call('session_events', { session: s.session, limit: 2 });
  assert.is((last.facts['events'] as unknown[]).length, 2);
  assert.equal(
    (last.facts['events'] as { id: string }[]).map((e) => e.id),
    events.slice(-2).map((e) => e.id),
  );
});

test('tokens file: a watch-only token is refused by the relay with its code; a granted one sends as its own identity', async () => {
  const relay: RelayHandle = await startRelay({
    port: 0,
    storePath: ':memory:',
    tokens: [
      { token: 'adapter-token', identity: 'adapter', emit: [{ agents: ['claude-code'], sessions: ['*'] }] },
      { token: 'watch-token', identity: 'watcher', commands: [] },
      { token: 'lead-token', identity: 'lead-orchestrator', commands: ['x.*.control.instruct'] },
    ],
  });
  const target = await startTestTarget({
    url: relay.socketUrl,
    token: 'adapter-token',
    agent: 'claude-code',
    accepts: ['x.claude-code.control.instruct'],
    sessions: ['w-1'],
  });
  const watcher = await startMcp(['--relay', relay.socketUrl, '--token', 'watch-token', '--sender', 'watcher']);
  const lead = await startMcp(['--relay', relay.socketUrl, '--token', 'lead-token']);
  try {
    let listed = await watcher.call('list_sessions', {});
    for (let i = 0; i < 40 && !(listed.facts['sessions'] as unknown[] | undefined)?.length; i++) {
      await new Promise((r) => setTimeout(r, 50));
      listed = await watcher.call('list_sessions', {});
    }
    assert.is((listed.facts['sessions'] as Record<string, unknown>[])[0]?.['session'], 'w-1', listed.text);
    const r = await watcher.call('instruct', { session: 'w-1', text: 'hello', wait_ms: 3000 });
    assert.ok(r.isError, r.text);
    assert.is(r.facts['code'], 'unauthorized');
    assert.match(r.text, /^Refused \(unauthorized\): .+; nothing was sent: the token in use may not send that/);
    assert.is(target.received.length, 0);
    // D43: a start is no way round it: refused the same, nothing sent.
    const start = await watcher.call('instruct', { session: 'w-1', text: 'wake up', idle: 'start', wait_ms: 3000 });
    assert.ok(start.isError, start.text);
    assert.is(start.facts['code'], 'unauthorized');
    assert.is(target.received.length, 0);
    // The granted token: the relay forwards it, and the command names the token's identity (D19).
    const ok = await lead.call('instruct', { session: 'w-1', text: 'hello', wait_ms: 300 });
    assert.is(ok.facts['outcome'], 'timeout', ok.text);
    assert.is(ok.facts['stage'], 'delivery');
    assert.is(target.received.length, 1);
    assert.is(target.received[0]!.agent, 'lead-orchestrator');
  } finally {
    await lead.close();
    await watcher.close();
    await target.close();
    await relay.close();
  }
});

test('relay unreachable: tools answer with an error that says what to do; once the relay is up, they work', async () => {
  const port = await freePort();
  const url = `ws://127.0.0.1:${port}/socket`;
  const lonely = await startMcp(['--relay', url, '--token', 'late-token']);
  let late: RelayHandle | undefined;
  try {
    const r = await lonely.call('list_sessions', {});
    assert.ok(r.isError);
    assert.match(r.text, `Relay unreachable at ${url}`);
    assert.match(r.text, 'tell the person who runs this MCP server that the relay it follows is down');
    assert.not.match(r.text, /--[a-z]/, 'an MCP answer names no CLI flag');
    const i = await lonely.call('instruct', { session: 's', text: 't' });
    assert.ok(i.isError);
    assert.is(i.facts['outcome'], 'unreachable');
    // The server keeps retrying in the background: the relay starting later is picked up.
    late = await startRelay({ port, storePath: ':memory:', token: 'late-token' });
    let listed = await lonely.call('list_sessions', {});
    for (let n = 0; n < 200 && listed.isError; n++) {
      await new Promise((res) => setTimeout(res, 50));
      listed = await lonely.call('list_sessions', {});
    }
    assert.not.ok(listed.isError, listed.text);
    assert.equal(listed.facts['sessions'], []);
  } finally {
    await lonely.close();
    await late?.close();
  }
});

test.run();
