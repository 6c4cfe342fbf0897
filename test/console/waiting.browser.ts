// The console at a phone's size (390×844) in headless Chromium, as a person opens it from a
// push: the waiting list names every pending request, newest first, with what it asks; the push's
// click link opens the session; Allow there releases the held hook; the page links its manifest.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SHOTS, launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { parseTarget } from '../../src/notify/targets.js';
import { heldPermission, startTestStack, type TestStack } from '../cli/support.js';
import { startPushServer, type PushServer } from '../support/push-server.js';

let stack: TestStack;
let push: PushServer;
let konsole: ConsoleHandle;
let browser: Browser;
let page: Page;

test.before(async () => {
  stack = await startTestStack();
  push = await startPushServer();
  konsole = await startConsole({
    relay: stack.relayUrl,
    token: stack.token,
    port: 0,
    notify: [parseTarget(`ntfy:${push.url}/phone`)],
  });
  await konsole.follower.ready;
  browser = await launchChromium({ width: 390, height: 844 });
  page = browser.page;
});

test.after(async () => {
  await browser?.close();
  await konsole?.close();
  await push?.close();
  await stack?.stop();
});

test('the waiting list, newest first; the push link opens the request; Allow releases the hook', async () => {
  const older = await stack.openSession();
  const first = await heldPermission(stack, older);
  const newer = await stack.openSession();
  const second = await heldPermission(stack, newer);
  const pushed = await push.next((p) => String(p.body['click']).includes(second.request));

  // Opened from the push: the click link names the session and the request.
  await page.goto(String(pushed.body['click']));
  await page.waitForSelector('#relay[data-connected="true"]');
  await page.waitForSelector(`#waiting-list [data-waiting="${first.request}"]`);
  assert.is(await page.textContent('[data-field="waiting-title"]'), 'Waiting for you: 2 requests');
  const order = await page.$$eval('#waiting-list [data-waiting]', (bs) =>
    bs.map((b) => b.getAttribute('data-waiting')),
  );
  assert.equal(order, [second.request, first.request], 'newest first');
  assert.match(
    (await page.textContent(`#waiting-list [data-waiting="${second.request}"]`))!,
    'claude-code · permission',
  );
  // D35: the console's token may see what the tool will do, so the request names the command.
  assert.match(
    (await page.textContent(`#waiting-list [data-waiting="${second.request}"]`))!,
    'requests permission to use Bash: touch new-file.txt',
  );
  const box = `#detail [data-request="${second.request}"]`;
  await page.waitForSelector(box);
  assert.match(
    (await page.textContent(box))!,
    'claude-code requests permission to use Bash: touch new-file.txt',
    'what it asks',
  );
  assert.ok(
    await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
    'no horizontal scroll at 390 px',
  );
  assert.is(await page.getAttribute('link[rel="manifest"]', 'href'), 'manifest.webmanifest');
  await page.screenshot({ path: join(SHOTS, 'console-waiting-phone.png'), fullPage: true });

  await page.click(`${box} button[data-answer="allow"]`);
  const hook = await second.reply;
  assert.equal(hook.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  await page.waitForSelector(`#waiting-list [data-waiting="${second.request}"]`, { state: 'detached' });
  assert.is(await page.textContent('[data-field="waiting-title"]'), 'Waiting for you: 1 request');

  // A tap on the other entry selects its session and shows its request.
  await page.click(`#waiting-list [data-waiting="${first.request}"]`);
  await page.waitForSelector(`#detail [data-request="${first.request}"]`);
  await page.click(`#detail [data-request="${first.request}"] button[data-answer="deny"]`);
  const denied = await first.reply;
  assert.match(JSON.stringify(denied.body), '"behavior":"deny"');
  await page.waitForSelector('[data-field="waiting-title"]:text("Waiting for you: none")');
  assert.ok(statSync(join(SHOTS, 'console-waiting-phone.png')).size > 10_000);
});

test('an answer link opened in the browser only describes; its button answers; opened again it says it was used', async () => {
  const s = await stack.openSession();
  const held = await heldPermission(stack, s);
  const pushed = await push.next((p) => String(p.body['click']).includes(held.request));
  const deny = (pushed.body['actions'] as { label: string; url: string }[]).find((a) => a.label === 'Deny')!;
  await page.goto(deny.url);
  assert.is(await page.textContent('[data-field="title"]'), 'Deny this request?');
  await new Promise((r) => setTimeout(r, 200));
  assert.not.ok(
    stack.seen.some((e) => e.type === 'control.attention.respond' && e.subject === held.request),
    'opening the link answered nothing',
  );
  await page.click('form button[type="submit"]');
  await page.waitForSelector('[data-field="title"]:text("Deny: sent")');
  const hook = await held.reply;
  assert.match(JSON.stringify(hook.body), '"behavior":"deny"');
  await page.goto(deny.url);
  assert.is(await page.textContent('[data-field="title"]'), 'Nothing answered');
  assert.match((await page.textContent('body'))!, 'already answered from a link (deny)');
});

test.run();
