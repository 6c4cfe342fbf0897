// Codex 0.171.0's own terminal UI, driven in tmux, against the loopback mock Responses API; this
// project's relay and adapter run in-process and the real installer writes the hooks. Codex waits
// for a PermissionRequest hook before it shows its own approval dialog ("Running hook"), so the
// operator's answer decides; Esc interrupts the turn and Codex ends the held hook, which the
// adapter reports at once as a dismissed request (D34); a later respond exits "not pending".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import type { Tui } from '../support/tui.js';

const e2e = e2eSuite('codex', { label: 'codex-tui', tmux: true });
let tui: Tui;

/** Types a prompt whose shell call asks to leave the sandbox; resolves with the permission request it raised. */
const ask = (tag: string): Promise<AepEvent> => e2e.typed(tui, `[[TURN]] [[ESCALATE]] ${tag} run it`);
/** Whether the command of the turn carrying `tag` ran: its output reached the model. */
const ran = (tag: string): boolean => e2e.toolOutputs(tag).some((o) => o.includes('TOOL_RAN_'));

if (e2e.installed) {
  test.before(async () => {
    // Codex asks before a command leaves the sandbox (on-request), so PermissionRequest fires.
    const ws = await e2e.workspace({ settings: { approval_policy: 'on-request', sandbox_mode: 'read-only' } });
    tui = await e2e.tui(ws);
  });

  test('a held PermissionRequest answered with respond allow runs the command; the request said what it runs', async () => {
    const requested = await ask('ALLOWTUI');
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, 'TOOL_RAN_');
    await tui.shows('Running hook');
    const a = await e2e.respond(requested.session!, requested.id, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    await e2e.stack.waitFor('the command ran', () => (ran('ALLOWTUI') ? true : undefined));
  });

  test('Esc while the hook is held interrupts the turn: the request is dismissed at once, a later respond exits not pending', async () => {
    const requested = await ask('ESCTUI');
    await tui.shows('Running hook');
    await e2e.escDismisses(tui, requested);
    assert.not.ok(ran('ESCTUI'), 'the command never ran');
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
