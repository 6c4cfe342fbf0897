// What Claude Code 2.1.332 does with a stream-json user message written while a turn runs (the
// candidate native lane of D30), on the real CLI against a mock Anthropic API on loopback. The
// turn's one tool call waits for a file the test creates only once the CLI has acknowledged the
// second message, so every message below is written while the tool runs. Observed and pinned:
// - no priority, or "next": folded into the running turn: the next model request of that turn
//   carries it inside the tool's result, as a system reminder; one `result` for both messages;
// - "later": not in the running turn; it runs as a turn of its own after the first ends;
// - "now": the running tool is stopped ("aborted before completion"), the first message's turn
//   ends there (its command `cancelled`, a `result` with stop_reason tool_use) and the message
//   opens a new turn whose first request carries the failed tool result and the message as text;
// - `command_lifecycle {command_uuid, state}` acknowledges each message by its `uuid` (queued,
//   started, completed or cancelled); `--replay-user-messages` echoes it (`isReplay`) when read;
//   the same uuid written twice is taken once;
// - `cancel_async_message {message_uuid}` takes back a queued message (`{cancelled: true}`), and
//   answers `{cancelled: false}` once it was read;
// - `interrupt` stops the tool and the turn and answers `{still_queued: [uuid]}`: what still
//   waits is not dropped, it runs as the next turn.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startClaude, type ClaudeProcess } from '../support/claude-cli.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { toolResultCount, type RecordedRequest } from '../support/mock-anthropic.js';
import { strings } from '../support/vendor-e2e.js';

// What the CLI does on its own: its workspaces get no hooks, and the suite's adapter stays idle.
const e2e = e2eSuite('claude-code', { label: 'claude-code stream-json' });

type Line = Record<string, unknown>;

const FIRST = '00000000-0000-4000-8000-000000000001';
const SECOND = '00000000-0000-4000-8000-000000000002';
const THIRD = '00000000-0000-4000-8000-000000000003';
const FOLDED = 'The user sent a new message while you were working:';

const userLine = (uuid: string, text: string, priority?: string): Line => ({
  type: 'user',
  message: { role: 'user', content: text },
  uuid,
  parent_tool_use_id: null,
  session_id: '',
  ...(priority === undefined ? {} : { priority }),
});
const control = (id: string, request: Line): Line => ({ type: 'control_request', request_id: id, request });
const lifecycle = (uuid: string) => (l: Line) => l.type === 'command_lifecycle' && l.command_uuid === uuid;
const statesOf = (lines: Line[], uuid: string) => lines.filter(lifecycle(uuid)).map((l) => l.state);
const results = (lines: Line[]) => lines.filter((l) => l.type === 'result');
const responseTo = (id: string) => (l: Line) =>
  l.type === 'control_response' && (l.response as Line | undefined)?.request_id === id;
const answerOf = (l: Line) => (l.response as { response?: unknown }).response;

/** The main thread's model requests (side requests such as titles carry no tools). */
const mainRequests = (): RecordedRequest[] =>
  e2e.requests().filter((r) => (r.body?.tools ?? []).some((t) => t.name === 'Bash'));
const count = (r: RecordedRequest, text: string) => r.raw.split(text).length - 1;

/** The tool_result blocks of a request's last message, and its text blocks. */
function lastUserBlocks(r: RecordedRequest): { results: Line[]; texts: string[] } {
  const last = r.body?.messages?.at(-1);
  const blocks = Array.isArray(last?.content) ? (last.content as Line[]) : [];
  return {
    results: blocks.filter((b) => b.type === 'tool_result'),
    texts: blocks.filter((b) => b.type === 'text').map((b) => String(b.text)),
  };
}

interface Turn {
  cli: ClaudeProcess;
  gate: string;
}

/**
 * Starts the CLI in stream-json mode with a first message whose one Bash call waits for `gate`;
 * resolves once that tool call is on stdout (the tool is starting or running).
 */
async function startSlowTurn(): Promise<Turn> {
  const ws = await e2e.workspace({ hooks: false });
  const gate = join(ws.root, 'tool.go');
  e2e.mock.setScript((body) => {
    if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { content: [{ type: 'text', text: 'ok' }] };
    const n = toolResultCount(body);
    if (n > 0) return { content: [{ type: 'text', text: `Answered after ${n} tool result(s).` }] };
    const command = `while [ ! -f '${gate}' ]; do sleep 0.1; done; echo TOOL_RAN`;
    return { content: [{ type: 'tool_use', name: 'Bash', input: { command, description: 'wait for the gate' } }] };
  });
  const cli = e2e.track(startClaude({ ws, mockUrl: e2e.mock.url, extraArgs: ['--replay-user-messages'] }));
  cli.write(userLine(FIRST, 'FIRST: run the slow command.'));
  await cli.waitForLine((l) => l.type === 'assistant' && JSON.stringify(l).includes('"tool_use"'));
  return { cli, gate };
}

/** Writes a second message while the tool runs, waits for its `queued` acknowledgement, then lets the tool end. */
async function secondWhileToolRuns(t: Turn, text: string, priority?: string): Promise<void> {
  t.cli.write(userLine(SECOND, text, priority));
  await t.cli.waitForLine((l) => lifecycle(SECOND)(l) && l.state === 'queued');
}

async function finish(t: Turn, resultCount: number): Promise<Line[]> {
  await t.cli.waitForLine(() => results(t.cli.lines).length >= resultCount);
  t.cli.end();
  const run = await t.cli.done;
  assert.is(run.code, 0, run.stderr);
  return run.lines;
}

if (e2e.installed) {
  test.before.each(() => {
    e2e.mock.requests.length = 0;
  });

  for (const priority of [undefined, 'next'] as const) {
    test(`a message with ${priority === undefined ? 'no priority' : 'priority "next"'} is folded into the running turn's next request`, async () => {
      const t = await startSlowTurn();
      const text = `SECOND-${priority ?? 'none'}-FOLDED`;
      await secondWhileToolRuns(t, text, priority);
      // The same uuid again is no second message.
      t.cli.write(userLine(SECOND, text, priority));
      writeFileSync(t.gate, '');
      const lines = await finish(t, 1);
      const reqs = mainRequests();
      assert.is(reqs.length, 2, 'one tool round, no further turn');
      assert.is(count(reqs[0]!, text), 0, 'not in the request that asked for the tool');
      const { results: tr } = lastUserBlocks(reqs[1]!);
      assert.is(tr.length, 1, "the next request answers the running turn's tool call");
      const content = strings(tr[0]!.content).join('');
      assert.ok(content.includes('TOOL_RAN'), 'the tool ran to its end');
      assert.ok(content.includes(`${FOLDED}\n${text}`), `folded into the tool result: ${content.slice(0, 400)}`);
      assert.is(count(reqs[1]!, text), 1, 'read once, though written twice');
      assert.is(results(lines).length, 1, 'one turn answered both messages');
      assert.equal(statesOf(lines, SECOND), ['queued', 'started', 'completed']);
      assert.equal(statesOf(lines, FIRST), ['queued', 'started', 'completed']);
      const toolResult = lines.findIndex((l) => l.type === 'user' && JSON.stringify(l).includes('"tool_result"'));
      const echo = lines.findIndex((l) => l.type === 'user' && l.uuid === SECOND && l.isReplay === true);
      assert.ok(toolResult >= 0 && echo > toolResult, 'echoed when read, after the tool result');
    });
  }

  test('a message with priority "later" waits for the running turn to end and runs as a turn of its own', async () => {
    const t = await startSlowTurn();
    const text = 'SECOND-later-NEXT-TURN';
    await secondWhileToolRuns(t, text, 'later');
    writeFileSync(t.gate, '');
    const lines = await finish(t, 2);
    const reqs = mainRequests();
    assert.is(reqs.length, 3, 'the tool round, then a turn of its own');
    assert.is(count(reqs[0]!, text) + count(reqs[1]!, text), 0, 'no request of the running turn carries it');
    assert.not.ok(reqs[1]!.raw.includes(FOLDED));
    assert.ok(lastUserBlocks(reqs[2]!).texts.includes(text), 'the next turn opens with it as a user message');
    assert.equal(statesOf(lines, FIRST), ['queued', 'started', 'completed']);
    assert.equal(statesOf(lines, SECOND), ['queued', 'started', 'completed']);
  });

  test('a message with priority "now" stops the running tool, ends the turn and opens a new one', async () => {
    const t = await startSlowTurn();
    const text = 'SECOND-now-NEW-TURN';
    // The gate is never opened: only the CLI itself can end this tool.
    await secondWhileToolRuns(t, text, 'now');
    const lines = await finish(t, 2);
    const reqs = mainRequests();
    assert.is(reqs.length, 2);
    const { results: tr, texts } = lastUserBlocks(reqs[1]!);
    assert.is(tr[0]?.is_error, true);
    assert.ok(strings(tr[0]?.content).join('').includes('aborted before completion'), 'the tool was stopped');
    assert.not.ok(reqs[1]!.raw.includes(FOLDED), 'not folded as a mid-turn reminder');
    assert.ok(texts.includes(text), 'beside the tool result, as a user message');
    const [first, second] = results(lines);
    assert.is(first!.stop_reason, 'tool_use', "the first message's turn ended before the model read the tool result");
    assert.is(first!.terminal_reason, 'aborted_tools');
    assert.is(second!.stop_reason, 'end_turn');
    assert.equal(statesOf(lines, FIRST), ['queued', 'started', 'cancelled']);
    assert.equal(statesOf(lines, SECOND), ['queued', 'started', 'completed']);
  });

  test('cancel_async_message takes back a queued message, and answers cancelled false once it was read', async () => {
    const t = await startSlowTurn();
    const text = 'SECOND-CANCELLED';
    await secondWhileToolRuns(t, text);
    t.cli.write(control('cancel-1', { subtype: 'cancel_async_message', message_uuid: SECOND }));
    const cancelled = await t.cli.waitForLine(responseTo('cancel-1'));
    assert.equal(answerOf(cancelled), { cancelled: true, message_uuid: SECOND });
    const kept = 'THIRD-KEPT';
    t.cli.write(userLine(THIRD, kept));
    await t.cli.waitForLine((l) => lifecycle(THIRD)(l) && l.state === 'queued');
    writeFileSync(t.gate, '');
    await t.cli.waitForLine((l) => lifecycle(THIRD)(l) && l.state === 'completed');
    t.cli.write(control('cancel-2', { subtype: 'cancel_async_message', message_uuid: THIRD }));
    const late = await t.cli.waitForLine(responseTo('cancel-2'));
    assert.equal(answerOf(late), { cancelled: false });
    const lines = await finish(t, 1);
    const reqs = mainRequests();
    for (const r of reqs) assert.is(count(r, text), 0, 'no request carries the cancelled message');
    assert.is(count(reqs.at(-1)!, kept), 1, 'the message sent after it was folded as usual');
    assert.equal(statesOf(lines, SECOND), ['queued', 'cancelled']);
    assert.not.ok(
      lines.some((l) => l.type === 'user' && l.uuid === SECOND),
      'a cancelled message is never echoed',
    );
  });

  test('interrupt stops the tool and the turn, answers what is still queued, and that runs next', async () => {
    const t = await startSlowTurn();
    const text = 'SECOND-AFTER-INTERRUPT';
    await secondWhileToolRuns(t, text);
    t.cli.write(control('interrupt-1', { subtype: 'interrupt' }));
    const answer = await t.cli.waitForLine(responseTo('interrupt-1'));
    assert.equal(answerOf(answer), { still_queued: [SECOND] });
    const lines = await finish(t, 2);
    const reqs = mainRequests();
    assert.is(reqs.length, 2);
    const { results: tr, texts } = lastUserBlocks(reqs[1]!);
    assert.is(tr[0]?.is_error, true, 'the tool was stopped');
    assert.not.ok(strings(tr[0]?.content).join('').includes('TOOL_RAN'));
    assert.ok(texts.includes(text), 'the still-queued message opens the next turn');
    assert.ok(texts.some((x) => x.includes('[Request interrupted by user')));
    assert.is(results(lines)[0]!.stop_reason, 'tool_use');
    assert.equal(statesOf(lines, FIRST), ['queued', 'started', 'cancelled']);
    assert.equal(statesOf(lines, SECOND), ['queued', 'started', 'completed']);
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
