import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { SessionEmitter, dedupeKey, type AepCommand } from '../../src/protocol/index.js';
import { connectEmitter } from '../support/emitter-link.js';
import { INSTRUCT_EXIT, runInstruct } from '../../src/cli/instruct-command.js';
import { sink, startTestStack, type TestStack } from './support.js';

let stack: TestStack;
test.before(async () => {
  stack = await startTestStack();
});
test.after(async () => {
  await stack.stop();
});

const flags = (s: TestStack, session: string, extra: Record<string, unknown> = {}) => ({
  relay: s.relayUrl,
  token: s.token,
  sender: 'alice',
  session,
  wait: true,
  timeout: '30000',
  ackWindow: '10000',
  ...extra,
});

test('delivered: accepted, then delivered at the next eligible hook; exit 0', async () => {
  const s = await stack.openSession();
  const out = sink();
  const err = sink();
  const accepted = stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  const run = runInstruct('run the tests before committing', flags(stack, s.session), {
    out: out.stream,
    err: err.stream,
  });
  await accepted;
  const reply = await stack.postHook(s.toolCall[0]!);
  const code = await run;
  assert.is(code, INSTRUCT_EXIT.delivered, out.text() + err.text());
  assert.equal(
    reply.body,
    {
      hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'run the tests before committing' },
      systemMessage: 'aep-steer: 1 instruction from alice reached the agent (PreToolUse)',
    },
    'D27: the user at the agent is told, the model reads only the context',
  );
  assert.match(
    out.text(),
    /✓ accepted \(ack \w+\)\n… queued \(0 ahead\); delivered at the agent's next prompt or tool call\n/,
  );
  assert.match(out.text(), /✓ delivered at PreToolUse after \d+ ms/, 'D27: which moment carried it');
  // The command on the stream carries its text at redacted capture and names the sender.
  const cmd = stack.seen.find((e) => e.type === 'x.claude-code.control.instruct' && e.session === s.session)!;
  assert.is(cmd.capture, 'redacted');
  assert.is(cmd.agent, 'alice');
});

test('--no-wait returns after the ack with exit 0, saying how to follow it; --json prints the outcome', async () => {
  const plain = await stack.openSession();
  const text = sink();
  assert.is(
    await runInstruct('look around', flags(stack, plain.session, { wait: false }), {
      out: text.stream,
      err: sink().stream,
    }),
    0,
  );
  assert.match(
    text.text(),
    `✓ accepted and queued; not waiting for delivery (--no-wait; aep-steer watch --session ${plain.session} follows it)`,
  );
  const s = await stack.openSession();
  const out = sink();
  const code = await runInstruct('check the logs', flags(stack, s.session, { wait: false, json: true }), {
    out: out.stream,
    err: sink().stream,
  });
  assert.is(code, INSTRUCT_EXIT.accepted);
  const o = JSON.parse(out.text());
  assert.is(o.outcome, 'accepted');
  assert.is(o.vendor, 'claude-code');
  assert.ok(o.ack);
  // Still queued: the next eligible moment delivers it.
  const reply = await stack.postHook(s.toolCall[0]!);
  assert.equal(
    (reply.body as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext,
    'check the logs',
  );
  await stack.waitFor((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === o.command);
});

test('the waiting line counts the instructions ahead from the roster', async () => {
  const s = await stack.openSession();
  for (const t of ['first', 'second'])
    assert.is(
      await runInstruct(t, flags(stack, s.session, { wait: false }), { out: sink().stream, err: sink().stream }),
      0,
    );
  const out = sink();
  const run = runInstruct('third', flags(stack, s.session, { timeout: '1500' }), {
    out: out.stream,
    err: sink().stream,
  });
  assert.is(await run, INSTRUCT_EXIT.timeout);
  assert.match(out.text(), "… queued (2 ahead); delivered at the agent's next prompt or tool call");
});

test('a refused token exits 8 with the token hint, not 7 unreachable', async () => {
  const s = await stack.openSession();
  const out = sink();
  assert.is(
    await runInstruct('x', flags(stack, s.session, { token: 'not-the-token' }), {
      out: out.stream,
      err: sink().stream,
    }),
    INSTRUCT_EXIT.unauthorized,
  );
  assert.is(INSTRUCT_EXIT.unauthorized, 8);
  assert.match(out.text(), 'refused the token (HTTP 401)');
  assert.match(out.text(), "pass the relay's token with --token or AEP_TOKEN");
});

test('text from stdin when the argument is "-" or absent', async () => {
  const s = await stack.openSession();
  const out = sink();
  const code = await runInstruct('-', flags(stack, s.session, { wait: false, json: true }), {
    out: out.stream,
    err: sink().stream,
    stdin: async () => 'from stdin\n',
  });
  assert.is(code, INSTRUCT_EXIT.accepted);
  const id = JSON.parse(out.text()).command as string;
  const cmd = stack.seen.find((e) => e.id === id)!;
  assert.equal(cmd.data, { text: 'from stdin' });
  const empty = sink();
  assert.is(
    await runInstruct(undefined, flags(stack, s.session), {
      out: sink().stream,
      err: empty.stream,
      stdin: async () => '',
    }),
    INSTRUCT_EXIT.usage,
  );
  assert.match(empty.text(), 'no instruction text');
});

test('rejected by the adapter (D2: empty text) exits 3 with the rule detail', async () => {
  const s = await stack.openSession();
  const out = sink();
  const code = await runInstruct('   ', flags(stack, s.session), { out: out.stream, err: sink().stream });
  assert.is(code, INSTRUCT_EXIT.rejected);
  assert.match(
    out.text(),
    'rejected by the adapter (text-empty): text is empty; fix the text and send it again; nothing was queued',
  );
});

test('dropped at SessionEnd (D10) exits 5 with the reason', async () => {
  const s = await stack.openSession();
  const out = sink();
  const accepted = stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  const run = runInstruct('too late', flags(stack, s.session), { out: out.stream, err: sink().stream });
  await accepted;
  await stack.postHook(s.closing[1]!); // SessionEnd
  assert.is(await run, INSTRUCT_EXIT.dropped);
  assert.match(out.text(), '✗ dropped: session-ended');
});

test('refused before sending: unknown session (no-route) and ambiguous claim exit 4', async () => {
  const out = sink();
  assert.is(
    await runInstruct('x', flags(stack, 'no-such-session'), { out: out.stream, err: sink().stream }),
    INSTRUCT_EXIT.refused,
  );
  assert.match(
    out.text(),
    'not sent (no-route): session no-such-session has no live claimant on the relay; no adapter claims session no-such-session now: `aep-steer sessions` lists the live ones',
  );

  const s = await stack.openSession();
  const rival = connectEmitter({ url: stack.relayUrl, token: stack.token, agent: 'rival' });
  await rival.ready();
  rival.send(new SessionEmitter({ agent: 'rival', session: s.session, host: 'h' }).emit({ type: 'session.started' }));
  await stack.waitFor((e) => e.agent === 'rival' && e.session === s.session);
  const amb = sink();
  assert.is(
    await runInstruct('x', flags(stack, s.session), { out: amb.stream, err: sink().stream }),
    INSTRUCT_EXIT.refused,
  );
  assert.match(amb.text(), 'ambiguous');
  await rival.close();
});

test('timeout before the ack: retries reuse the command id; exit 6', async () => {
  const received: AepCommand[] = [];
  const silent = connectEmitter({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'claude-code',
    accepts: ['x.claude-code.control.instruct'],
  });
  silent.commands$.subscribe((c) => received.push(c));
  await silent.ready();
  silent.send(
    new SessionEmitter({ agent: 'claude-code', session: 'silent-1', host: 'h' }).emit({ type: 'session.started' }),
  );
  await stack.waitFor((e) => e.session === 'silent-1');
  const out = sink();
  const code = await runInstruct(
    'anyone there?',
    flags(stack, 'silent-1', { timeout: '600', ackWindow: '200', json: true }),
    { out: out.stream, err: sink().stream },
  );
  assert.is(code, INSTRUCT_EXIT.timeout);
  const o = JSON.parse(out.text());
  assert.is(o.outcome, 'timeout');
  assert.is(o.stage, 'ack');
  assert.is(o.sent, 3);
  // The last copy left just before the local deadline; wait for it to reach the target.
  while (received.length < 3) await new Promise((r) => setTimeout(r, 20));
  assert.is(received.length, 3);
  assert.equal(new Set(received.map((c) => dedupeKey(c))).size, 1);
  assert.equal(new Set(received.map((c) => JSON.stringify(c))).size, 1);
  await silent.close();
});

test('timeout after the ack: accepted but no eligible moment yet; exit 6, stage delivery', async () => {
  const s = await stack.openSession();
  const out = sink();
  const code = await runInstruct(
    'wait for it',
    flags(stack, s.session, { timeout: '2500', ackWindow: '2500', json: true }),
    { out: out.stream, err: sink().stream },
  );
  assert.is(code, INSTRUCT_EXIT.timeout);
  const o = JSON.parse(out.text());
  assert.is(o.stage, 'delivery');
  assert.ok(o.ack);
});

test('usage errors exit 2; an unreachable relay exits 7', async () => {
  const err = sink();
  assert.is(
    await runInstruct('x', flags(stack, 's', { timeout: 'soon' }), { out: sink().stream, err: err.stream }),
    INSTRUCT_EXIT.usage,
  );
  assert.match(err.text(), '--timeout must be');
  const out = sink();
  const code = await runInstruct(
    'x',
    { ...flags(stack, 's'), relay: 'ws://127.0.0.1:1/socket' },
    { out: out.stream, err: sink().stream },
  );
  assert.is(code, INSTRUCT_EXIT.unreachable);
  assert.match(out.text(), 'cannot reach relay');
  assert.match(out.text(), 'start it with `aep-steer up`');
});

test('the claimant does not declare the verb when AEP_INSTRUCT is off (D5): refused unsupported, exit 4', async () => {
  const off = await startTestStack({ instruct: false });
  try {
    const s = await off.openSession();
    const out = sink();
    assert.is(
      await runInstruct('x', flags(off, s.session), { out: out.stream, err: sink().stream }),
      INSTRUCT_EXIT.refused,
    );
    assert.match(
      out.text(),
      'not sent (unsupported): claude-code does not declare x.claude-code.control.instruct: its adapter runs with steering off (steering is opt-in); restart its adapter with steering on: `aep-steer down claude-code`, then `aep-steer up claude-code --instruct`',
    );
    assert.not.ok(off.seen.some((e) => e.type === 'x.claude-code.control.instruct'));
  } finally {
    await off.stop();
  }
});

test("a watch-only relay (no token) refuses the command on the target's behalf: exit 4, unauthorized", async () => {
  const open = await startTestStack({ watchOnly: true });
  try {
    const s = await open.openSession();
    const out = sink();
    assert.is(
      await runInstruct('x', flags(open, s.session), { out: out.stream, err: sink().stream }),
      INSTRUCT_EXIT.refused,
    );
    assert.match(out.text(), 'the relay refused the command (unauthorized): ');
    assert.match(out.text(), 'use a token that may');
  } finally {
    await open.stop();
  }
});

test('--start: sent as idle start; a session no lane can start refuses start-unsupported, exit 3, saying so (D43)', async () => {
  const s = await stack.openSession();
  // The turn ends (Stop): the session waits for its person.
  const ended = stack.waitFor((e) => e.session === s.session && e.type === 'run.finished');
  await stack.postHook(s.closing[0]!);
  await ended;
  const out = sink();
  const code = await runInstruct('wake up and run the tests', flags(stack, s.session, { start: true }), {
    out: out.stream,
    err: sink().stream,
  });
  assert.is(code, INSTRUCT_EXIT.rejected, out.text());
  assert.match(out.text(), 'no way into this session can start a turn');
  const cmd = stack.seen.find((e) => e.type === 'x.claude-code.control.instruct' && e.session === s.session)!;
  assert.equal(cmd.data, { text: 'wake up and run the tests', idle: 'start' });
});

test('--idle takes refuse, wait or start; --start with another --idle is a usage error; both before anything is sent', async () => {
  const s = await stack.openSession();
  for (const extra of [{ idle: 'later' }, { start: true, idle: 'wait' }]) {
    const err = sink();
    const code = await runInstruct('x', flags(stack, s.session, extra), { out: sink().stream, err: err.stream });
    assert.is(code, INSTRUCT_EXIT.usage, err.text());
    assert.match(err.text(), /--idle must be one of refuse, wait, start|--start is --idle start/);
  }
  assert.not.ok(stack.seen.some((e) => e.type === 'x.claude-code.control.instruct' && e.session === s.session));
});

test.run();
