// The console's Stop in headless Chromium on a real relay (D33): a session whose claimant declares
// control.cancel has a Stop button that sends control.cancel {scope:"run"} through the console's
// own action and shows the outcome (settled on run.cancelled, or the adapter's refusal); a
// session that takes no cancel has none. The page runs under its hash-based CSP throughout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { startTestTarget, type TestTarget } from '../support/relay-target.js';
import { startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let target: TestTarget;
let konsole: ConsoleHandle;
let browser: Browser;
let page: Page;
const running = new Map([['hub-stop', 'run-41']]);
const pageErrors: string[] = [];

test.before(async () => {
  stack = await startTestStack();
  target = await startTestTarget({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'cline',
    accepts: ['control.cancel'],
    sessions: ['hub-stop'],
    running,
  });
  await stack.waitFor((e) => e.session === 'hub-stop');
  konsole = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await konsole.follower.ready;
  browser = await launchChromium({ width: 1280, height: 860 });
  page = browser.page;
  page.on('console', (m) => {
    if (m.type() === 'error') pageErrors.push(m.text());
  });
  page.on('pageerror', (e) => pageErrors.push(e.message));
});

test.after(async () => {
  await browser?.close();
  await konsole?.close();
  await target?.close();
  await stack?.stop();
});

test("Stop stops the running turn (settled on run.cancelled); a second Stop shows the adapter's refusal", async () => {
  await page.goto(konsole.url);
  await page.waitForSelector('#relay[data-connected="true"]');
  await page.click('nav [data-session="hub-stop"]');
  await page.waitForSelector('#detail #stop');

  await page.click('#detail #stop');
  await page.waitForSelector('#stop-status[data-status="delivered"]');
  const cmd = target.received.find((c) => c.type === 'control.cancel' && c.session === 'hub-stop')!;
  assert.ok(cmd, 'the adapter received the cancel');
  assert.equal(cmd.data, { scope: 'run' });
  const cancelled = await stack.waitFor((e) => e.type === 'run.cancelled' && e.cause === cmd.id);
  assert.is(cancelled.run, 'run-41');
  assert.is(
    await page.textContent('#stop-status'),
    `Cancelled: session hub-stop stopped its running turn (run.cancelled ${cancelled.id}).`,
  );

  // Nothing runs now: the adapter refuses, and the page gives its sentence as an error.
  await page.click('#detail #stop');
  await page.waitForSelector('#stop-status[data-status="error"]');
  assert.match(
    (await page.textContent('#stop-status'))!,
    /^Not cancelled \(no-active-run\): no active run to cancel\./,
  );
  assert.is(target.received.filter((c) => c.type === 'control.cancel').length, 2);
  assert.equal(pageErrors, [], 'no script error or CSP violation on the page');
});

test('a session whose claimant takes no cancel has no Stop button', async () => {
  const s = await stack.openSession();
  await page.click(`nav [data-session="${s.session}"]`);
  await page.waitForSelector(`#detail [data-field="title"]:has-text("${s.session}")`);
  await page.waitForSelector('#detail [data-field="stop"]', { state: 'attached' });
  assert.is(await page.$('#detail #stop'), null);
  assert.equal(pageErrors, []);
});

test.run();
