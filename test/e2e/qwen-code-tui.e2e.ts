// Qwen Code 0.24.4's own terminal UI, driven in tmux, against the loopback mock Chat Completions
// API; this project's relay and adapter run in-process and the real installer writes its HTTP
// hooks. Qwen Code waits for a PermissionRequest hook before it asks its user, so the operator's
// answer decides; Esc cancels the request and Qwen Code closes the held hook's connection, which
// the adapter reports at once as a dismissed request (D34); a later respond exits "not pending".
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import type { Tui } from '../support/tui.js';

const e2e = e2eSuite('qwen-code', { label: 'qwen-code-tui', tmux: true });
let ws: VendorWorkspace;
let tui: Tui;

/**
 * A prompt whose shell call waits for `gate` (a loop Qwen Code asks permission for); resolves with the request it
 * raised.
 */
const ask = (tag: string, gate: string): Promise<AepEvent> =>
  e2e.typed(tui, `[[TURN]] [[WAITFILE:${gate}]] ${tag} run it`);
/** Whether the command of the turn carrying `tag` ran: its result reached the model. */
const ran = (tag: string): boolean => e2e.toolOutputs(tag).some((t) => t.includes('TOOL_RAN_'));

if (e2e.installed) {
  test.before(async () => {
    ws = await e2e.workspace();
    tui = await e2e.tui(ws);
    // 0.24.4 starts in its classifier's auto mode; a person switches to asking.
    await tui.submit('/approval-mode default');
    await tui.shows('Approval mode set to "Ask permissions"');
  });

  test('a held PermissionRequest answered with respond allow (no --request) runs the command; the request said what it runs', async () => {
    const gate = join(ws.root, 'allow.go');
    const requested = await ask('ALLOWQTUI', gate);
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, 'TOOL_RAN_');
    const a = await e2e.respond(requested.session!, undefined, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    writeFileSync(gate, '');
    await e2e.stack.waitFor('the command ran', () => (ran('ALLOWQTUI') ? true : undefined));
  });

  test('Esc while the hook is held cancels the request: dismissed at once, a later respond exits not pending', async () => {
    const requested = await ask('ESCQTUI', join(ws.root, 'esc.go'));
    await e2e.escDismisses(tui, requested);
    assert.not.ok(ran('ESCQTUI'), 'the command never ran');
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
