// D30–D33 on the real Claude Code 2.1.332 against the loopback mock Anthropic API: an orchestrator
// runs `aep-steer run claude -p "…"`, which joins the Claude Code adapter's stream-json lane and
// runs the CLI headless with its stream-json on the caller's stdout. The hooks and the lane speak
// of one session (Claude's session_id). While the turn's slow tool runs, a `steer` reaches the
// next model request of that turn on the CLI's receipt, a `queue` (kept by the adapter while the
// turn runs, D44) the first request of the next turn only, a withdrawn one never the model, a
// cancel takes back an unread steer and stops the turn, a steer with no turn running is refused
// session-idle, and the audit of the adapter's log finds no violation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { streamJsonSocketPath } from '../../src/adapters/claude-code/stream-json/spec.js';
import { uuidFor } from '../../src/adapters/claude-code/stream-json/stream.js';
import type { AepCommand } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { FOLDED, streamRuns, type StreamRun as Run } from '../support/claude-stream-runs.js';
import { bodyHas } from '../support/vendor-e2e.js';

const e2e = e2eSuite('claude-code');
const { script, all, of, requestsOf, accepted, spawnRun, startRun, finish, gateLoopRuns } = streamRuns(e2e);

/** Sends a steer while the run's tool waits; resolves once the CLI acknowledged its message (`queued`). */
async function whileToolRuns(run: Run, text: string): Promise<AepCommand> {
  const cmd = await accepted(run, 'x.claude-code.control.instruct', { text, delivery: 'steer' });
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
    const cmd = await whileToolRuns(run, text);
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
    const cmd = await accepted(run, 'x.claude-code.control.instruct', { text, delivery: 'queue' });
    assert.not.ok(
      run.lines.some((l) => l.command_uuid === uuidFor(cmd.id)),
      'the adapter keeps it while the turn runs (D44)',
    );
    writeFileSync(run.gate, '');
    const d = await e2e.stack.waitFor('delivered', () => of(run, 'x.claude-code.instruction.delivered', cmd.id));
    // Handed over at the turn's end as the next turn's start.
    assert.equal([d.data?.['started'], d.data?.['lane']], [true, 'stream-json']);
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

  test('a queue withdrawn while it waits with the adapter never reaches the model', async () => {
    const run = await startRun('s-withdraw');
    const text = `WITHDRAWN-LANE-${run.session.slice(0, 8)}`;
    const cmd = await accepted(run, 'x.claude-code.control.instruct', { text, delivery: 'queue' });
    const w = await accepted(run, 'x.claude-code.control.withdraw', { instruction: cmd.id });
    const dropped = await e2e.stack.waitFor('withdrawn', () => of(run, 'x.claude-code.instruction.dropped', w.id));
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
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
    const waiting = `UNREAD-BEFORE-CANCEL-${run.session.slice(0, 8)}`;
    const queued = await whileToolRuns(run, waiting);
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
    // The steer not read yet was taken back before the interrupt: it never runs.
    const dropped = await e2e.stack.waitFor('the unread steer dropped', () =>
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
