// The final answer of a Copilot turn, read from the transcript its agentStop hook names: the main
// agent's last assistant message with text after the turn's last user message and before the line
// Copilot writes for this very hook. Copilot writes the file a moment behind its hooks, so the read
// is repeated until that line is there (bounded); a file that still ends in the turn before gives
// no answer, never the earlier turn's. A line cut short, a missing file, a path that is not the
// session's transcript or not a regular file give no answer and no error. The answer rides
// `run.finished` as `summary` at capture `redacted` (a metadata reader never sees it), and the
// hook's reply never waits for it: the table's `later` is what reads it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { copilot } from '../../../src/adapters/copilot/table.js';
import { readTail, scanTail, transcriptAnswer } from '../../../src/adapters/copilot/transcript.js';
import { surfaceFrom } from '../../../src/adapters/surface-from.js';

const SESSION = '9b4b2521-5601-46e3-ab2c-03f7be9cd283';
const AT = 1796626294020;
const QUICK = { limitMs: 60, everyMs: 5 };
let root = '';

const line = (type: string, data: Record<string, unknown>, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({ type, data, id: `${type}-id`, timestamp: '2026-12-07T06:51:34.014Z', ...extra });
const stop = (at: number) =>
  line('hook.start', { hookType: 'agentStop', input: { sessionId: SESSION, timestamp: at } });
/** A one-tool turn as Copilot CLI 1.0.102 wrote it, up to its answer. */
const turn = (answer: string): string[] => [
  line('user.message', { content: '[[TURN]] run a command', messageId: 'm1', delivery: 'idle' }),
  line('assistant.message', { messageId: 'a1', content: '', toolRequests: [{ toolCallId: 'c1', name: 'bash' }] }),
  line('tool.execution_complete', { toolCallId: 'c1', success: true, result: { content: 'TOOL_RAN_3' } }),
  line('assistant.message', { messageId: 'a2', content: answer, toolRequests: [] }),
  line('assistant.turn_end', { turnId: '1' }),
];
const transcript = (lines: string[], trailing = '\n'): string => {
  const dir = join(root, 'session-state', SESSION);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'events.jsonl');
  writeFileSync(path, lines.join('\n') + trailing);
  return path;
};
const hook = (path: unknown, extra: Record<string, unknown> = {}) => ({
  transcriptPath: path,
  sessionId: SESSION,
  timestamp: AT,
  ...extra,
});

test.before.each(() => {
  root = mkdtempSync(join(tmpdir(), 'aep-copilot-transcript-'));
});
test.after.each(() => rmSync(root, { recursive: true, force: true }));

test("the turn's last assistant message with text before the hook's own line is the answer", async () => {
  const path = transcript([...turn('first answer'), stop(AT - 5000), ...turn('MOCK_DONE 4'), stop(AT)]);
  assert.is(await transcriptAnswer(hook(path), QUICK), 'MOCK_DONE 4');
});

test('the file is read again until the hook line is written; one still in the turn before gives no answer', async () => {
  const path = transcript([...turn('the earlier turn'), stop(AT - 5000)]);
  assert.is(await transcriptAnswer(hook(path), QUICK), undefined, "never the earlier turn's answer");
  const reading = transcriptAnswer(hook(path), { limitMs: 30_000, everyMs: 5 });
  appendFileSync(path, `${[...turn('written late'), stop(AT)].join('\n')}\n`);
  assert.is(await reading, 'written late');
});

test('a turn that said nothing after its prompt has no answer', async () => {
  const path = transcript([
    ...turn('the earlier turn'),
    stop(AT - 5000),
    line('user.message', { content: 'next', messageId: 'm2', delivery: 'queued' }),
    line('assistant.turn_end', { turnId: '2' }),
    stop(AT),
  ]);
  assert.is(await transcriptAnswer(hook(path), QUICK), undefined);
});

test("a subagent's message is not the main agent's answer", async () => {
  const path = transcript([
    ...turn('the main answer').slice(0, 4),
    line('assistant.message', { content: 'inside a task', parentToolCallId: 't1' }),
    line('assistant.message', { content: 'a named agent' }, { agentId: 'sub-1' }),
    stop(AT),
  ]);
  assert.is(await transcriptAnswer(hook(path), QUICK), 'the main answer');
});

test('a last line still being written is passed over; an answer line cut short is no answer, never a crash', async () => {
  const lines = turn('the answer');
  const partial = transcript([...lines, stop(AT), lines[4]!.slice(0, 20)], '');
  assert.is(await transcriptAnswer(hook(partial), QUICK), 'the answer');
  const cut = transcript([...lines.slice(0, 3), lines[3]!.slice(0, 40), stop(AT)]);
  assert.is(await transcriptAnswer(hook(cut), QUICK), undefined);
});

test("the read is bounded to the file's end: a first line cut by the bound is not read", () => {
  const answer = line('assistant.message', { content: 'cut by the bound' });
  assert.equal(scanTail(`${answer.slice(10)}\n${stop(AT)}`, false, AT), { settled: true });
  assert.equal(scanTail(`junk\n${answer}\n${stop(AT)}`, false, AT), { answer: 'cut by the bound', settled: true });
  const path = transcript([
    line('assistant.message', { content: 'x'.repeat(2000) }),
    ...turn('near the end'),
    stop(AT),
  ]);
  const read = readTail(path, 1500);
  assert.ok(read !== undefined && !read.whole && read.text.length <= 1500);
  assert.is(scanTail(read!.text, read!.whole, AT).answer, 'near the end');
});

test("a missing file, a relative path, another session's, another file's name, no timestamp: no answer", async () => {
  const path = transcript([...turn('the answer'), stop(AT)]);
  const gone = join(root, 'session-state', 'gone', 'events.jsonl');
  assert.is(await transcriptAnswer(hook(gone, { sessionId: 'gone' }), QUICK), undefined);
  assert.is(await transcriptAnswer(hook(`session-state/${SESSION}/events.jsonl`), QUICK), undefined);
  assert.is(await transcriptAnswer(hook(path, { sessionId: 'another-session' }), QUICK), undefined);
  assert.is(await transcriptAnswer(hook(path, { timestamp: undefined }), QUICK), undefined);
  assert.is(await transcriptAnswer(hook(42), QUICK), undefined);
  const other = join(root, 'session-state', SESSION, 'other.jsonl');
  writeFileSync(other, [...turn('the answer'), stop(AT)].join('\n'));
  assert.is(await transcriptAnswer(hook(other), QUICK), undefined);
});

test('a FIFO under the transcript name is not read (it would block the hook path)', async () => {
  const dir = join(root, 'fifo', SESSION);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'events.jsonl');
  execFileSync('mkfifo', [path]);
  assert.is(await transcriptAnswer(hook(path), QUICK), undefined);
});

test('agentStop: run.finished at once without text; its later observations carry the answer, redacted-class', async () => {
  const surface = surfaceFrom(copilot);
  const path = transcript([...turn('MOCK_DONE 4 with sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789'), stop(AT)]);
  const classified = surface.classify({ hook_event_name: 'agentStop', ...hook(path), stopReason: 'end_turn' });
  assert.equal(
    classified.observations.map((o) => [o.type, o.capture, o.data?.['summary']]),
    [['run.finished', undefined, undefined]],
  );
  const [finished] = await classified.later!();
  assert.is(finished?.type, 'run.finished');
  assert.is(finished?.capture, 'redacted');
  assert.is(finished?.data?.['reason'], 'end_turn');
  const summary = String(finished?.data?.['summary']);
  assert.match(summary, /^MOCK_DONE 4 with /);
  assert.not.match(summary, 'abcdefghijklmnopqrstuvwxyz0123456789', 'a secret in the answer is scrubbed');
  assert.is(surface.classify({ hook_event_name: 'postToolUse', ...hook(path) }).later, undefined, 'only agentStop');
});

test.run();
