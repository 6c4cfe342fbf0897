// D45 on the hook lane of the real GitHub Copilot CLI 1.0.102 against the loopback mock Chat
// Completions API: the agentStop hook names only the session's transcript, and the adapter reads
// the turn's final answer from its end, so `aep-steer read` prints the mock model's text to the
// operator, while a watch-only token (capture `metadata`) is told the answer is withheld and never
// sees it. The audit of the adapter's log is clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { READ_EXIT, runRead } from '../../src/cli/wait-command.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { textSink } from '../support/tui.js';

const INSTRUCT = 'x.copilot.control.instruct';
const WATCHER = 'e2e-watcher';
const e2e = e2eSuite('copilot', {
  label: 'copilot-read',
  access: { commands: [INSTRUCT], parties: { [WATCHER]: [] } },
});

/** `aep-steer read --session S` as a person runs it with `token`: exit code and what it printed. */
async function read(session: string, token: string): Promise<{ code: number; text: string }> {
  const out = textSink();
  const code = await runRead(
    { relay: e2e.stack.relayUrl, token, sender: 'e2e-reader', session, turn: 'last' } as never,
    { out: out.stream, err: out.stream },
  );
  return { code, text: out.text() };
}

if (e2e.installed) {
  let session = '';

  test("read prints the turn's final answer, taken from the transcript the agentStop hook names", async () => {
    const ws = await e2e.workspace();
    const started = await e2e.startRun(ws, '[[TURN]] cp-read run one command');
    session = started.session;
    const r = await started.run;
    assert.is(r.code, 0, r.stderr.slice(-2000));
    const finished = await e2e.stack.waitFor('run.finished', () => e2e.stack.find(session, 'run.finished'));
    assert.is(finished.capture, 'redacted', 'the answer rides at capture redacted');
    // The answer the CLI printed is the one the mock gave last; the stream carries the same text.
    const said = /"content":"(MOCK_DONE \d+)"/.exec(r.stdout)?.[1];
    assert.ok(said, `the run printed the mock's answer: ${r.stdout.slice(-1500)}`);
    assert.is(finished.data?.['summary'], said);

    const op = await read(session, e2e.stack.relayToken);
    assert.is(op.code, READ_EXIT.read, op.text);
    assert.match(op.text, `Its final answer:\n${said}`);
  });

  test('a watch-only token reads that the turn finished, not what it said', async () => {
    assert.ok(session !== '', 'the first test ran a turn');
    const w = await read(session, e2e.stack.tokenOf(WATCHER));
    assert.is(w.code, READ_EXIT.read, w.text);
    assert.match(w.text, 'finished');
    assert.match(w.text, "not shown at this token's capture (metadata)");
    assert.not.match(w.text, 'MOCK_DONE');
  });

  test("the audit of the adapter's log is clean; the adapter reported no errors", async () => {
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(audit.violations, [], renderText(audit));
    assert.equal(e2e.stack.errors, []);
  });
}

test.run();
