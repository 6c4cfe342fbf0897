// D48 and D46 on the console's page, in headless Chromium: a held `git push --force` says it is
// risky and why; the page's Allow is taken as the first of two and the request says it needs a
// second approver and who gave the first; a second identity's allow releases the hook, and the
// session lists who decided it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { allowAs } from '../support/second-key.js';
import { permissionRequest, startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let konsole: ConsoleHandle;
let browser: Browser;

test.before(async () => {
  stack = await startTestStack();
  konsole = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await konsole.follower.ready;
  browser = await launchChromium({ width: 1200, height: 900 });
});

test.after(async () => {
  await browser?.close();
  await konsole?.close();
  await stack?.stop();
});

test("a risky request on the page: Allow is the first of two; a second identity's allow releases it", async () => {
  const s = await stack.openSession();
  const hook = permissionRequest(s);
  const reply = stack.postHook({ ...hook, tool_input: { command: 'git push --force origin main' } });
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  const page = browser.page;
  await page.goto(`${konsole.url}#session=${s.session}&request=${requested.id}`);
  const box = `#detail [data-request="${requested.id}"]`;
  await page.waitForSelector(`${box} [data-field="risky"]`);
  assert.match((await page.textContent(`${box} [data-field="risky"]`))!, 'Risky (force-push');
  assert.match((await page.textContent(`${box} [data-field="risky"]`))!, 'An allow needs two approvers');

  await page.click(`${box} button[data-answer="allow"]`);
  await page.waitForFunction(
    (sel) => document.querySelector(sel)?.textContent?.includes('Needs a second approver') === true,
    `${box} [data-field="risky"]`,
  );
  assert.match(
    (await page.textContent(`${box} [data-field="risky"]`))!,
    'the first allow is by aep-steer-console via console',
  );
  assert.not.ok(
    stack.seen.some((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    'still held after one allow',
  );

  assert.is(await allowAs(stack, 'bob', s.session, requested.id), 'answered');
  const r = await reply;
  assert.is(r.status, 200);
  assert.match(JSON.stringify(r.body), 'allow');
  const decided = `[data-decided="${requested.id}"]`;
  await page.waitForSelector(decided);
  assert.match(
    (await page.textContent(decided))!,
    'answered by bob via cli, first allow by aep-steer-console via console',
  );
});

test.run();
