// The inspect page in headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core):
// a real relay and adapter, an instruction sent through the relay, and the page redrawing from
// queued to delivered. Screenshots go to .tmp/screenshots/ (git-ignored).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { SHOTS, launchChromium, type Browser } from '../support/browser.js';
import { startInspect, type InspectHandle } from '../../src/cli/inspect-command.js';
import { INSTRUCT_EXIT, runInstruct } from '../../src/cli/instruct-command.js';
import { sink, startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let inspect: InspectHandle;
let browser: Browser;
let page: Page;

test.before(async () => {
  stack = await startTestStack();
  inspect = await startInspect({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await inspect.follower.ready;
  browser = await launchChromium({ width: 1200, height: 800 });
  page = browser.page;
});

test.after(async () => {
  await browser?.close();
  await inspect?.close();
  await stack?.stop();
});

test('the page shows a live session, its queued instruction, and then the delivery', async () => {
  await page.goto(inspect.url);
  await page.waitForSelector('#relay[data-connected="true"]');

  const s = await stack.openSession();
  const card = `[data-session="${s.session}"]`;
  await page.waitForSelector(`${card} [data-field="state"][data-state="idle"]`);
  assert.match((await page.textContent(card))!, 'accepts instruct');

  const out = sink();
  const code = await runInstruct(
    'rename the helper before merging',
    {
      relay: stack.relayUrl,
      token: stack.token,
      sender: 'erin',
      session: s.session,
      wait: false,
      timeout: '20000',
      ackWindow: '10000',
      json: true,
    },
    { out: out.stream, err: sink().stream },
  );
  assert.is(code, INSTRUCT_EXIT.accepted);
  const id = JSON.parse(out.text()).command as string;

  await page.waitForSelector(`${card} [data-field="state"][data-state="queued"]`);
  const item = await page.textContent(`${card} [data-field="queue"] [data-instruction="${id}"]`);
  assert.match(item!, 'from erin: rename the helper before merging');
  await page.screenshot({ path: join(SHOTS, 'inspect-queued.png'), fullPage: true });

  await stack.postHook(s.toolCall[0]!);
  await page.waitForSelector(`tr[data-instruction="${id}"] td[data-status="delivered"]`);
  await page.waitForSelector(`${card} [data-field="state"][data-state="idle"]`);
  assert.match((await page.textContent(`tr[data-instruction="${id}"]`))!, /delivered after \d+ ms/);
  await page.screenshot({ path: join(SHOTS, 'inspect-delivered.png'), fullPage: true });
  assert.ok(statSync(join(SHOTS, 'inspect-delivered.png')).size > 0);

  await stack.postHook(s.closing[1]!);
  await page.waitForSelector(`${card} [data-field="state"][data-state="ended"]`);
});

test('event text is shown as text, never as markup', async () => {
  const s = await stack.openSession();
  const code = await runInstruct(
    '<img src=x onerror="document.body.dataset.pwned=1">',
    {
      relay: stack.relayUrl,
      token: stack.token,
      sender: '<b>mallory</b>',
      session: s.session,
      wait: false,
      timeout: '20000',
      ackWindow: '10000',
    },
    { out: sink().stream, err: sink().stream },
  );
  assert.is(code, INSTRUCT_EXIT.accepted);
  const card = `[data-session="${s.session}"]`;
  await page.waitForSelector(`${card} [data-field="state"][data-state="queued"]`);
  assert.is(await page.locator(`${card} img`).count(), 0);
  assert.is(await page.locator('b').count(), 0);
  assert.is(await page.evaluate(() => document.body.dataset['pwned']), undefined);
  assert.match((await page.textContent(card))!, 'from <b>mallory</b>: <img src=x');
});

test.run();
