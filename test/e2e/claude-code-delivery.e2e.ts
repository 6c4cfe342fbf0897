// D31, D32 end to end on the real Claude Code 2.1.332 against a mock Anthropic API on loopback,
// through a real relay (tokens file) and adapter: an instruction sent with delivery `queue` while
// a turn runs reaches the first model request of the next turn and none of the running one; one
// sent with delivery `steer` while a slow tool runs reaches the next request of the same turn (at
// PostToolUse), and with no turn running is refused `session-idle`; a withdrawn instruction never
// reaches the model.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AepCommand } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { startClaude } from '../support/claude-cli.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import { bashThenText } from '../support/mock-anthropic.js';
import { bodyHas } from '../support/vendor-e2e.js';

const INSTRUCT = 'x.claude-code.control.instruct';
const WITHDRAW = 'x.claude-code.control.withdraw';
const e2e = e2eSuite('claude-code', {
  access: { commands: [INSTRUCT, WITHDRAW] },
  flags: { attentionTimeoutMs: '40000' },
});

const find = (session: string, type: string, cause?: string) => e2e.stack.find(session, type, cause);
/** The CLI in stream-json input mode (one user turn per line) in the workspace; ended with the suite. */
const startCli = (ws: VendorWorkspace) => e2e.track(startClaude({ ws, mockUrl: e2e.mock.url }));

if (e2e.installed) {
  test('queue sent mid-turn reaches the first request of the next turn and none of the current one', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText(['echo hi'], 'Turn answered.'));
    const first = e2e.mock.hold((r) => r.raw.includes(ws.project));
    const cli = startCli(ws);
    let cmd: AepCommand | undefined;
    let text = '';
    try {
      cli.sendUser('Say hi with bash.');
      const held = await first.arrived;
      const session = e2e.sessionOf(held)!;
      await e2e.stack.waitFor('session.started', () => find(session, 'session.started'));
      // Sent while the turn's first model request is in flight: PreToolUse, PostToolUse and Stop follow.
      text = `Next turn, mention STEER-QUEUE-${session.slice(0, 8)}.`;
      cmd = await e2e.stack.accepted(session, INSTRUCT, { text, delivery: 'queue' });
      first.release();
      const one = await cli.waitForLine((l) => l.type === 'result');
      await e2e.stack.waitFor('run.finished', () => find(session, 'run.finished'));
      assert.not.ok(
        find(session, 'x.claude-code.instruction.delivered', cmd.id),
        'not delivered inside the running turn',
      );
      cli.sendUser('Second question.');
      await cli.waitForLine((l) => l.type === 'result' && l !== one);
    } finally {
      cli.end();
    }
    const r = await cli.done;
    assert.is(r.code, 0, r.stderr);
    const session = cmd!.session;
    const reqs = e2e.requestsIn(session);
    assert.ok(reqs.length >= 3, `two requests in turn one, one in turn two (${reqs.length})`);
    const turnTwo = reqs.findIndex((q) => bodyHas(q.body, 'Second question.'));
    assert.ok(turnTwo >= 2, 'the second turn comes after the tool round of the first');
    for (const q of reqs.slice(0, turnTwo))
      assert.not.ok(bodyHas(q.body, text), 'no request of the running turn carries it');
    assert.ok(
      bodyHas(reqs[turnTwo]?.body, `UserPromptSubmit hook additional context: ${text}`),
      "the next turn's first request carries it",
    );
    const d = await e2e.stack.delivered(session, cmd!);
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['queue', 'UserPromptSubmit']);
  });

  test('steer sent while a slow tool runs reaches the same turn at PostToolUse; with no turn running it is refused session-idle', async () => {
    const ws = await e2e.workspace();
    const gate = join(ws.root, 'steer.go');
    e2e.mock.setScript(bashThenText([`while [ ! -f '${gate}' ]; do sleep 0.1; done; echo TOOL_RAN`], 'Turn answered.'));
    const first = e2e.mock.hold((r) => r.raw.includes(ws.project));
    const cli = startCli(ws);
    let text = '';
    let cmd: AepCommand | undefined;
    try {
      cli.sendUser('Run the slow command.');
      const session = e2e.sessionOf(await first.arrived)!;
      first.release();
      // PreToolUse has been answered: the tool waits for the gate, and the next moment is PostToolUse.
      await e2e.stack.waitFor('the slow tool call', () => find(session, 'tool.requested'));
      text = `Mid-turn, mention STEER-STEER-${session.slice(0, 8)}.`;
      cmd = await e2e.stack.accepted(session, INSTRUCT, { text, delivery: 'steer' });
      writeFileSync(gate, '');
      await cli.waitForLine((l) => l.type === 'result');
      const d = await e2e.stack.waitFor('delivered', () =>
        find(session, 'x.claude-code.instruction.delivered', cmd!.id),
      );
      assert.equal([d.data?.['delivery'], d.data?.['moment']], ['steer', 'PostToolUse']);
      const finished = await e2e.stack.waitFor('run.finished', () => find(session, 'run.finished'));
      const completed = find(session, 'tool.completed');
      assert.ok(completed && d.seq! < finished.seq!, 'inside the turn, before it finished');
      const reqs = e2e.requestsIn(session);
      assert.is(reqs.length, 2, 'one tool round: the steer started no turn of its own');
      assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
      assert.ok(bodyHas(reqs[1]?.body, 'TOOL_RAN'), "the next request carries the running tool's result");
      assert.ok(
        bodyHas(reqs[1]?.body, `PostToolUse:Bash hook additional context: ${text}`),
        "the same turn's next request carries it",
      );
      // The turn is over and the session still open: a steer now would start a turn.
      const data = { text: `${text}-LATE`, delivery: 'steer' };
      const late = await e2e.stack.send(e2e.stack.command(session, cmd.type, data));
      const outcome = late.outcome === 'rejected' && [late.reason, late.code, late.ack['code']];
      assert.equal(outcome, ['refused', 'session-idle', 'session-idle'], JSON.stringify(late));
      assert.not.ok(find(session, 'session.ended'), 'refused as idle, not as ended');
    } finally {
      cli.end();
    }
    const r = await cli.done;
    assert.is(r.code, 0, r.stderr);
    assert.is(e2e.withText(`${text}-LATE`).length, 0, 'the refused steer reached nothing');
  });

  test('a withdrawn instruction never reaches the model; the audit counts the withdrawal as its terminal', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText(['echo hi']));
    const { session, release, run } = await e2e.startHeld(ws, 'Say hi with bash.', (r) => r.raw.includes(ws.project));
    const text = `Never read STEER-WITHDRAWN-${session.slice(0, 8)}.`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text });
    const w = await e2e.stack.accepted(session, WITHDRAW, { instruction: cmd.id }, 'metadata');
    const dropped = await e2e.stack.waitFor('withdrawn', () =>
      find(session, 'x.claude-code.instruction.dropped', w.id),
    );
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    release();
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    const reqs = e2e.requestsIn(session);
    assert.ok(reqs.length >= 2, 'the tool round made a second request, after PreToolUse and PostToolUse');
    for (const q of reqs) assert.not.ok(bodyHas(q.body, text), 'no request carries the withdrawn text');
    await e2e.stack.waitFor('session.ended', () => find(session, 'session.ended'));
    assert.not.ok(find(session, 'x.claude-code.instruction.delivered', cmd.id));
    const audit = await auditFiles([e2e.stack.logPath]);
    const rec = audit.instructions.find((i) => i.id === cmd.id)!;
    assert.equal([rec.status, rec.dropped?.reason], ['dropped', 'withdrawn']);
    assert.equal(
      audit.violations.filter((v) => v.message.includes(cmd.id)),
      [],
    );
  });
}

test.run();
