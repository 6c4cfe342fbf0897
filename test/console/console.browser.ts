// The console in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core), on a
// real relay and Claude Code adapter: real clicks and keys send an instruction and the page shows
// it delivered; a held permission is allowed from the page and the held hook returns allow; a
// phone-sized and a desktop screenshot go to .tmp/screenshots/ (git-ignored).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SHOTS, launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { heldPermission, permissionRequest, startTestStack, type TestStack } from '../cli/support.js';
import { openHook } from '../support/open-hook.js';
import { aepFile, readJson } from '../support/shared-dir.js';

let stack: TestStack;
let konsole: ConsoleHandle;
let browser: Browser;
let page: Page;

test.before(async () => {
  stack = await startTestStack();
  konsole = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await konsole.follower.ready;
  browser = await launchChromium({ width: 1280, height: 860 });
  page = browser.page;
});

test.after(async () => {
  await browser?.close();
  await konsole?.close();
  await stack?.stop();
});

const session = (id: string) => `nav [data-session="${id}"]`;

test('a click sends an instruction; the page shows accepted, then delivered with the ms and the moment', async () => {
  await page.goto(konsole.url);
  await page.waitForSelector('#relay[data-connected="true"]');
  const s = await stack.openSession();
  await page.click(session(s.session));
  await page.waitForSelector('#detail [data-field="state"][data-state="idle"]');

  await page.fill('#instruct-text', 'Run the integration tests before you push.');
  await page.click('#instruct-send');
  await page.waitForSelector('#instruct-status[data-status="pending"]');
  assert.match((await page.textContent('#instruct-status'))!, /^accepted at \d\d:\d\d:\d\d\.\d{3}, queued$/);
  await page.waitForSelector('#detail [data-field="state"][data-state="queued"]');
  assert.match(
    (await page.textContent('#detail [data-field="queue"]'))!,
    'from aep-steer-console: Run the integration tests before you push.',
  );
  const id = (await page.getAttribute('#instruct-status', 'data-command'))!;

  // The agent reaches its next tool call: the hook reply carries the text.
  const reply = await stack.postHook(s.toolCall[0]!);
  assert.equal(
    (reply.body as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext,
    'Run the integration tests before you push.',
  );
  await page.waitForSelector('#instruct-status[data-status="delivered"]');
  // The moment that carried it (D27) and when.
  assert.match(
    (await page.textContent('#instruct-status'))!,
    /^delivered after \d+ ms at PreToolUse \(\d\d:\d\d:\d\d\.\d{3}\)$/,
  );
  // The audit row says the same, and the box is empty for the next one.
  assert.match(
    (await page.textContent(`tr[data-instruction="${id}"] td[data-status="delivered"]`))!,
    /delivered after \d+ ms/,
  );
  assert.is(await page.inputValue('#instruct-text'), '');
  await page.screenshot({ path: join(SHOTS, 'console-desktop.png'), fullPage: true });
  assert.ok(statSync(join(SHOTS, 'console-desktop.png')).size > 10_000);
});

test('keyboard only: j/k picks the session, i focuses the box, Ctrl+Enter sends', async () => {
  const s = await stack.openSession();
  await page.waitForSelector(session(s.session));
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  // Walk the list with j until the new session is selected.
  for (let i = 0; i < 20; i++) {
    if ((await page.getAttribute(session(s.session), 'aria-current')) === 'true') break;
    await page.keyboard.press(i === 0 ? 'k' : 'j');
  }
  assert.is(await page.getAttribute(session(s.session), 'aria-current'), 'true');
  await page.keyboard.press('i');
  assert.is(await page.evaluate(() => document.activeElement?.id), 'instruct-text');
  await page.keyboard.type('Summarise what you changed.');
  await page.keyboard.press('Control+Enter');
  await page.waitForSelector('#instruct-status[data-status="pending"]');
  await stack.postHook(s.closing[1]!);
  await page.waitForSelector('#instruct-status[data-status="dropped"]');
  assert.match((await page.textContent('#instruct-status'))!, 'dropped: session-ended');
});

test('a permission request is allowed from the page and the held hook returns allow (phone viewport)', async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  const s = await stack.openSession();
  await page.click(session(s.session));
  const { request, reply } = await heldPermission(stack, s);
  const box = `[data-request="${request}"]`;
  await page.waitForSelector(box);
  await page.waitForSelector('#detail [data-field="state"][data-state="holding.permission"]');
  assert.match((await page.textContent(box))!, 'claude-code requests permission');
  assert.ok(await page.locator(`${session(s.session)} .badge`).count());
  await page.screenshot({ path: join(SHOTS, 'console-phone.png'), fullPage: true });
  // Readable on a phone: nothing wider than the viewport.
  assert.ok(
    await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    'no horizontal scroll at 390 px',
  );

  await page.click(`${box} button[data-answer="allow"]`);
  const hook = await reply;
  assert.equal(hook.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  await page.waitForSelector(box, { state: 'detached' });
  await page.waitForSelector('#detail [data-field="state"][data-state="idle"]');
  assert.ok(statSync(join(SHOTS, 'console-phone.png')).size > 10_000);
});

test('a form request (an MCP elicitation) is filled in and submitted from the page; the held hook returns the values', async () => {
  await page.setViewportSize({ width: 1280, height: 860 });
  const s = await stack.openSession();
  await page.click(session(s.session));
  const fixture = readJson<{ elicitation: { input: Record<string, unknown> } }>(
    aepFile('fixtures', 'mappings', 'claude-code.json'),
  );
  const pre = s.toolCall[0]!;
  const reply = stack.postHook({
    session_id: s.session,
    transcript_path: pre['transcript_path'],
    cwd: s.cwd,
    hook_event_name: 'Elicitation',
    mcp_server_name: 'deployer',
    ...fixture.elicitation.input,
  });
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  const box = `[data-request="${requested.id}"]`;
  await page.waitForSelector(`${box} [data-field="form"]`);
  await page.selectOption(`${box} [data-field-id="environment"]`, 'staging');
  await page.fill(`${box} [data-field-id="replicas"]`, '2');
  await page.check(`${box} [data-field-id="confirm"]`);
  await page.screenshot({ path: join(SHOTS, 'console-form.png'), fullPage: true });
  await page.click(`${box} button[data-answer="submit"]`);
  const hook = await reply;
  assert.equal(hook.body, {
    hookSpecificOutput: {
      hookEventName: 'Elicitation',
      action: 'accept',
      content: { environment: 'staging', replicas: 2, confirm: true },
    },
  });
  await page.waitForSelector(box, { state: 'detached' });
});

test('stream text is shown as text, never as markup', async () => {
  const s = await stack.openSession();
  await page.click(session(s.session));
  await page.fill('#instruct-text', '<img src=x onerror="document.body.dataset.pwned=1">');
  await page.click('#instruct-send');
  await page.waitForSelector('#instruct-status[data-status="pending"]');
  assert.is(await page.locator('#detail img').count(), 0);
  assert.is(await page.evaluate(() => document.body.dataset['pwned']), undefined);
  assert.match((await page.textContent('#detail [data-field="queue"]'))!, '<img src=x');
});

test('a permission request shows its command (D35); one the agent ends itself leaves the page at once (D34)', async () => {
  await page.setViewportSize({ width: 1280, height: 860 });
  const s = await stack.openSession();
  await page.click(session(s.session));
  const held = openHook(stack.hookUrl, {
    ...permissionRequest(s),
    tool_input: { command: 'rm -rf build/', description: 'clean' },
  });
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  const box = `[data-request="${requested.id}"]`;
  await page.waitForSelector(box);
  assert.match((await page.textContent(box))!, 'Bash: rm -rf build/');
  // The person answers in the agent's own dialog: its hook goes away, and so does the request here.
  held.abort();
  await page.waitForSelector(box, { state: 'detached' });
  await page.waitForSelector('#detail [data-field="state"][data-state="idle"]');
  assert.match((await page.textContent('#detail [data-field="requests"]'))!, 'none');
});

test('a form request shows its question and the labels of its choices (D35)', async () => {
  const s = await stack.openSession();
  await page.click(session(s.session));
  const form = {
    ...permissionRequest(s),
    tool_name: 'AskUserQuestion',
    tool_input: {
      questions: [
        {
          question: 'Which database should the migration use?',
          header: 'DB',
          options: [{ label: 'staging copy' }, { label: 'production' }],
          multiSelect: false,
        },
      ],
    },
  };
  const held = openHook(stack.hookUrl, form);
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  const box = `[data-request="${requested.id}"]`;
  await page.waitForSelector(`${box} [data-field="form"]`);
  const text = (await page.textContent(box))!;
  assert.match(text, 'DB: Which database should the migration use?');
  assert.match(text, 'staging copy');
  assert.match(text, 'production');
  held.abort();
  await page.waitForSelector(box, { state: 'detached' });
});

test.run();
