// D50 on the hook lane of the real GitHub Copilot CLI 1.0.102's own terminal UI, driven in tmux like
// a person at the keyboard, against the loopback mock Chat Completions API (BYOK, no GitHub login),
// in a folder the user's Copilot config trusts, with the installer's `.github/hooks/aep-steer.json`.
// A `queue` sent while a turn's slow shell call runs waits through that turn and is delivered at the
// next turn's userPromptSubmitted, in that turn's first model request, with its receipt. Once the
// session is idle, `instruct --start` is refused `start-unsupported`, naming `aep-steer run
// copilot` (no way into an interactive `copilot` starts a turn), and nothing reaches the model.
// The audit of the adapter's log is clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import { startTui, type Tui } from '../support/tui.js';
import { chatMessagesOf, chatTextOf } from '../support/vendor-e2e.js';

const INSTRUCT = 'x.copilot.control.instruct';
const DELIVERED = 'x.copilot.instruction.delivered';
/** What the TUI shows once it takes a prompt (1.0.102's status line). */
const READY = '? help';

const e2e = e2eSuite('copilot', { label: 'copilot-tui', tmux: true });
let ws: VendorWorkspace;
let tui: Tui;
let session = '';

/** Where the stream stood when the TUI started: its session is the first to start after. */
let launched = 0;

/** Types a prompt into the TUI and resolves once the adapter saw the turn open in the TUI's session. */
async function prompt(text: string): Promise<void> {
  const from = e2e.stack.events.length;
  await tui.submit(text);
  if (session === '') session = await e2e.stack.newSession(launched);
  await e2e.stack
    .waitFor('the typed prompt', () =>
      e2e.stack.events.slice(from).find((e) => e.type === 'run.started' && e.session === session),
    )
    .catch((err: Error) => {
      throw new Error(`${err.message}\nthe TUI shows:\n${tui.screen()}`);
    });
}
const finishedCount = () => e2e.stack.events.filter((e) => e.session === session && e.type === 'run.finished').length;

if (e2e.installed) {
  test.before(async () => {
    ws = await e2e.workspace();
    // The folder is trusted the way a person's earlier "trust this folder" leaves it: in the config.
    mkdirSync(join(ws.home, '.copilot'), { recursive: true });
    writeFileSync(join(ws.home, '.copilot', 'config.json'), JSON.stringify({ trustedFolders: [ws.project] }));
    launched = e2e.stack.events.length;
    tui = startTui('copilot-tui', ws.project, { ...ws.env, TERM: 'xterm-256color' }, [e2e.binary, '--allow-all']);
    e2e.defer(() => tui.end());
    await tui.shows(READY, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}\nadapter errors: ${e2e.stack.errors.join('\n')}`);
    });
  });

  test("a queue sent while a turn runs reaches the next turn's first request at userPromptSubmitted, receipted", async () => {
    const gate = join(ws.root, 'cp-tui.go');
    await prompt(`[[TURN]] [[WAITFILE:${gate}]] cp-tui-first run the slow command`);
    await e2e.stack.waitFor('the slow call', () => e2e.stack.find(session, 'tool.requested'));
    const marker = `QUEUE-COPILOT-TUI-${session.slice(0, 8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text: marker, delivery: 'queue' });
    writeFileSync(gate, '');
    await e2e.stack.waitFor('the first turn finished', () => (finishedCount() >= 1 ? true : undefined));
    assert.not.ok(e2e.stack.find(session, DELIVERED, cmd.id), 'nothing delivered within the running turn');
    assert.is(e2e.withText(marker).length, 0, 'no request of the first turn carries it');

    await prompt('[[TURN]] [[TOOLS:0]] cp-tui-next say done');
    const d = await e2e.stack.delivered(session, cmd);
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['queue', 'userPromptSubmitted']);
    const next = await e2e.stack.waitFor('the next turn at the model', () => {
      const reqs = e2e.requestsOf('cp-tui-next');
      return reqs.length > 0 ? reqs : undefined;
    });
    const user = chatMessagesOf(next[0]!.body).filter((m) => m.role === 'user');
    assert.ok(
      user.at(-1) !== undefined && chatTextOf(user.at(-1)!).includes(marker),
      "the next turn's first request carries it with the prompt",
    );
    assert.is(
      e2e.withText(marker).filter((r) => !e2e.turnOf(r).includes('cp-tui-next')).length,
      0,
      'no other turn carries it',
    );
    await e2e.stack.waitFor('the second turn finished', () => (finishedCount() >= 2 ? true : undefined));
  });

  test('instruct --start on the idle interactive session is refused start-unsupported, naming run copilot', async () => {
    await e2e.stack.waitFor('the session idle', () => (finishedCount() >= 2 ? true : undefined));
    const marker = `START-COPILOT-TUI-${session.slice(0, 8)}`;
    const before = e2e.requests().length;
    const { settled } = await e2e.stack.sent(session, INSTRUCT, { text: `[[TURN]] ${marker}`, idle: 'start' });
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code] : settled, [
      'unsupported',
      'start-unsupported',
    ]);
    assert.match(settled.outcome === 'rejected' ? (settled.detail ?? '') : '', 'aep-steer run copilot');
    assert.is(e2e.withText(marker).length, 0, 'nothing reached the model');
    assert.is(e2e.requests().length, before, 'no model request followed');
    const delivered = e2e.stack.events.filter((e) => e.session === session && e.type === DELIVERED);
    assert.is(delivered.length, 1, 'no delivery but the queued one');
  });

  test("the audit of the adapter's log is clean; the adapter reported no errors", async () => {
    await tui.end();
    await e2e.stack.waitFor('session.ended', () => e2e.stack.find(session, 'session.ended'));
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(audit.violations, [], renderText(audit));
    assert.equal(e2e.stack.errors, []);
  });
}

test.run();
