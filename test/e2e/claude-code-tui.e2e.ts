// Claude Code 2.1.332's own terminal UI, driven in tmux with `send-keys` like a person at the
// keyboard, against the loopback mock Anthropic API; this project's relay and adapter run
// in-process and the real installer writes the hooks. A held PermissionRequest answered in
// Claude's own dialog ends the request on the stream at once (D34): Yes as `attention.answered
// {via:"oob"}` (2.1.332 keeps the held hook running and reports the call with PostToolUse), Esc as
// dismissed (Claude ends the hook); a later `aep-steer respond` exits "not pending" and nothing
// is recorded as answered. The request says what the tool will do (D35) to the operator, and only
// the tool name to a watch-only watcher.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import type { Tui } from '../support/tui.js';
import type { MessagesBody, Turn } from '../support/mock-anthropic.js';

const e2e = e2eSuite('claude-code', {
  label: 'claude-code-tui',
  tmux: true,
  access: {
    commands: ['control.attention.respond'],
    parties: { 'tui-watcher': [] },
  },
  flags: { instruct: false, attentionTimeoutMs: '50000' },
});
let tui: Tui;
let ws: VendorWorkspace;
let watched: { e: AepEvent }[] = [];

/** Each user prompt asks for one Bash call that creates the file the prompt names; a tool result gets a final text. */
function oneCallPerPrompt(body: MessagesBody): Turn {
  const last = (body.messages ?? []).at(-1);
  const blocks = Array.isArray(last?.content) ? (last!.content as { type?: string; text?: string }[]) : [];
  const text =
    typeof last?.content === 'string'
      ? last.content
      : blocks
          .filter((b) => b.type === 'text')
          .map((b) => b.text ?? '')
          .join(' ');
  const file = /create (\S+\.txt)/.exec(text)?.[1];
  if (
    !(body.tools ?? []).some((t) => t.name === 'Bash') ||
    file === undefined ||
    blocks.at(-1)?.type === 'tool_result'
  ) {
    return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
  }
  return {
    content: [
      {
        type: 'tool_use',
        name: 'Bash',
        input: { command: `touch ${join(ws.project, file)}`, description: `create ${file}` },
      },
    ],
    stop_reason: 'tool_use',
  };
}

/** Types a prompt into the TUI; resolves with the permission request it raised once Claude shows its own dialog. */
async function ask(file: string): Promise<AepEvent> {
  const requested = await e2e.typed(tui, `create ${file} with bash`);
  await tui.shows('Do you want to proceed?');
  // The dialog ignores keys for a moment after it opens (a guard against a stray keypress), as a
  // person's reading time covers: keys sent at once are dropped.
  await new Promise((r) => setTimeout(r, 1500));
  return requested;
}

if (e2e.installed) {
  test.before(async () => {
    e2e.mock.setScript(oneCallPerPrompt);
    watched = await e2e.stack.watch('tui-watcher');
    ws = await e2e.workspace({ attentionTimeoutMs: 50_000 });
    // A first run's onboarding, folder trust and API key questions, answered as a person once would.
    writeFileSync(
      join(ws.home, '.claude.json'),
      JSON.stringify({
        hasCompletedOnboarding: true,
        theme: 'dark',
        customApiKeyResponses: { approved: ['sk-ant-test'.slice(-20)], rejected: [] },
        projects: { [ws.project]: { hasTrustDialogAccepted: true, hasCompletedProjectOnboarding: true } },
      }),
    );
    // Default permission mode: a file-writing Bash call asks in Claude's dialog and fires PermissionRequest.
    tui = await e2e.tui(ws);
    await e2e.stack.waitFor('session.started', () => e2e.stack.events.find((e) => e.type === 'session.started'));
  });

  test('a permission answered Yes in the TUI ends the request via oob; a later respond exits not-pending', async () => {
    const requested = await ask('yes.txt');
    const session = requested.session!;
    // D35: the operator reads the command; the watch-only watcher, at metadata, the tool name only.
    assert.is(requested.capture, 'redacted');
    assert.match((requested.data as { prompt: string }).prompt, `Bash: touch ${join(ws.project, 'yes.txt')}`);
    const low = await e2e.stack.waitFor('the watcher copy', () => watched.find((w) => w.e.id === requested.id)?.e);
    assert.is((low.data as { prompt: string }).prompt, 'claude-code requests permission: Bash');
    assert.not.ok(JSON.stringify(low).includes('yes.txt'), 'no command below redacted');

    const pressed = Date.now();
    tui.keys('Enter'); // "1. Yes" is the selected choice
    const answered = await e2e.stack.waitFor('attention.answered via oob', () =>
      e2e.stack.events.find((e) => e.type === 'attention.answered' && e.subject === requested.id),
    );
    const tookMs = Date.now() - pressed;
    console.log(`  Yes in the TUI → attention.answered {via:"oob"} in ${tookMs} ms`);
    assert.equal(answered.data, { answer: { option: 'allow' }, via: 'oob' });
    const resolved = await e2e.stack.waitFor('attention.resolved', () =>
      e2e.stack.events.find((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    );
    assert.equal([resolved.cause, (resolved.data as { resolution: string }).resolution], [answered.id, 'answered']);
    // D46: answered by the person at the agent's own UI.
    assert.equal(resolved.data?.['decided_by'], { identity: 'local-user', surface: 'agent' });
    assert.ok(existsSync(join(ws.project, 'yes.txt')), 'the command ran');
    assert.ok(tookMs < 10_000, `ended long before the 50 s hold timeout (${tookMs} ms)`);

    const late = await e2e.respond(session, requested.id, 'deny');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'already answered at the agent');
    await e2e.stack.waitFor('the rejection', () =>
      e2e.stack.events.find((e) => e.type === 'control.rejected' && e['code'] === 'not-pending'),
    );
    assert.equal(
      e2e.stack.events.filter((e) => e.type === 'attention.answered' && e.subject === requested.id).length,
      1,
      'the late deny is not recorded',
    );
    await tui.shows('Done.');
  });

  test('Esc in the TUI dismisses the request at once; a later respond allow exits not-pending and the command never runs', async () => {
    const requested = await ask('esc.txt');
    const tookMs = await e2e.escDismisses(tui, requested);
    assert.ok(tookMs < 10_000, `ended long before the 50 s hold timeout (${tookMs} ms)`);
    assert.not.ok(existsSync(join(ws.project, 'esc.txt')), 'the command never ran');
  });

  test("the adapter's log of both runs passes aep-steer audit", async () => {
    const r = await auditFiles([e2e.stack.logPath]);
    assert.equal(r.violations, [], JSON.stringify(r.violations));
  });
}

test.run();
