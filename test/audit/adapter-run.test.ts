// The audit over logs a real adapter wrote: the adapter's own log and a relay export (the events
// a consumer received), alone and together.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { runInstruct, INSTRUCT_EXIT } from '../../src/cli/instruct-command.js';
import { sink, startTestStack } from '../cli/support.js';

test('logs from a real adapter run pass, and every instruction has its lifecycle', async () => {
  const stack = await startTestStack();
  try {
    const flags = {
      relay: stack.relayUrl,
      token: stack.token,
      sender: 'carol',
      wait: true,
      timeout: '20000',
      ackWindow: '10000',
    };
    const s = await stack.openSession();
    // 1: delivered at PreToolUse.
    const accepted1 = stack.waitFor((e) => e.session === s.session && e.type === 'control.accepted');
    const first = runInstruct(
      'prefer small commits',
      { ...flags, session: s.session },
      { out: sink().stream, err: sink().stream },
    );
    await accepted1;
    await stack.postHook(s.toolCall[0]!);
    assert.is(await first, INSTRUCT_EXIT.delivered);
    // 2: rejected (D2).
    assert.is(
      await runInstruct(' ', { ...flags, session: s.session }, { out: sink().stream, err: sink().stream }),
      INSTRUCT_EXIT.rejected,
    );
    // 3: still queued at SessionEnd, so dropped (D10).
    assert.is(
      await runInstruct(
        'one more thing',
        { ...flags, session: s.session, wait: false },
        { out: sink().stream, err: sink().stream },
      ),
      INSTRUCT_EXIT.accepted,
    );
    await stack.postHook(s.closing[1]!);
    await stack.waitFor((e) => e.session === s.session && e.type === 'session.ended');

    const adapterLog = stack.logPath;
    assert.ok(readFileSync(adapterLog, 'utf8').length > 0);
    const exportPath = join(stack.dir, 'relay-export.jsonl');
    writeFileSync(
      exportPath,
      `${stack.seen
        .filter((e) => e.session === s.session)
        .map((e) => JSON.stringify(e))
        .join('\n')}\n`,
    );

    for (const files of [[adapterLog], [exportPath], [adapterLog, exportPath]]) {
      const r = await auditFiles(files);
      assert.equal(r.violations, [], files.join(' + '));
      const mine = r.instructions.filter((i) => i.session === s.session);
      assert.equal(
        mine.map((i) => i.status),
        ['delivered', 'rejected', 'dropped'],
        files.join(' + '),
      );
      assert.is(mine[0]!.sender, 'carol');
      assert.ok(typeof mine[0]!.delivered!.queuedMs === 'number');
      assert.is(mine[1]!.rejected!.detail, 'text is empty');
      assert.is(mine[2]!.dropped!.reason, 'session-ended');
      assert.is(r.sessions.find((v) => v.session === s.session)!.state, 'ended');
    }

    // Cut the dropped event out of the adapter log: the stream checks miss a terminal, and the
    // session machine, rebuilt from the log's inputs, disagrees with what the events say.
    const lines = readFileSync(adapterLog, 'utf8').split('\n');
    const cut = join(stack.dir, 'cut.jsonl');
    writeFileSync(cut, lines.filter((l) => !l.includes('"x.claude-code.instruction.dropped"')).join('\n'));
    const r = await auditFiles([cut]);
    assert.equal(r.violations.map((v) => v.rule).sort(), ['machine-mismatch', 'terminal-missing']);
    assert.match(
      r.violations.find((v) => v.rule === 'machine-mismatch')!.message,
      'the session machine holds [] pending',
    );
  } finally {
    await stack.stop();
  }
});

test.run();
