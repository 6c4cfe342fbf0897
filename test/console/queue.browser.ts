// The console's queue in headless Chromium on a real relay and Claude Code adapter (D32, D44): two
// waiting instructions shown live, Withdraw takes one back (the agent never reads it), Edit
// changes the other's text in place (same id, version 2), and an edit of one already delivered is
// refused already-delivered with nothing changed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { startTestStack, type TestStack } from '../cli/support.js';

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

const contextOf = (reply: { body: unknown }) =>
  (reply.body as { hookSpecificOutput?: { additionalContext?: string } }).hookSpecificOutput?.additionalContext;
const queueIds = (p: Page) =>
  p.$$eval('#detail [data-field="queue"] [data-instruction]', (ls) =>
    ls.map((l) => l.getAttribute('data-instruction')!),
  );

async function sendFromPage(text: string): Promise<void> {
  await page.fill('#instruct-text', text);
  await page.click('#instruct-send');
  await page.waitForSelector(`#detail [data-field="queue"] li:has-text("${text}")`);
}

/** Resolves once the queue's status line starts with `prefix` (the action's answer arrived). */
const statusSays = (prefix: string) =>
  page.waitForFunction((p) => (document.querySelector('#queue-status')?.textContent ?? '').startsWith(p), prefix);

test('the queue shows two waiting instructions; Withdraw removes one, Edit replaces the other; the agent reads only the edit', async () => {
  await page.goto(konsole.url);
  await page.waitForSelector('#relay[data-connected="true"]');
  const s = await stack.openSession();
  await page.click(`nav [data-session="${s.session}"]`);
  await page.waitForSelector('#detail [data-field="state"][data-state="idle"]');
  await sendFromPage('Drop the old fixtures.');
  await sendFromPage('Rename the module.');
  const [first, second] = await queueIds(page);
  assert.ok(first && second && first !== second, 'two waiting instructions, each with its id');

  await page.click(`#detail [data-withdraw="${first}"]`);
  await page.waitForSelector(`#detail [data-field="queue"] [data-instruction="${first}"]`, { state: 'detached' });
  // The stream can remove the entry before the action's own answer is shown: wait for that answer.
  await statusSays('Withdrawn:');
  assert.match(
    (await page.textContent('#queue-status'))!,
    `Withdrawn: instruction ${first} will never reach session ${s.session}.`,
  );
  const dropped = await stack.waitFor((e) => e.type === 'x.claude-code.instruction.dropped' && e.subject === first);
  assert.is(dropped.data?.['reason'], 'withdrawn');

  // D44: Edit in place keeps the id and the place; the entry shows the new text once settled.
  await page.click(`#detail [data-edit="${second}"]`);
  await page.fill(`#detail [data-edit-text="${second}"]`, 'Rename the module to steering-core.');
  await page.click(`#detail [data-save="${second}"]`);
  await page.waitForSelector(
    `#detail [data-instruction="${second}"][data-version="2"]:has-text("Rename the module to steering-core.")`,
  );
  await statusSays('Edited in place:');
  assert.equal(await queueIds(page), [second], 'the same instruction, in the same place');
  const edited = await stack.waitFor((e) => e.type === 'x.claude-code.instruction.edited' && e.subject === second);
  assert.is(edited.data?.['version'], 2);

  // The agent's next moment carries only the edited text, and the delivery names its version.
  assert.is(contextOf(await stack.postHook(s.toolCall[0]!)), 'Rename the module to steering-core.');
  const delivered = await stack.waitFor((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === second);
  assert.is(delivered.data?.['version'], 2);
  await page.waitForSelector('#detail [data-field="queue"]:has-text("empty")');
  assert.not.ok(stack.seen.some((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === first));

  // An edit of one the agent already has is refused already-delivered, and nothing changes.
  const late = await page.evaluate(
    async (a) => {
      const r = await fetch('api/edit', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(a),
      });
      return (await r.json()) as { message: string; error: boolean; code: string };
    },
    { session: s.session, instruction: second, text: 'too late' },
  );
  assert.equal([late.error, late.code], [true, 'already-delivered']);
  assert.match(late.message, /^Not changed \(already-delivered\): /);
  assert.is(
    stack.seen.filter((e) => e.type === 'x.claude-code.instruction.edited').length,
    1,
    'no second edit took effect',
  );
});

test.run();
