// D30–D33 on the real Claude Code 2.1.332 against the loopback mock Anthropic API: an orchestrator
// runs `aep-steer run claude -p "…"`, which joins the Claude Code adapter's stream-json lane and
// runs the CLI headless with its stream-json on the caller's stdout. The hooks and the lane speak
// of one session (Claude's session_id). While the turn's slow tool runs, a `steer` reaches the
// next model request of that turn on the CLI's receipt, a `queue` the first request of the next
// turn only, a withdrawn one never the model, a cancel stops the turn, a steer with no turn
// running is refused session-idle, and the audit of the adapter's log finds no violation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { streamJsonSocketPath } from '../../src/adapters/claude-code/stream-json/spec.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { processTable } from '../../src/adapters/tool-processes.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import { toolResultCount, type RecordedRequest } from '../support/mock-anthropic.js';
import { bodyHas } from '../support/vendor-e2e.js';

type Line = Record<string, unknown>;
const FOLDED = 'The user sent a new message while you were working:';

const e2e = e2eSuite('claude-code');

/** One `aep-steer run claude -p` process, as an orchestrator runs it: stream-json lines on its stdout. */
interface Run {
  ws: VendorWorkspace;
  gate: string;
  tag: string;
  child: ChildProcess;
  lines: Line[];
  stderr: () => string;
  done: Promise<number | null>;
  session: string;
}

/** The mock: a prompt carrying `[[GATE:path]]` asks for one Bash call that waits for that file. */
function script(): void {
  e2e.mock.setScript((body) => {
    if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { content: [{ type: 'text', text: 'ok' }] };
    const gate = /\[\[GATE:([^\]]+)\]\]/.exec(JSON.stringify(body.messages?.[0] ?? ''))?.[1];
    if (gate === undefined || toolResultCount(body) > 0)
      return { content: [{ type: 'text', text: `Answered after ${toolResultCount(body)} tool result(s).` }] };
    const cmd = `while [ ! -f '${gate}' ]; do sleep 0.1; done; echo TOOL_RAN`;
    return { content: [{ type: 'tool_use', name: 'Bash', input: { command: cmd, description: 'wait for the gate' } }] };
  });
}

/**
 * Spawns `aep-steer run claude` with the prompt after `-p`, or (`onStdin`) written on its stdin,
 * which then ends; resolves once the run's `system/init` is on its stdout.
 */
async function spawnRun(tag: string, onStdin = false): Promise<Run> {
  const ws = await e2e.workspace();
  const gate = join(ws.root, `${tag}.go`);
  const prompt = `${tag}: run the slow command [[GATE:${gate}]]`;
  const [node, ...argv] = e2e.aepRun(
    '-p',
    ...(onStdin ? [] : [prompt]),
    '--model',
    'claude-sonnet-4-5',
    '--dangerously-skip-permissions',
  );
  const child = e2e.track(
    spawn(node!, argv, { cwd: ws.project, env: e2e.runEnv(ws), stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  const lines: Line[] = [];
  let partial = '';
  let stderr = '';
  child.stdout!.on('data', (d: Buffer) => {
    partial += d.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const p of parts) if (p.trim() !== '') lines.push(JSON.parse(p) as Line);
  });
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  if (onStdin) child.stdin!.end(`${prompt}\n`);
  const done = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const run: Run = { ws, gate, tag, child, lines, stderr: () => stderr, done, session: '' };
  const init = await e2e.stack.waitFor(
    `${tag}: the run's system/init`,
    () => lines.find((l) => l.type === 'system' && l.subtype === 'init'),
    60_000,
  );
  run.session = String(init.session_id);
  return run;
}

/** Starts a run whose one turn's Bash call waits for its gate; resolves once that tool call is on stdout. */
async function startRun(tag: string): Promise<Run> {
  const run = await spawnRun(tag);
  const { lines } = run;
  await e2e.stack.waitFor(`${tag}: the slow tool call`, () =>
    lines.find((l) => l.type === 'assistant' && JSON.stringify(l).includes('"tool_use"')),
  );
  await e2e.stack.waitFor(`${tag}: the lane reaches the session`, () =>
    all(run, 'x.claude-code.session.described').find((e) =>
      (e.data?.['lanes'] as string[] | undefined)?.includes('stream-json'),
    ),
  );
  return run;
}

/** Ends the caller's input: the run ends once its turns are over, with the CLI's own exit code. */
async function finish(run: Run, expected = 0): Promise<void> {
  run.child.stdin!.end();
  const code = await run.done;
  assert.is(code, expected, run.stderr());
}

/**
 * The mock's command runs, however the Bash tool quotes it: a process names the gate, other than
 * the run itself (whose prompt names it as `[[GATE:…]]`).
 */
const gateLoopRuns = (run: Run): boolean =>
  (processTable() ?? []).some(
    (p) => p.state !== 'Z' && p.argv.some((a) => a.includes(run.gate) && !a.includes('[[GATE:')),
  );
const all = (run: Run, type: string): AepEvent[] =>
  e2e.stack.events.filter((e) => e.session === run.session && e.type === type);
const of = (run: Run, type: string, cause?: string) => e2e.stack.find(run.session, type, cause);
/** The run's main-thread model requests (side requests such as titles offer no tools). */
const requestsOf = (run: Run): RecordedRequest[] =>
  e2e.requests().filter((r) => r.raw.includes(`${run.tag}:`) && (r.body?.tools ?? []).some((t) => t.name === 'Bash'));

const accepted = (run: Run, type: string, data: Record<string, unknown>): Promise<AepCommand> =>
  e2e.stack.accepted(run.session, type, data);

/** Sends an instruction while the run's tool waits; resolves once the CLI acknowledged its message (`queued`). */
async function whileToolRuns(run: Run, text: string, delivery: 'steer' | 'queue'): Promise<AepCommand> {
  const cmd = await accepted(run, 'x.claude-code.control.instruct', { text, delivery });
  await e2e.stack.waitFor('the CLI took it', () =>
    run.lines.find((l) => l.type === 'command_lifecycle' && l.state === 'queued'),
  );
  return cmd;
}

if (e2e.installed) {
  test.before(() => script());

  test("steer while a slow tool runs: in the same turn's next request on the CLI's receipt; hooks and lane are one session", async () => {
    const run = await startRun('s-steer');
    const sock = streamJsonSocketPath(e2e.stack.stateDir);
    assert.is(statSync(sock).mode & 0o777, 0o600, 'the socket is mode 600');
    assert.is(statSync(join(e2e.stack.stateDir, 'claude-code')).mode & 0o777, 0o700, 'its directory is mode 700');
    assert.ok(of(run, 'session.started'), 'the hooks fired under the stream-json session id');
    const text = `STEER-LANE-${run.session.slice(0, 8)}`;
    const cmd = await whileToolRuns(run, text, 'steer');
    writeFileSync(run.gate, '');
    const d = await e2e.stack.waitFor('delivered', () => of(run, 'x.claude-code.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'stream-json']);
    const uuid = String(d.data?.['ref']);
    assert.ok(
      run.lines.some((l) => l.type === 'user' && l.isReplay === true && l.uuid === uuid),
      "ref: the message uuid the CLI echoed on the run's stdout",
    );
    const end = await e2e.stack.waitFor('the turn finished', () => all(run, 'run.finished')[0]);
    assert.ok(d.seq! < end.seq!, 'delivered before the turn ended');
    const reqs = requestsOf(run);
    assert.is(reqs.length, 2, 'one tool round, no further turn');
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.ok(
      bodyHas(reqs[1]!.body, FOLDED) && bodyHas(reqs[1]!.body, text),
      "the same turn's next request carries it",
    );
    await finish(run);
    assert.is(run.lines.filter((l) => l.type === 'result').length, 1, 'one result: the same turn');
    await e2e.stack.waitFor('the lane no longer reaches it', () =>
      all(run, 'x.claude-code.session.described').find(
        (e) => !((e.data?.['lanes'] as string[] | undefined) ?? []).includes('stream-json'),
      ),
    );
  });

  test("queue while a slow tool runs: none of the running turn's requests, the first request of the next turn", async () => {
    const run = await startRun('s-queue');
    const text = `QUEUE-LANE-${run.session.slice(0, 8)}`;
    const cmd = await whileToolRuns(run, text, 'queue');
    writeFileSync(run.gate, '');
    const d = await e2e.stack.waitFor('delivered', () => of(run, 'x.claude-code.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'stream-json']);
    await finish(run);
    const results = run.lines.filter((l) => l.type === 'result');
    assert.is(results.length, 2, 'a turn of its own after the first');
    const reqs = requestsOf(run);
    assert.is(reqs.length, 3, 'the tool round of turn one, then the next turn');
    assert.not.ok(
      bodyHas(reqs[0]!.body, text) || bodyHas(reqs[1]!.body, text),
      'no request of the running turn carries it',
    );
    assert.not.ok(bodyHas(reqs[1]!.body, FOLDED), 'not folded into the running turn');
    assert.ok(bodyHas(reqs[2]!.body, text), "the next turn's first request carries it");
    const runs = all(run, 'run.started');
    assert.is(runs.length, 2, 'the hooks saw the next turn as a run of its own');
  });

  test('a queue withdrawn before it is read never reaches the model (cancel_async_message)', async () => {
    const run = await startRun('s-withdraw');
    const text = `WITHDRAWN-LANE-${run.session.slice(0, 8)}`;
    const cmd = await whileToolRuns(run, text, 'queue');
    const w = await accepted(run, 'x.claude-code.control.withdraw', { instruction: cmd.id });
    const dropped = await e2e.stack.waitFor('withdrawn', () => of(run, 'x.claude-code.instruction.dropped', w.id));
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    assert.ok(
      run.lines.some((l) => l.type === 'command_lifecycle' && l.state === 'cancelled'),
      'the CLI cancelled the message it held',
    );
    writeFileSync(run.gate, '');
    await finish(run);
    assert.is(run.lines.filter((l) => l.type === 'result').length, 1, 'no turn of its own');
    assert.is(e2e.requests().filter((r) => r.raw.includes(text)).length, 0, 'no request carries it');
    assert.not.ok(of(run, 'x.claude-code.instruction.delivered', cmd.id));
  });

  test('the prompt on stdin: its turn runs under the hooks, its stream-json is on stdout, and the run exits 0', async () => {
    const run = await spawnRun('s-stdin', true);
    writeFileSync(run.gate, '');
    const code = await run.done;
    assert.is(code, 0, run.stderr());
    const result = run.lines.find((l) => l.type === 'result');
    assert.equal([result?.subtype, result?.session_id], ['success', run.session]);
    assert.ok(
      run.lines.some((l) => l.type === 'user' && l.isReplay === true),
      'the prompt was its first user message',
    );
    assert.ok(bodyHas(requestsOf(run)[0]!.body, 's-stdin: run the slow command'));
    await e2e.stack.waitFor('the hooks saw its turn end', () => all(run, 'run.finished')[0]);
  });

  test('cancel {scope: run} takes back what waits, stops the turn through interrupt; then a steer is refused session-idle', async () => {
    const run = await startRun('s-cancel');
    const waiting = `QUEUED-BEFORE-CANCEL-${run.session.slice(0, 8)}`;
    const queued = await whileToolRuns(run, waiting, 'queue');
    const started = all(run, 'run.started').at(-1)!;
    await e2e.stack.waitFor('the Bash command runs', () => (gateLoopRuns(run) ? true : undefined));
    const cancel = await accepted(run, 'control.cancel', { scope: 'run' });
    const cancelled = await e2e.stack.waitFor('run.cancelled', () => of(run, 'run.cancelled', cancel.id));
    assert.is(cancelled.data?.['by'], 'control');
    // AEP-0002 §2.1: the terminal names the run its start named (Claude Code's prompt_id).
    assert.ok(started.run, 'the turn named its run');
    assert.is(cancelled.run, started.run);
    // Observed on 2.1.332: the interrupt ends the running Bash command with the turn; nothing is said left running.
    assert.is(cancelled.data?.['left_running'], undefined);
    await e2e.stack.waitFor('no command waits for the gate any more', () => (gateLoopRuns(run) ? undefined : true));
    const result = await e2e.stack.waitFor('the turn ended', () => run.lines.find((l) => l.type === 'result'));
    const toolResults = run.lines.filter((l) => l.type === 'user').map((l) => JSON.stringify(l));
    assert.not.ok(
      toolResults.some((t) => t.includes('TOOL_RAN')),
      `the tool was stopped before its end: ${toolResults.join('\n')}`,
    );
    assert.is(requestsOf(run).length, 1, 'no request after the stopped tool');
    // What waited for the next turn was taken back before the interrupt: it never runs.
    const dropped = await e2e.stack.waitFor('the queued one dropped', () =>
      of(run, 'x.claude-code.instruction.dropped', queued.id),
    );
    assert.is(dropped.data?.['reason'], 'turn-ended');
    await e2e.stack.waitFor(
      'the hooks closed the turn',
      () => all(run, 'run.finished')[0] ?? all(run, 'run.cancelled')[0],
    );
    const late = e2e.stack.command(run.session, 'x.claude-code.control.instruct', {
      text: 'too late',
      delivery: 'steer',
    });
    const settled = await e2e.stack.send(late);
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code] : settled, [
      'refused',
      'session-idle',
    ]);
    assert.equal([result.session_id, result.terminal_reason], [run.session, 'aborted_tools']);
    // Observed: the CLI exits 1 when its last turn ended in error (`is_error`, the interrupt).
    await finish(run, 1);
    assert.is(e2e.requests().filter((r) => r.raw.includes('too late') || r.raw.includes(waiting)).length, 0);
    assert.is(run.lines.filter((l) => l.type === 'result').length, 1, 'no turn ran after the cancel');
  });

  test('start on a run idle between turns: a turn of its own with the text as its prompt, delivered started with that turn as ref (D43)', async () => {
    const run = await startRun('s-start');
    writeFileSync(run.gate, '');
    await e2e.stack.waitFor('the first turn finished', () => all(run, 'run.finished')[0]);
    assert.ok(
      all(run, 'x.claude-code.session.described').some((e) => e.data?.['startable'] === true),
      'described startable while the lane reaches it',
    );
    const before = requestsOf(run).length;
    const text = `s-start: START-LANE-${run.session.slice(0, 8)}`;
    const cmd = await accepted(run, 'x.claude-code.control.instruct', { text, idle: 'start' });
    const d = await e2e.stack.waitFor('delivered', () => of(run, 'x.claude-code.instruction.delivered', cmd.id));
    assert.equal(
      [d.data?.['started'], d.data?.['lane'], d.data?.['ref'], d.data?.['delivery']],
      [true, 'stream-json', `${run.session}:2`, undefined],
    );
    await e2e.stack.waitFor('the turn it started finished', () => all(run, 'run.finished')[1]);
    const turn = requestsOf(run).slice(before);
    assert.ok(turn.length > 0, 'the model was asked');
    const users = (turn[0]!.body?.messages ?? []).filter((m) => m.role === 'user');
    assert.ok(bodyHas(users.at(-1), text), "the new turn's first request ends with the text as the user's message");
    assert.not.ok(bodyHas(turn[0]!.body, FOLDED), 'a prompt of its own, not folded into a running turn');
    await finish(run);
    assert.is(run.lines.filter((l) => l.type === 'result').length, 2, 'two turns: the first, and the one it started');
  });

  test('the audit of the adapter log finds no violation and tells the stream-json lane from the hook lane', async () => {
    const r = await auditFiles([e2e.stack.logPath]);
    assert.equal(r.violations, [], renderText(r));
    const delivered = r.instructions.filter((i) => i.status === 'delivered');
    const steer = delivered.find((i) => i.delivery === 'steer');
    const queue = delivered.find((i) => i.delivery === 'queue');
    assert.equal([steer?.delivered?.lane, queue?.delivered?.lane], ['stream-json', 'stream-json']);
    const text = renderText(r);
    const line = (id: string) => text.split('\n').find((l) => l.includes(id)) ?? '';
    assert.match(line(steer!.id), 'through the stream-json lane');
    const dropped = r.instructions.filter((i) => i.status === 'dropped').map((i) => i.dropped?.reason);
    assert.ok(dropped.includes('withdrawn') && dropped.includes('turn-ended'), JSON.stringify(dropped));
  });
}

test.run();
