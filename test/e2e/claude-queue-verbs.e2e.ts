// D44 end to end on the real Claude Code 2.1.332 (hook lane) against a mock Anthropic API, through a
// real relay and adapter: three instructions queued during a turn, the second edited in place, the
// third moved to the front, and the queue paused: none of the turn's moments carries anything.
// Resumed, the next turn's first request carries all three in the new order with the edited text,
// and each delivery names its text version. A queued instruction promoted while a slow tool runs
// lands in the same turn's next request. The audit finds nothing wrong.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { startClaude } from '../support/claude-cli.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import { bashThenText } from '../support/mock-anthropic.js';
import { bodyHas } from '../support/vendor-e2e.js';

const V = 'x.claude-code';
const INSTRUCT = `${V}.control.instruct`;
const [EDIT, MOVE, PROMOTE, HOLD] = ['edit', 'move', 'promote', 'hold'].map((v) => `${V}.control.${v}`) as [
  string,
  string,
  string,
  string,
];
const e2e = e2eSuite('claude-code', {
  access: { commands: [INSTRUCT, EDIT, MOVE, PROMOTE, HOLD] },
  flags: { attentionTimeoutMs: '40000' },
});

const find = (session: string, type: string, cause?: string) => e2e.stack.find(session, type, cause);
const startCli = (ws: VendorWorkspace) => e2e.track(startClaude({ ws, mockUrl: e2e.mock.url }));
/** Sends a queue verb and waits for the adapter's event that settles it. */
async function settled(session: string, type: string, data: Record<string, unknown>, change: string) {
  const cmd = await e2e.stack.accepted(session, type, data, type === EDIT ? 'redacted' : 'metadata');
  return e2e.stack.waitFor(change, () => find(session, `${V}.${change}`, cmd.id));
}

if (e2e.installed) {
  test('queue three, edit the second, move the third to the front, pause: nothing at the turn; resumed, the next turn carries them in the new order', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText(['echo hi'], 'Turn answered.'));
    const first = e2e.mock.hold((r) => r.raw.includes(ws.project));
    const cli = startCli(ws);
    const tag = `Q${Date.now().toString(36)}`;
    const texts = ['ONE', 'TWO', 'THREE'].map((t) => `Mention ${tag}-${t}.`);
    const edited = `Mention ${tag}-TWO-EDITED.`;
    let session = '';
    const ids: string[] = [];
    try {
      cli.sendUser('Say hi with bash.');
      session = e2e.sessionOf(await first.arrived)!;
      await e2e.stack.waitFor('session.started', () => find(session, 'session.started'));
      // Default delivery: each would ride the turn's next moment (PreToolUse) were the queue not paused.
      for (const text of texts) ids.push((await e2e.stack.accepted(session, INSTRUCT, { text })).id);
      const [one, two, three] = ids as [string, string, string];
      const e = await settled(session, EDIT, { instruction: two, text: edited }, 'instruction.edited');
      assert.is(e.data?.['version'], 2);
      const m = await settled(session, MOVE, { instruction: three, to: 'front' }, 'instruction.moved');
      assert.is(m.data?.['position'], 1);
      await settled(session, HOLD, { paused: true }, 'queue.held');
      first.release();
      const one1 = await cli.waitForLine((l) => l.type === 'result');
      await e2e.stack.waitFor('run.finished', () => find(session, 'run.finished'));
      for (const id of ids) assert.not.ok(find(session, `${V}.instruction.delivered`, id), 'nothing while paused');
      for (const q of e2e.requestsIn(session))
        for (const t of [...texts, edited]) assert.not.ok(bodyHas(q.body, t), 'no request of the paused turn');

      await settled(session, HOLD, { paused: false }, 'queue.held');
      cli.sendUser('Second question.');
      await cli.waitForLine((l) => l.type === 'result' && l !== one1);
      const d2 = await e2e.stack.waitFor('delivered', () => find(session, `${V}.instruction.delivered`, two));
      assert.is(d2.data?.['version'], 2, 'the delivery names the edited version');
      const d1 = find(session, `${V}.instruction.delivered`, one);
      const d3 = find(session, `${V}.instruction.delivered`, three);
      assert.ok(d1 && d3);
      assert.equal(
        [d3, d1, d2].map((d) => d.data?.['moment']),
        ['UserPromptSubmit', 'UserPromptSubmit', 'UserPromptSubmit'],
      );
    } finally {
      cli.end();
    }
    const r = await cli.done;
    assert.is(r.code, 0, r.stderr);
    const reqs = e2e.requestsIn(session);
    const turnTwo = reqs.findIndex((q) => bodyHas(q.body, 'Second question.'));
    assert.ok(turnTwo >= 2, 'the second turn comes after the first one');
    assert.ok(
      bodyHas(reqs[turnTwo]?.body, `UserPromptSubmit hook additional context: ${texts[2]}\n\n${texts[0]}\n\n${edited}`),
      "the next turn's first request carries them in the new order, with the edited text",
    );
    assert.not.ok(bodyHas(reqs[turnTwo]?.body, texts[1]!), 'the replaced text is not sent');
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(
      audit.violations.filter((v) => ids.some((id) => v.message.includes(id))),
      [],
    );
  });

  test('a queued instruction promoted while a slow tool runs lands in the same turn at PostToolUse', async () => {
    const ws = await e2e.workspace();
    const gate = join(ws.root, 'promote.go');
    e2e.mock.setScript(bashThenText([`while [ ! -f '${gate}' ]; do sleep 0.1; done; echo TOOL_RAN`], 'Turn answered.'));
    const first = e2e.mock.hold((r) => r.raw.includes(ws.project));
    const cli = startCli(ws);
    let session = '';
    let text = '';
    try {
      cli.sendUser('Run the slow command.');
      session = e2e.sessionOf(await first.arrived)!;
      first.release();
      await e2e.stack.waitFor('the slow tool call', () => find(session, 'tool.requested'));
      text = `Promoted, mention PROMOTE-${session.slice(0, 8)}.`;
      const cmd = await e2e.stack.accepted(session, INSTRUCT, { text, delivery: 'queue' });
      const p = await settled(session, PROMOTE, { instruction: cmd.id }, 'instruction.promoted');
      assert.is(p.subject, cmd.id);
      writeFileSync(gate, '');
      await cli.waitForLine((l) => l.type === 'result');
      const d = await e2e.stack.delivered(session, cmd);
      assert.equal([d.data?.['delivery'], d.data?.['moment']], ['steer', 'PostToolUse']);
    } finally {
      cli.end();
    }
    const r = await cli.done;
    assert.is(r.code, 0, r.stderr);
    const reqs = e2e.requestsIn(session);
    assert.is(reqs.length, 2, 'one tool round: the promoted instruction started no turn of its own');
    assert.not.ok(bodyHas(reqs[0]!.body, text));
    assert.ok(bodyHas(reqs[1]?.body, `PostToolUse:Bash hook additional context: ${text}`), 'the same turn');
  });
}

test.run();
