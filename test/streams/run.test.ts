import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adapter, SECRET } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { instructCmd, respondCmd } from '../support/session-steps.js';
import { acceptsFor } from '../../src/streams/run.js';

const S = 's-1';

test('D15: a hook to the wrong secret gets 404 and drains nothing', async () => {
  const a = await adapter();
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    a.handle.command(instructCmd('c1', 'keep me', S));
    const wrong = await a.post(hookBody('UserPromptSubmit', S), '/hook/not-the-secret');
    assert.is(wrong.status, 404);
    const also = await a.post(hookBody('UserPromptSubmit', S), `/hook/${SECRET}/extra`);
    assert.is(also.status, 404);
    assert.equal(
      a.handle.sessions()[0]!.queue.map((q) => q.id),
      ['c1'],
    );
    const right = await a.post(hookBody('UserPromptSubmit', S));
    assert.equal(right.json, {
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'keep me' },
    });
  } finally {
    await a.handle.close();
  }
});

test('D15: a malformed body gets the neutral reply, a HOOK_BODY_INVALID report, and the queue is untouched', async () => {
  const a = await adapter();
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    a.handle.command(instructCmd('c1', 'keep me', S));
    const bad = await a.post('{"session_id": "s-1", "hook_event_name": ');
    assert.is(bad.status, 200);
    assert.equal(bad.json, {});
    const unreadable = await a.post({ no: 'fields' });
    assert.equal(unreadable.json, {});
    assert.equal(
      a.errors.map((e) => e.code),
      ['HOOK_BODY_INVALID', 'HOOK_BODY_INVALID'],
    );
    assert.equal(
      a.handle.sessions()[0]!.queue.map((q) => q.id),
      ['c1'],
    );
  } finally {
    await a.handle.close();
  }
});

test('D9: over HTTP the reply carries the instruction and delivered follows the finished write', async () => {
  const a = await adapter();
  try {
    const started = await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    assert.equal(started.json, {}, 'a subagent moment is not eligible (D7)');
    const accepted = a.next((e) => e.type === 'control.accepted');
    a.handle.command(instructCmd('c1', 'prefer small commits', S));
    const ack = await accepted;
    assert.is(ack.cause, 'c1');
    assert.is(ack.source, 'aep://test-host/agent/claude-code/session/s-1');
    const delivered = a.next((e) => e.type === 'x.claude-code.instruction.delivered');
    const reply = await a.post(hookBody('PreToolUse', S, { tool_name: 'Bash' }));
    assert.equal(reply.json, {
      hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'prefer small commits' },
    });
    const d = await delivered;
    assert.is(d.cause, 'c1');
    assert.ok(Number.isInteger((d.data as { queued_ms: number }).queued_ms));
    const seqs = a.events.map((e) => e.seq);
    assert.equal(
      seqs,
      [...seqs].sort((x, y) => (x ?? 0) - (y ?? 0)),
      'sequenced in order',
    );
    assert.equal(
      a.events.map((e) => e.type),
      ['session.started', 'control.accepted', 'tool.requested', 'x.claude-code.instruction.delivered'],
    );
    assert.equal(a.handle.sessions()[0]!.queue, []);
  } finally {
    await a.handle.close();
  }
});

test('observations are emitted before steering outputs; agent-scoped ones carry no session or seq', async () => {
  const a = await adapter();
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    a.handle.command(instructCmd('c1', 'one', S));
    const before = a.events.length;
    await a.post(hookBody('TeammateIdle', S));
    const fresh = a.events.slice(before);
    assert.equal(
      fresh.map((e) => e.type),
      ['agent.idle', 'progress.status'],
    );
    assert.equal(
      [fresh[0]!.session, fresh[0]!.seq, fresh[0]!.source],
      [undefined, undefined, 'aep://test-host/agent/claude-code'],
    );
    assert.equal([fresh[1]!.session, fresh[1]!.seq], [S, 2]);
  } finally {
    await a.handle.close();
  }
});

test('a malformed observation is reported and skipped; the hook still delivers', async () => {
  const base = fakeSurface();
  const surface = fakeSurface({ classify: (i) => ({ ...base.classify(i), observations: [{ type: 'Not A Type' }] }) });
  const a = await adapter({ surface });
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    a.handle.command(instructCmd('c1', 'one', S));
    const reply = await a.post(hookBody('UserPromptSubmit', S));
    assert.equal(reply.json, { hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'one' } });
    assert.equal(
      a.errors.map((e) => e.code),
      ['EVENT_INVALID', 'EVENT_INVALID'],
    );
  } finally {
    await a.handle.close();
  }
});

test('D9: a reply that cannot be written returns the instructions to the queue and emits no delivered', async () => {
  const surface = fakeSurface({ contextReply: () => ({ body: { n: BigInt(1) } }) });
  const a = await adapter({ surface });
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    a.handle.command(instructCmd('c1', 'one', S));
    a.handle.command(instructCmd('c2', 'two', S));
    const reply = await a.post(hookBody('UserPromptSubmit', S));
    assert.equal(reply.json, {}, 'the vendor still gets the neutral reply');
    await a.post(hookBody('Stop', S, { stop_hook_active: true }));
    assert.equal(
      a.handle.sessions()[0]!.queue.map((q) => q.id),
      ['c1', 'c2'],
    );
    assert.not.ok(a.events.some((e) => e.type.endsWith('instruction.delivered')));
  } finally {
    await a.handle.close();
  }
});

test('D15: a reply builder that throws gets the neutral reply; the instruction returns to the queue', async () => {
  const surface = fakeSurface({
    contextReply: () => {
      throw new Error('reply table broken');
    },
  });
  const a = await adapter({ surface });
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    a.handle.command(instructCmd('c1', 'one', S));
    const reply = await a.post(hookBody('UserPromptSubmit', S));
    assert.equal(reply.json, {});
    // The adapter's own fault, not the vendor's input: INTERNAL.
    assert.equal(
      a.errors.map((e) => e.code),
      ['INTERNAL'],
    );
    const view = a.handle.sessions()[0]!;
    assert.equal([view.queue.map((q) => q.id), view.inFlight], [['c1'], 0]);
  } finally {
    await a.handle.close();
  }
});

test('D10: with AEP_INSTRUCT_TTL_MS set, an old instruction is dropped expired by the tick stream', async () => {
  const a = await adapter({ ttlMs: 20 });
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'sub' }));
    const dropped = a.next((e) => e.type === 'x.claude-code.instruction.dropped');
    a.handle.command(instructCmd('c1', 'one', S));
    const d = await dropped;
    assert.equal([d.cause, d.data], ['c1', { reason: 'expired' }]);
    assert.equal(a.handle.sessions()[0]!.queue, []);
  } finally {
    await a.handle.close();
  }
});

test('D4/D6: unknown session refused; a redelivered command gets the byte-identical ack', async () => {
  const a = await adapter();
  try {
    const first = a.next((e) => e.type === 'control.rejected');
    const cmd = instructCmd('c9', 'hello', 'nobody');
    a.handle.command(cmd);
    const r = await first;
    assert.equal(r.data, { reason: 'refused', detail: 'unknown session' });
    assert.is(r.capture, 'redacted');
    await a.post(hookBody('SessionStart', 'nobody', { agent_id: 'x' }));
    const again = a.next((e) => e.type === 'control.rejected' && e !== r);
    a.handle.command(cmd);
    assert.is(JSON.stringify(await again), JSON.stringify(r), 'same decision even after the session appeared');

    await a.post(hookBody('SessionStart', S, { agent_id: 'x' }));
    const ok = a.next((e) => e.type === 'control.accepted');
    const c1 = instructCmd('c1', 'once', S);
    a.handle.command(c1);
    const ack = await ok;
    const re = a.next((e) => e.type === 'control.accepted' && e !== ack);
    a.handle.command(c1);
    assert.is(JSON.stringify(await re), JSON.stringify(ack));
    assert.is(a.handle.sessions().find((s) => s.session === S)!.queue.length, 1);
  } finally {
    await a.handle.close();
  }
});

test('D5: with the gate off the verb is not accepted and an instruct is rejected unsupported', async () => {
  const a = await adapter({ instruct: false });
  try {
    assert.equal(acceptsFor(fakeSurface(), false), ['control.attention.respond']);
    assert.equal(acceptsFor(fakeSurface(), true), ['control.attention.respond', 'x.claude-code.control.instruct']);
    await a.post(hookBody('SessionStart', S, { agent_id: 'x' }));
    const rej = a.next((e) => e.type === 'control.rejected');
    a.handle.command(instructCmd('c1', 'hello', S));
    assert.is(((await rej).data as { reason: string }).reason, 'unsupported');
  } finally {
    await a.handle.close();
  }
});

test('D13/D14: a held PermissionRequest waits for a respond and replies with the decision only', async () => {
  const a = await adapter();
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'x' }));
    a.handle.command(instructCmd('c1', 'steer text', S));
    const requested = a.next((e) => e.type === 'attention.requested');
    const heldReply = a.post(hookBody('PermissionRequest', S, { tool_name: 'Bash' }));
    const req = await requested;
    assert.equal((req.data as { respond_via: string[] }).respond_via, ['control']);
    assert.is(req.severity, 'notice');
    assert.equal(a.handle.sessions()[0]!.state, 'holding.permission');
    const resolved = a.next((e) => e.type === 'attention.resolved');
    a.handle.command(respondCmd('r1', req.id, { option: 'allow' }, S));
    const reply = await heldReply;
    assert.equal(reply.json, {
      hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
    });
    assert.not.ok(reply.text.includes('steer text'));
    const res = await resolved;
    assert.is(res.subject, req.id);
    const answered = a.events.find((e) => e.type === 'attention.answered')!;
    assert.equal([answered.subject, answered.cause], [req.id, 'r1']);
    assert.is(res.cause, answered.id);
    assert.equal(
      a.handle.sessions()[0]!.queue.map((q) => q.id),
      ['c1'],
      'steering still waits for an eligible moment',
    );
  } finally {
    await a.handle.close();
  }
});

test('D14: with no answer, attention.timeout and a reply with no decision', async () => {
  const a = await adapter({ attentionTimeoutMs: 30 });
  try {
    const reply = await a.post(hookBody('PermissionRequest', S, { tool_name: 'Bash' }));
    assert.equal(reply.json, {});
    const t = a.events.find((e) => e.type === 'attention.timeout');
    assert.ok(t);
    assert.equal(t!.data, { after_ms: 30, decided_by: { identity: 'adapter', surface: 'timeout' } });
    assert.is(t!.subject, a.events.find((e) => e.type === 'attention.requested')!.id);
  } finally {
    await a.handle.close();
  }
});

test('D10: SessionEnd drops what is queued, then session.ended; later instructs are refused', async () => {
  const a = await adapter();
  try {
    await a.post(hookBody('SessionStart', S, { agent_id: 'x' }));
    a.handle.command(instructCmd('c1', 'one', S));
    a.handle.command(instructCmd('c2', 'two', S));
    await a.post(hookBody('SessionEnd', S));
    const tail = a.events.slice(-4).map((e) => [e.type, e.cause ?? null]);
    // The end hook's own observation comes first, and session.ended points at it.
    assert.is(tail[0]![0], 'x.claude-code.session.session_end');
    assert.equal(tail.slice(1, 3), [
      ['x.claude-code.instruction.dropped', 'c1'],
      ['x.claude-code.instruction.dropped', 'c2'],
    ]);
    assert.equal(tail[3], ['session.ended', a.events.at(-4)!.id]);
    assert.equal(a.events.at(-1)!.data, { reason: 'normal' }, 'the reason the table read from the end hook');
    const rej = a.next((e) => e.type === 'control.rejected');
    a.handle.command(instructCmd('c3', 'three', S));
    assert.is(((await rej).data as { detail: string }).detail, 'session ended');
  } finally {
    await a.handle.close();
  }
});

test("D6: a resumed session's SessionStart reopens it over HTTP, and a restart rebuilds it reopened", async () => {
  const a = await adapter();
  const R = 'resumed-1';
  try {
    await a.post(hookBody('SessionStart', R));
    await a.post(hookBody('SessionEnd', R, { reason: 'killed' }));
    assert.equal(a.events.find((e) => e.type === 'session.ended' && e.session === R)!.data, { reason: 'killed' });
    const refused = a.next((e) => e.type === 'control.rejected' && e.cause === 'r0');
    a.handle.command(instructCmd('r0', 'before the resume', R));
    assert.is(((await refused).data as { detail: string }).detail, 'session ended');
    const reopened = await a.post(hookBody('SessionStart', R));
    assert.equal(reopened.json, {});
    const accepted = a.next((e) => e.cause === 'r1');
    a.handle.command(instructCmd('r1', 'after the resume', R));
    assert.is((await accepted).type, 'control.accepted');
    const r = await a.post(hookBody('UserPromptSubmit', R));
    assert.equal(r.json, {
      hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'after the resume' },
    });
    // The delivered event may already be out by the time the reply is read: poll the record.
    for (
      let i = 0;
      i < 500 && !a.events.some((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === 'r1');
      i += 1
    )
      await new Promise((res) => setTimeout(res, 10));
    assert.ok(a.events.some((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === 'r1'));
  } finally {
    await a.handle.close();
  }
  const mine = a.events.filter((e) => e.session === R);
  assert.ok(
    mine.every((e, i) => e.epoch === 0 && e.seq === i),
    'positions continue in the same epoch',
  );
  assert.is(mine.filter((e) => e.type === 'session.ended').length, 1);
  // The log rebuilds the reopened session: a retry of r0 gets its refusal back, a new instruct queues.
  const b = await adapter({ logPath: a.logPath });
  try {
    assert.equal(b.handle.sessions().find((v) => v.session === R)!.state, 'idle');
    const again = b.next((e) => e.cause === 'r0');
    b.handle.command(instructCmd('r0', 'before the resume', R));
    assert.equal(
      JSON.stringify(await again),
      JSON.stringify(a.events.find((e) => e.cause === 'r0' && e.type === 'control.rejected')),
    );
    const more = b.next((e) => e.cause === 'r2');
    b.handle.command(instructCmd('r2', 'after the restart', R));
    assert.is((await more).type, 'control.accepted');
  } finally {
    await b.handle.close();
  }
});

test('a port already in use fails with PORT_IN_USE and leaves the log closed', async () => {
  const a = await adapter();
  try {
    let code = '';
    try {
      await adapter({ port: a.handle.port, logPath: `${a.logPath}.second` });
    } catch (e) {
      code = (e as { code?: string }).code ?? '';
    }
    assert.is(code, 'PORT_IN_USE');
  } finally {
    await a.handle.close();
  }
});

test.run();
