// D44 on a real relay and Claude Code adapter through `aep-steer queue`: three queued, the second
// edited in place, the third moved to the front, the queue paused: the turn's moments carry
// nothing; resumed, the next turn's first moment carries them in the new order with the edited
// text. A promote mid-turn rides the same turn's next moment. Each bad input gets its own code,
// exit and sentence, and the queue is unchanged.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runInstruct } from '../../src/cli/instruct-command.js';
import { QUEUE_EXIT, runQueue } from '../../src/cli/queue-command.js';
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
const send = async (text: string, session: string, delivery = 'queue') => {
  const out = sink();
  const code = await runInstruct(
    text,
    { ...base(session), wait: false, timeout: '30000', ackWindow: '10000', delivery },
    { out: out.stream, err: out.stream },
  );
  assert.is(code, 0, out.text());
};
const queue = async (session: string, flags: Record<string, unknown>, sender = 'alice') => {
  const out = sink();
  const code = await runQueue(
    { ...base(session, sender), timeout: '20000', ...flags },
    { out: out.stream, err: out.stream },
  );
  return { code, text: out.text() };
};
interface Listed {
  paused: boolean;
  waiting: { id: string; position: number; version: number; text?: string; delivery: string }[];
}
const listed = async (session: string): Promise<Listed> => {
  const r = await queue(session, { json: true });
  assert.is(r.code, QUEUE_EXIT.listed, r.text);
  return JSON.parse(r.text) as Listed;
};
const rows = (l: Listed) => l.waiting.map((w) => [w.position, w.text, w.version]);
const contextOf = (reply: { body: unknown }) =>
  (reply.body as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;
const nextPrompt = (s: ScriptedSession, prompt: string) => ({ ...s.opening[1]!, prompt });

test('queue three, edit the second, move the third to the front, pause; resume: the next turn carries them so', async () => {
  const s = await stack.openSession();
  for (const t of ['first', 'second', 'third']) await send(t, s.session);
  const [a, b, c] = (await listed(s.session)).waiting.map((w) => w.id);

  const edit = await queue(s.session, { edit: b, text: 'second, edited' });
  assert.is(edit.code, QUEUE_EXIT.changed, edit.text);
  assert.match(edit.text, `✓ edited: ${b} is at version 2, in its place`);
  const move = await queue(s.session, { move: c, to: 'front' });
  assert.is(move.code, QUEUE_EXIT.changed, move.text);
  assert.match(move.text, `✓ moved: ${c} is number 1 in the queue`);
  const pause = await queue(s.session, { pause: true });
  assert.is(pause.code, QUEUE_EXIT.changed, pause.text);
  assert.match(pause.text, '✓ paused');

  const now = await listed(s.session);
  assert.is(now.paused, true);
  assert.equal(rows(now), [
    [1, 'third', 1],
    [2, 'first', 1],
    [3, 'second, edited', 2],
  ]);
  const human = await queue(s.session, {});
  assert.match(human.text, /paused: nothing but a steer is delivered/);
  assert.match(human.text, new RegExp(`#3\\s+${b}\\s+v2`));

  // Paused: no moment of this turn, nor the next turn's first, carries any of them.
  for (const h of s.toolCall) assert.is(contextOf(await stack.postHook(h)), undefined, h.hook_event_name as string);
  assert.is(contextOf(await stack.postHook(s.closing[0]!)), undefined);
  assert.is(contextOf(await stack.postHook(nextPrompt(s, 'go on'))), undefined, 'the next turn opens without them');
  await stack.postHook(s.closing[0]!);

  const resume = await queue(s.session, { resume: true });
  assert.is(resume.code, QUEUE_EXIT.changed, resume.text);
  assert.is((await listed(s.session)).paused, false);
  assert.is(contextOf(await stack.postHook(nextPrompt(s, 'and now?'))), 'third\n\nfirst\n\nsecond, edited');
  const delivered = await stack.waitFor((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === b);
  assert.is(delivered.data?.['version'], 2, 'the delivery names the version it carried');
  const edited = await stack.waitFor((e) => e.type === 'x.claude-code.instruction.edited' && e.subject === b);
  // D46: the settled edit names who made it.
  assert.equal(edited.data, { version: 2, decided_by: { identity: 'alice', surface: 'cli' } });
  void a;
});

test('promote mid-turn: the waiting instruction rides the same turn next moment as a steer', async () => {
  const s = await stack.openSession();
  await send('later, the changelog', s.session);
  await send('now: stop and run the tests', s.session);
  const [, now] = (await listed(s.session)).waiting.map((w) => w.id);
  const promote = await queue(s.session, { promote: now });
  assert.is(promote.code, QUEUE_EXIT.changed, promote.text);
  assert.match(promote.text, "goes in as a steer at the running turn's next moment");
  assert.is(contextOf(await stack.postHook(s.toolCall[0]!)), 'now: stop and run the tests');
  const d = await stack.waitFor((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === now);
  assert.is(d.data?.['delivery'], 'steer');
  assert.equal(
    (await listed(s.session)).waiting.map((w) => w.text),
    ['later, the changelog'],
  );
});

test('bad input: each its own code, exit and sentence; the queue unchanged', async () => {
  const s = await stack.openSession();
  await send('one', s.session);
  await send('two', s.session);
  const other = await stack.openSession();
  await send('elsewhere', other.session);
  const [one] = (await listed(s.session)).waiting.map((w) => w.id);
  const [foreign] = (await listed(other.session)).waiting.map((w) => w.id);
  const before = rows(await listed(s.session));
  const cases: [Record<string, unknown>, string, number, string?][] = [
    [{ edit: one, text: '   ' }, 'text-empty', QUEUE_EXIT.rejected, 'fix the text and send it again'],
    [{ edit: one, text: 'x'.repeat(4001) }, 'text-too-long', QUEUE_EXIT.rejected],
    [{ move: one, before: foreign }, 'move-target-unknown', QUEUE_EXIT.rejected, 'must wait in the same session'],
    [{ edit: 'no-such-id', text: 'x' }, 'unknown-instruction', QUEUE_EXIT.rejected],
  ];
  for (const [flags, code, exit, sentence] of cases) {
    const r = await queue(s.session, flags);
    assert.is(r.code, exit, r.text);
    assert.match(r.text, `not changed (${code})`);
    if (sentence !== undefined) assert.match(r.text, sentence);
  }
  const mallory = await queue(s.session, { edit: one, text: 'mine now' }, 'mallory');
  assert.is(mallory.code, QUEUE_EXIT.rejected, mallory.text);
  assert.match(mallory.text, 'not changed (not-sender): only the sender of an instruction may change it');
  assert.equal(rows(await listed(s.session)), before, 'nothing changed');
  const usage = await queue(s.session, { move: one });
  assert.is(usage.code, QUEUE_EXIT.usage);
  assert.match(usage.text, '--move <id> needs --before <id> or --to front|back');
});

test('clear withdraws each of the sender own waiting instructions, and only those', async () => {
  const s = await stack.openSession();
  await send('mine 1', s.session);
  const out = sink();
  assert.is(
    await runInstruct(
      'not mine',
      { ...base(s.session, 'bob'), wait: false, timeout: '30000', ackWindow: '10000', delivery: 'queue' },
      { out: out.stream, err: out.stream },
    ),
    0,
  );
  await send('mine 2', s.session);
  const r = await queue(s.session, { clear: true });
  assert.is(r.code, QUEUE_EXIT.changed, r.text);
  assert.is(r.text.match(/✓ withdrawn/g)?.length, 2);
  assert.equal(
    (await listed(s.session)).waiting.map((w) => w.text),
    ['not mine'],
  );
});

test.run();
