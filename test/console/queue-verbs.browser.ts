// D44 in the console, in headless Chromium at a desktop (1280x900) and a phone (390x844) size, on
// a real relay and Claude Code adapter: three waiting instructions moved with the up and down
// buttons, the queue paused (the agent's moments carry nothing) and resumed (the next moment
// carries all three in the new order), and Steer now on one while paused (a steer is not held).
// Each moved item names who moved it (D46).
// Every change shows only once the stream settled it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let konsole: ConsoleHandle;

test.before(async () => {
  stack = await startTestStack();
  konsole = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await konsole.follower.ready;
});

test.after(async () => {
  await konsole?.close();
  await stack?.stop();
});

const contextOf = (reply: { body: unknown }) =>
  (reply.body as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;
const queueIds = (p: Page) =>
  p.$$eval('#detail [data-field="queue"] [data-instruction]', (ls) =>
    ls.map((l) => l.getAttribute('data-instruction')!),
  );
/** Resolves once the queue lists exactly `ids`, in that order. */
const queueIs = (p: Page, ids: string[]) =>
  p.waitForFunction(
    (want) =>
      Array.from(document.querySelectorAll('#detail [data-field="queue"] [data-instruction]'))
        .map((l) => l.getAttribute('data-instruction'))
        .join(',') === want,
    ids.join(','),
  );

for (const [width, height] of [
  [1280, 900],
  [390, 844],
] as const) {
  test(`${width}x${height}: move up and down, pause, steer now while paused, resume`, async () => {
    const browser: Browser = await launchChromium({ width, height });
    const page = browser.page;
    try {
      await page.goto(konsole.url);
      await page.waitForSelector('#relay[data-connected="true"]');
      const s = await stack.openSession();
      await page.click(`nav [data-session="${s.session}"]`);
      await page.waitForSelector('#detail [data-field="state"]');
      for (const text of ['one', 'two', 'three']) {
        await page.fill('#instruct-text', text);
        await page.click('#instruct-send');
        await page.waitForSelector(`#detail [data-field="queue"] li:has-text("${text}")`);
      }
      const [one, two, three] = (await queueIds(page)) as [string, string, string];

      // Up on the third twice puts it first; down on the first puts it after the second.
      await page.click(`#detail [data-up="${three}"]`);
      await queueIs(page, [one, three, two]);
      await page.click(`#detail [data-up="${three}"]`);
      await queueIs(page, [three, one, two]);
      assert.ok(await page.isDisabled(`#detail [data-up="${three}"]`), 'the first cannot go up');
      await page.click(`#detail [data-down="${one}"]`);
      await queueIs(page, [three, two, one]);
      const moved = stack.seen.filter((e) => e.type === 'x.claude-code.instruction.moved' && e.session === s.session);
      assert.is(moved.length, 3, 'each click is one settled move');
      // D46: each item says who last moved it, from the settled event's decided_by.
      const by = await page.textContent(`#detail [data-instruction="${one}"]`);
      assert.match(by ?? '', /moved by \S+ \(console/, `who moved it: ${by}`);

      // Pause: the button flips only once the adapter's queue.held is on the stream.
      await page.click('#queue-hold');
      await page.waitForSelector('#queue-hold[data-paused="true"]');
      assert.ok(stack.seen.some((e) => e.type === 'x.claude-code.queue.held' && e.session === s.session));
      assert.is(contextOf(await stack.postHook(s.toolCall[0]!)), undefined, 'nothing delivered while paused');
      await queueIs(page, [three, two, one]);

      // A steer is not held: Steer now on the second delivers it at the next moment.
      await page.click(`#detail [data-promote="${two}"]`);
      await stack.waitFor((e) => e.type === 'x.claude-code.instruction.promoted' && e.subject === two);
      assert.is(contextOf(await stack.postHook(s.toolCall[1]!)), 'two');
      await queueIs(page, [three, one]);

      // Resume: the next moment carries the rest in the sender's order.
      await page.click('#queue-hold');
      await page.waitForSelector('#queue-hold[data-paused="false"]');
      assert.is(contextOf(await stack.postHook(s.toolCall[0]!)), 'three\n\none');
      await page.waitForSelector('#detail [data-field="queue"]:has-text("empty")');
      const fits = await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
      assert.ok(fits, 'the queue fits the width');
    } finally {
      await browser.close();
    }
  });
}

test.run();
