// D31, D32 end to end on the real Codex 0.171.0 against the loopback mock Responses API, through
// this project's relay and adapter: a `moment` sent while a slow tool runs reaches the request
// that carries that tool's result, in the same turn; a plain `codex` (no app-server lane: the
// roster shows the hook lane only) refuses `steer` unsupported, saying how to get the lane; a
// withdrawn instruction never reaches the model.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RecordedRequest } from '../support/mock-openai.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { bodyHas } from '../support/vendor-e2e.js';

const e2e = e2eSuite('codex', { label: 'codex delivery' });

type Item = { type?: string; role?: string; content?: { text?: string }[]; output?: unknown };
const itemsOf = (r: RecordedRequest): Item[] => (r.body as { input?: Item[] } | undefined)?.input ?? [];

if (e2e.installed) {
  test("moment sent while a slow tool runs reaches the request carrying that tool's result, in the same turn", async () => {
    const { session, run, tool, release } = await e2e.slowRun('c-moment');
    const text = `STEER-CODEX-MOMENT-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.codex.control.instruct', { text, delivery: 'moment' });
    assert.not.ok(e2e.stack.find(session, 'x.codex.instruction.delivered', cmd.id), 'waits while the tool runs');
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await e2e.stack.delivered(session, cmd);
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['moment', 'PostToolUse']);
    const completed = e2e.stack.find(session, 'tool.completed');
    assert.ok(completed && tool.seq! < completed.seq! && completed.seq! < d.seq!, 'after the running tool completed');
    const reqs = e2e.requestsOf('c-moment');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    const items = itemsOf(reqs[1]!);
    const at = items.findIndex((i) => i.role === 'developer' && (i.content ?? []).some((c) => c.text === text));
    const call = items.findIndex((i) => i.type === 'function_call');
    const output = items.findIndex((i) => typeof i.type === 'string' && i.type.endsWith('_call_output'));
    assert.ok(output >= 0 && bodyHas(items[output], 'TOOL_RAN_'), "the next request carries the running tool's result");
    // Codex 0.171.0 files PostToolUse context between the call and its output.
    assert.ok(call >= 0 && at > call, "a developer item after the tool call, in the same turn's next request");
  });

  test('steer to a plain codex session is refused unsupported, saying how to get the lane, while a moment sent meanwhile reaches the same turn', async () => {
    const { session, run, release } = await e2e.slowRun('c-steer');
    // A turn runs, but no native lane reaches a plain `codex` (D31): refused, naming what it takes.
    const text = `STEER-CODEX-STEER-${session.slice(-8)}`;
    const steer = e2e.stack.command(session, 'x.codex.control.instruct', { text, delivery: 'steer' });
    const settled = await e2e.stack.send(steer);
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code, settled.detail] : settled, [
      'unsupported',
      'delivery-unsupported',
      'this session cannot take delivery "steer": it accepts moment, queue; start it with `aep-steer run codex`',
    ]);
    // The roster says why: this session has the hook lane only.
    const table = await e2e.sessions();
    const lines = table.split('\n');
    const head = lines[0] ?? '';
    const row = lines.find((l) => l.startsWith(session)) ?? '';
    const lanes = row.slice(head.indexOf('LANES'), head.indexOf('START')).trim();
    assert.is(lanes, 'hook', `the LANES column of \`aep-steer sessions\`:\n${table}`);
    // D43: nothing can start a plain `codex exec` session from outside.
    const start = row.slice(head.indexOf('START'), head.indexOf('ACCEPTS')).trim();
    assert.is(start, '-', `the START column of \`aep-steer sessions\`:\n${table}`);
    const moment = `MOMENT-CODEX-STEER-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.codex.control.instruct', { text: moment, delivery: 'moment' });
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await e2e.stack.delivered(session, cmd);
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['moment', 'PostToolUse']);
    const stop = await e2e.stack.waitFor('run.finished', () => e2e.stack.find(session, 'run.finished'));
    assert.ok(d.seq! < stop.seq!, 'inside the turn, before it finished');
    const reqs = e2e.requestsOf('c-steer');
    assert.not.ok(bodyHas(reqs[0]!.body, moment), 'not in the request that asked for the tool');
    assert.ok(reqs.length >= 2 && bodyHas(reqs[1]!.body, moment), "in the same turn's next request");
    assert.is(e2e.withText(text).length, 0, 'the refused steer never');
    assert.not.ok(e2e.stack.find(session, 'x.codex.instruction.delivered', steer.id));
  });

  test('a withdrawn instruction never reaches the model: dropped withdrawn, cause-linked to the withdraw', async () => {
    const ws = await e2e.workspace();
    const { session, release, run } = await e2e.startHeld(ws, '[[TURN]] c-withdraw run one command', (r) =>
      e2e.turnOf(r).includes('c-withdraw'),
    );
    const text = `STEER-CODEX-WITHDRAWN-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.codex.control.instruct', { text });
    const w = await e2e.stack.accepted(session, 'x.codex.control.withdraw', { instruction: cmd.id }, 'metadata');
    const dropped = await e2e.stack.waitFor('dropped withdrawn', () =>
      e2e.stack.find(session, 'x.codex.instruction.dropped', w.id),
    );
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    await e2e.stack.waitFor('session.ended', () => e2e.stack.find(session, 'session.ended'));
    assert.ok(
      e2e.stack.find(session, 'tool.completed'),
      'PreToolUse and PostToolUse came and went with the queue empty',
    );
    const reqs = e2e.requestsOf('c-withdraw');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    for (const q of reqs) assert.not.ok(bodyHas(q.body, text), 'no request carries the withdrawn text');
    assert.is(e2e.withText(text).length, 0);
    assert.not.ok(e2e.stack.find(session, 'x.codex.instruction.delivered', cmd.id));
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(e2e.stack.errors, []);
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
