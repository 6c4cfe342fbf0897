// D31, D32 on a real relay and Claude Code adapter: instruct --delivery, queue, withdraw, each
// refusal with its own code, exit and sentence, and nothing changed in the queue by a refusal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runInstruct, INSTRUCT_EXIT } from '../../src/cli/instruct-command.js';
import { runWithdraw, WITHDRAW_EXIT } from '../../src/cli/withdraw-command.js';
import { runQueue } from '../../src/cli/queue-command.js';
import type { ScriptedSession } from '../../src/demo/scripted-session.js';
import { sink, startTestStack, type TestStack } from './support.js';

let stack: TestStack;
test.before(async () => {
  stack = await startTestStack();
});
test.after(async () => {
  await stack.stop();
});

const base = (session: string, sender = 'alice') => ({ relay: stack.relayUrl, token: stack.token, sender, session });
const instruct = (text: string, session: string, extra: Record<string, unknown> = {}) => {
  const out = sink();
  const run = runInstruct(
    text,
    { ...base(session), wait: true, timeout: '30000', ackWindow: '10000', ...extra },
    { out: out.stream, err: out.stream },
  );
  return { run, out };
};
const withdraw = async (session: string, extra: Record<string, unknown>, sender = 'alice') => {
  const out = sink();
  const code = await runWithdraw(
    { ...base(session, sender), timeout: '10000', ...extra },
    { out: out.stream, err: out.stream },
  );
  return { code, text: out.text() };
};
const queued = async (session: string) => {
  const out = sink();
  assert.is(await runQueue({ ...base(session), json: true }, { out: out.stream }), 0);
  return JSON.parse(out.text()) as {
    outcome: string;
    waiting: { id: string; sender: string; delivery: string; ageMs: number; text?: string }[];
  };
};
const contextOf = (reply: { body: unknown }) =>
  (reply.body as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;
/** The next turn's first moment: the prompt the person types next. */
const nextPrompt = (s: ScriptedSession) => ({ ...s.opening[1]!, prompt: 'and now?' });

test("--delivery queue sent mid-turn rides the next turn's first moment, not the running turn", async () => {
  const s = await stack.openSession();
  const { run, out } = instruct('after this turn, write the changelog', s.session, { delivery: 'queue' });
  await stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  for (const h of s.toolCall)
    assert.is(contextOf(await stack.postHook(h)), undefined, `${h.hook_event_name} inside the turn carries nothing`);
  assert.is(contextOf(await stack.postHook(s.closing[0]!)), undefined, "the turn's Stop carries nothing");
  assert.is(contextOf(await stack.postHook(nextPrompt(s))), 'after this turn, write the changelog');
  assert.is(await run, INSTRUCT_EXIT.delivered, out.text());
  assert.match(out.text(), /✓ delivered \(queue\) at UserPromptSubmit/);
  assert.match(out.text(), "… queued (0 ahead); delivered when the agent's next turn starts");
  // D31: the adapter's hello says what it honours, and the roster carries it per session.
  const entry = (await stack.observer.roster()).find((r) => r.session === s.session)!;
  assert.equal((entry.control as { deliveries?: string[] }).deliveries, ['moment', 'steer', 'queue']);
  const d = await stack.waitFor((e) => e.session === s.session && e.type === 'x.claude-code.instruction.delivered');
  assert.equal([d.data?.['delivery'], d.data?.['moment']], ['queue', 'UserPromptSubmit']);
});

test('--delivery steer rides the running turn; with no turn running it is refused session-idle and says what to do', async () => {
  const s = await stack.openSession();
  const { run } = instruct('use the smaller fixture', s.session, { delivery: 'steer' });
  await stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
  assert.is(contextOf(await stack.postHook(s.toolCall[0]!)), 'use the smaller fixture');
  assert.is(await run, INSTRUCT_EXIT.delivered);
  await stack.postHook(s.closing[0]!);
  const idle = instruct('too late', s.session, { delivery: 'steer' });
  assert.is(await idle.run, INSTRUCT_EXIT.rejected);
  assert.match(
    idle.out.text(),
    'rejected by the adapter (session-idle): no turn is running, and a steer never starts one: send it with delivery queue, or as a moment; nothing was queued',
  );
  assert.equal((await queued(s.session)).waiting, []);
  const bad = instruct('x', s.session, { delivery: 'now' });
  assert.is(await bad.run, INSTRUCT_EXIT.usage);
  assert.match(bad.out.text(), '--delivery must be one of moment, steer, queue');
});

test('queue lists what waits; withdraw takes it back; refusals keep the queue as it was', async () => {
  const s = await stack.openSession();
  const a = instruct('first thing', s.session, { delivery: 'queue', wait: false });
  assert.is(await a.run, 0);
  const b = instruct('second thing', s.session, { wait: false });
  assert.is(await b.run, 0);
  const listed = await queued(s.session);
  assert.equal(
    listed.waiting.map((w) => [w.sender, w.delivery, w.text]),
    [
      ['alice', 'queue', 'first thing'],
      ['alice', 'moment', 'second thing'],
    ],
  );
  assert.ok(listed.waiting.every((w) => w.ageMs >= 0 && typeof w.id === 'string'));
  const [first, second] = listed.waiting.map((w) => w.id);

  const other = await withdraw(s.session, { instruction: first }, 'mallory');
  assert.is(other.code, WITHDRAW_EXIT.rejected, other.text);
  assert.match(other.text, 'not withdrawn (not-sender): only its sender may take it back');
  const unknown = await withdraw(s.session, { instruction: 'no-such-id' });
  assert.is(unknown.code, WITHDRAW_EXIT.rejected);
  assert.match(unknown.text, 'not withdrawn (unknown-instruction): the session has no instruction with that id');
  const usage = await withdraw(s.session, {});
  assert.is(usage.code, WITHDRAW_EXIT.usage);
  assert.equal(
    (await queued(s.session)).waiting.map((w) => w.id),
    [first, second],
    'refusals changed nothing',
  );

  const last = await withdraw(s.session, { last: true });
  assert.is(last.code, WITHDRAW_EXIT.withdrawn, last.text);
  assert.match(last.text, `✓ withdrawn: ${second} will not reach the agent`);
  const dropped = await stack.waitFor((e) => e.type === 'x.claude-code.instruction.dropped' && e.subject === second);
  assert.is(dropped.data?.['reason'], 'withdrawn');
  assert.equal(
    (await queued(s.session)).waiting.map((w) => w.id),
    [first],
  );
  // The withdrawn one never reaches the agent; the queued one rides the next turn.
  for (const h of s.toolCall) assert.is(contextOf(await stack.postHook(h)), undefined);
  await stack.postHook(s.closing[0]!);
  assert.is(contextOf(await stack.postHook(nextPrompt(s))), 'first thing');
  await stack.waitFor((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === first);
  const late = await withdraw(s.session, { instruction: first });
  assert.is(late.code, WITHDRAW_EXIT.delivered, late.text);
  assert.match(late.text, 'not withdrawn (already-delivered): the agent has it already');
  const again = await withdraw(s.session, { instruction: second });
  assert.is(again.code, WITHDRAW_EXIT.rejected);
  assert.match(again.text, '(not-waiting)');
  const none = await withdraw(s.session, { last: true });
  assert.is(none.code, WITHDRAW_EXIT.refused);
  assert.match(none.text, "none of alice's instructions waits");
});

test('a sender waiting on its instruction hears at once that it was withdrawn elsewhere; the roster and queue agree', async () => {
  const s = await stack.openSession();
  const acceptedOf = async (text: string) => {
    const cmd = await stack.waitFor((e) => e.session === s.session && e.data?.['text'] === text);
    return stack.waitFor((e) => e.type === 'control.accepted' && e.cause === cmd.id);
  };
  const { run, out } = instruct('rename the module', s.session, { delivery: 'queue', timeout: '120000' });
  const accepted = await acceptedOf('rename the module');
  // Another terminal takes it back while the first still waits for delivery.
  const other = await withdraw(s.session, { instruction: accepted.cause });
  assert.is(other.code, WITHDRAW_EXIT.withdrawn, other.text);
  assert.is(await run, INSTRUCT_EXIT.dropped, out.text());
  assert.match(out.text(), /✗ dropped: withdrawn/);
  const entry = (await stack.observer.roster()).find((r) => r.session === s.session)!;
  assert.is(entry.queued, 0, 'the roster no longer counts the withdrawn instruction');
  assert.equal((await queued(s.session)).waiting, []);
  const next = instruct('then the docs', s.session, { delivery: 'queue' });
  const nextAck = await acceptedOf('then the docs');
  assert.is((await withdraw(s.session, { instruction: nextAck.cause })).code, WITHDRAW_EXIT.withdrawn);
  assert.is(await next.run, INSTRUCT_EXIT.dropped);
  assert.match(next.out.text(), 'queued (0 ahead)');
});

test.run();
