// D36 on the Codex lifecycle the audit once contradicted: steered between two `codex exec` runs.
// A real relay and the Codex adapter (its table's 30-minute resume window, D25) take the recorded
// 0.171.0 hook inputs; an instruction sent after the first run's SessionEnd is accepted and
// delivered to the resumed run. The audit of the adapter's log and of the relay's copy is clean;
// the same log without the window on its end event, or with the acceptance moved past it, is not.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { runInstruct, INSTRUCT_EXIT } from '../../src/cli/instruct-command.js';
import { sink, startTestStack } from '../cli/support.js';
import { readJson, referenceFile } from '../support/shared-dir.js';

type Input = Record<string, unknown>;
const samples = readJson<Record<string, Input>>(referenceFile('samples', 'codex-0.171.0.json'));
const RUN = ['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop', 'SessionEnd'];
const WINDOW_MS = 30 * 60_000;

test('Codex steered between two exec runs: accepted in the resume window, delivered, and the audit is clean', async () => {
  const stack = await startTestStack({ vendor: 'codex' });
  try {
    const session = samples['SessionStart']!['session_id'] as string;
    const post = (event: string, extra: Input = {}) => stack.postHook({ ...samples[event]!, ...extra });
    for (const event of RUN) await post(event);
    const ended = await stack.waitFor((e) => e.session === session && e.type === 'session.ended');
    assert.is(ended['resumewindowms'], WINDOW_MS, 'the end event states the window (D36)');

    const flags = {
      relay: stack.relayUrl,
      token: stack.token,
      sender: 'carol',
      wait: true,
      timeout: '20000',
      ackWindow: '10000',
    };
    const out = sink();
    const sent = runInstruct(
      'keep the diff small',
      { ...flags, session, vendor: 'codex' },
      { out: out.stream, err: sink().stream },
    );
    await stack.waitFor((e) => e.session === session && e.type === 'control.accepted');
    // `codex exec resume`: the same session id starts again, and its start moment carries the instruction.
    const reply = await post('SessionStart', { source: 'resume' });
    assert.match(JSON.stringify(reply.body), 'keep the diff small');
    // The resumed run is a new turn.
    const turn = { turn_id: '01a22bc0-c000-7000-8000-000000000002' };
    await post('UserPromptSubmit', turn);
    assert.is(await sent, INSTRUCT_EXIT.delivered, out.text());
    await post('Stop', turn);
    await post('SessionEnd');
    await stack.waitFor((e) => e.session === session && e.type === 'x.codex.session.closed');

    const exportPath = join(stack.dir, 'relay-export.jsonl');
    writeFileSync(
      exportPath,
      `${stack.seen
        .filter((e) => e.session === session)
        .map((e) => JSON.stringify(e))
        .join('\n')}\n`,
    );
    for (const files of [[stack.logPath], [exportPath], [stack.logPath, exportPath]]) {
      const r = await auditFiles(files);
      assert.equal(r.violations, [], files.join(' + '));
      assert.equal(
        r.instructions.filter((i) => i.session === session).map((i) => i.status),
        ['delivered'],
        files.join(' + '),
      );
    }

    // Without the stated window the acceptance is a D6 breach again: the rule reads the stream.
    const lines = readFileSync(exportPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const stripped = join(stack.dir, 'no-window.jsonl');
    writeFileSync(
      stripped,
      `${lines
        .map((e) => JSON.stringify(e['type'] === 'session.ended' ? { ...e, resumewindowms: undefined } : e))
        .join('\n')}\n`,
    );
    assert.equal(
      (await auditFiles([stripped])).violations.map((v) => v.rule),
      ['accepted-after-end'],
    );

    // Accepted after the window closed: the adapter would have refused it; the audit says so.
    const endTime = Date.parse(String(lines.find((e) => e['type'] === 'session.ended')!['time']));
    const late = join(stack.dir, 'late.jsonl');
    const lateTime = new Date(endTime + WINDOW_MS).toISOString();
    writeFileSync(
      late,
      lines.map((e) => JSON.stringify(e['type'] === 'control.accepted' ? { ...e, time: lateTime } : e)).join('\n') +
        '\n',
    );
    const lateViolations = (await auditFiles([late])).violations;
    assert.equal(
      lateViolations.map((v) => v.rule),
      ['accepted-after-end'],
    );
    assert.match(lateViolations[0]!.message, `after the end's ${WINDOW_MS} ms resume window`);
  } finally {
    await stack.stop();
  }
});

test.run();
