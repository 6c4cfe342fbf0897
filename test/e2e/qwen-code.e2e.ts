// Qwen Code 0.24.4 end to end: the real CLI runs headless against the loopback mock Chat
// Completions API; this project's relay and adapter run in-process; the real installer writes
// Qwen's HTTP hooks, which post straight to the adapter; instructions go through the relay as a
// consumer sends them. The mock holds a chosen model request so each instruction is queued before
// the moments that must (or must not) take it: every sequence is deterministic without sleeping.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { bodyHas, chatMessagesOf, chatTextOf, type VendorStack } from '../support/vendor-e2e.js';

const e2e = e2eSuite('qwen-code');
/** The same adapter with a short instruction TTL (D26: the default is an hour). */
let shortTtl: VendorStack;
const TTL_MS = 1500;
const INSTRUCT = 'x.qwen-code.control.instruct';

/** A run in a workspace of its own whose first model request of the turn carrying `tag` is held. */
async function startHeld(prompt: string, tag: string) {
  return e2e.startHeld(await e2e.workspace(), prompt, (r) => e2e.turnOf(r).includes(tag));
}

const seqOf = (e: AepEvent | undefined): number => {
  assert.ok(e, 'event present');
  return e!.seq!;
};
const pad = (marker: string, n: number) => `${marker} ${'x'.repeat(n - marker.length - 1)}`;

if (e2e.installed) {
  test.before(async () => {
    shortTtl = await e2e.adapter({ AEP_INSTRUCT_TTL_MS: String(TTL_MS) });
  });

  test('PreToolUse is ineligible and leaves the queue for PostToolUse', async () => {
    const { session, release, run } = await startHeld('[[TURN]] q-post run one command', 'q-post');
    const marker = `STEER-QWEN-POST-${session.slice(0, 8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text: `${marker} <b>bold</b>` });
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await e2e.stack.delivered(session, cmd);
    assert.ok(seqOf(e2e.stack.find(session, 'control.accepted', cmd.id)) < seqOf(d), 'ack before delivered');
    // PreToolUse fired with the instruction queued and left it; PostToolUse took it.
    assert.ok(seqOf(e2e.stack.find(session, 'tool.requested')) < seqOf(e2e.stack.find(session, 'tool.completed')));
    assert.ok(seqOf(e2e.stack.find(session, 'tool.completed')) < seqOf(d), 'delivered at PostToolUse, not PreToolUse');
    const [held, next] = e2e.requestsOf('q-post');
    assert.not.ok(bodyHas(held!.body, marker));
    const tool = chatMessagesOf(next!.body).find((m) => m.role === 'tool' && chatTextOf(m).includes(marker));
    assert.ok(tool, 'appended to the tool result');
    // Qwen escapes < and > in forwarded context (vendor-clis-observed §3.6).
    assert.ok(chatTextOf(tool!).includes(`${marker} &lt;b&gt;bold&lt;/b&gt;`), chatTextOf(tool!).slice(-200));
  });

  test('UserPromptSubmit delivers, also on the empty-prompt refire after a tool batch', async () => {
    const { session, release, run } = await startHeld('[[TURN]] q-batch run one command', 'q-batch');
    // Six of 4,000 (D2's cap): two fit each moment under 10,000 (D8), so PostToolUse, PostToolBatch
    // and the empty-prompt UserPromptSubmit that follows the batch each take two.
    const texts = ['A', 'B', 'C', 'D', 'E', 'F'].map((k) => pad(`STEER-QWEN-${k}-${session.slice(0, 8)}`, 4000));
    const cmds: AepCommand[] = [];
    for (const t of texts) cmds.push(await e2e.stack.accepted(session, INSTRUCT, { text: t }));
    release();
    assert.is((await run).code, 0);
    const ds = [];
    for (const c of cmds) ds.push(await e2e.stack.delivered(session, c));
    for (let i = 1; i < ds.length; i += 1) assert.ok(ds[i - 1]!.seq! < ds[i]!.seq!, 'FIFO');
    const next = e2e.requestsOf('q-batch')[1]!;
    const msgs = chatMessagesOf(next.body);
    const where = (t: string) => msgs.findIndex((m) => chatTextOf(m).includes(t.slice(0, 40)));
    const toolAt = msgs.findIndex((m) => m.role === 'tool');
    assert.is(where(texts[0]!), toolAt, 'A with PostToolUse, on the tool result');
    assert.is(where(texts[3]!), toolAt, 'D with PostToolBatch, on the tool result');
    const refire = msgs[where(texts[4]!)]!;
    assert.is(refire.role, 'user', 'E and F with the refired UserPromptSubmit: a user message after the batch');
    assert.ok(where(texts[4]!) > toolAt && chatTextOf(refire).includes(texts[5]!.slice(0, 40)));
    assert.ok(
      texts.every((t) => bodyHas(next.body, t)),
      'every instruction arrives whole',
    );
  });

  test('SessionStart of a continued session delivers into the system message', async () => {
    const ws = await e2e.workspace();
    const { session, run } = await e2e.startRun(ws, '[[TURN]] [[TOOLS:0]] q-first hello');
    const first = await run;
    assert.is(first.code, 0, first.stderr.slice(-2000));
    const marker = `STEER-QWEN-START-${session.slice(0, 8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text: marker });
    const resumedFrom = e2e.stack.events.length;
    const second = await e2e.run(ws, '[[TURN]] [[TOOLS:0]] q-second again', { args: ['--continue'] });
    assert.is(second.code, 0, second.stderr.slice(-2000));
    const started = await e2e.stack.waitFor('the continued session.started', () =>
      e2e.stack.events.slice(resumedFrom).find((e) => e.type === 'session.started'),
    );
    assert.is(started.session, session, '--continue keeps the session id');
    const d = await e2e.stack.delivered(session, cmd);
    assert.ok(
      seqOf(started) < seqOf(d) &&
        seqOf(d) < seqOf(e2e.stack.events.slice(resumedFrom).find((e) => e.type === 'run.started')),
      'taken at SessionStart',
    );
    const req = e2e.requestsOf('q-second')[0]!;
    const system = chatMessagesOf(req.body).find((m) => m.role === 'system');
    assert.ok(system && chatTextOf(system).includes(marker), 'in the system message of the first request');
  });

  test('a finished headless session never ends: an instruction to it is dropped expired under a short TTL', async () => {
    const ws = await e2e.workspace({ to: shortTtl });
    const started = await e2e.startRun(ws, '[[TURN]] [[TOOLS:0]] q-ttl just answer', { to: shortTtl });
    const run = await started.run;
    assert.is(run.code, 0, run.stderr.slice(-2000));
    const { session } = started;
    // Qwen fires no SessionEnd under -p (vendor-surfaces §3.5): the session looks live for ever.
    assert.not.ok(shortTtl.find(session, 'session.ended'), 'no end moment fired');
    const text = `STEER-QWEN-TTL-${session.slice(0, 8)}`;
    const { cmd, settled } = await shortTtl.instruct(session, text);
    assert.is(settled.outcome, 'accepted', 'taken: nothing says the session is over');
    const dropped = await shortTtl.waitFor(
      'dropped expired',
      () => shortTtl.find(session, 'x.qwen-code.instruction.dropped', cmd.id),
      20_000,
    );
    assert.equal(dropped.data, { reason: 'expired' }, 'D26: no instruction waits forever');
    const ack = shortTtl.find(session, 'control.accepted', cmd.id)!;
    assert.ok(Date.parse(dropped.time) - Date.parse(ack.time) >= TTL_MS - 50, 'not before the TTL');
    assert.not.ok(shortTtl.find(session, 'x.qwen-code.instruction.delivered', cmd.id));
    assert.is(e2e.withText(text).length, 0, 'never reached a model');
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(e2e.stack.errors, []);
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
