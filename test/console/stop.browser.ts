// The console's Stop in headless Chromium on a real relay (D33): a session whose claimant declares
// control.cancel has a Stop button that sends control.cancel {scope:"run"} through the console's
// own action and shows the outcome (settled on run.cancelled, or the adapter's refusal); a
// session that takes no cancel has none, and says why; a session its adapter could stop through a
// lane that does not reach it (a person's `claude` in a terminal) shows Stop disabled with how to
// get one. The page runs under its hash-based CSP throughout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { startTestTarget, type TestTarget } from '../support/relay-target.js';
import { startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let target: TestTarget;
/** A Claude Code adapter whose stream-json lane can stop turns: it declares control.cancel for every session. */
let claude: TestTarget;
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
  claude = await startTestTarget({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'claude-code',
    accepts: ['x.claude-code.control.instruct', 'control.cancel'],
    sessions: ['cc-terminal', 'cc-headless'],
    running: new Map([['cc-headless', 'prompt-9']]),
  });
  // As the adapter describes them: a person's `claude` in a terminal (hooks only), and a headless run on the lane.
  for (const [session, lanes] of [
    ['cc-terminal', ['hook']],
    ['cc-headless', ['hook', 'stream-json']],
  ] as const) {
    claude.link.send(
      claude.emitter(session).emit({ type: 'x.claude-code.session.described', data: { lanes: [...lanes] } }),
    );
  }
  await stack.waitFor((e) => e.session === 'cc-headless' && e.type === 'x.claude-code.session.described');
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
  await claude?.close();
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
  assert.equal(cmd.data, { scope: 'run', surface: 'console' });
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
    /^Not cancelled \(no-active-run\): no active run to cancel; no turn is running, so there is nothing to stop/,
  );
  assert.is(target.received.filter((c) => c.type === 'control.cancel').length, 2);
  assert.equal(pageErrors, [], 'no script error or CSP violation on the page');
});

test('a session whose claimant takes no cancel has no Stop button, and says why', async () => {
  const s = await stack.openSession();
  await page.click(`nav [data-session="${s.session}"]`);
  await page.waitForSelector(`#detail [data-field="title"]:has-text("${s.session}")`);
  await page.waitForSelector('#detail #stop-why[data-code="unsupported"]');
  assert.is(await page.$('#detail #stop'), null);
  assert.match(
    (await page.textContent('#detail #stop-why'))!,
    /^Its adapter takes no cancel; to be able to stop turns of claude-code, /,
  );
  assert.equal(pageErrors, []);
});

test('a session on the hook lane only shows Stop disabled, saying why and how to get a lane that can; one on the lane can stop', async () => {
  await page.click('nav [data-session="cc-terminal"]');
  await page.waitForSelector('#detail #stop-why[data-code="lane-unreached"]');
  assert.is(
    await page.textContent('#detail #stop-why'),
    'This session runs on the hook lane only, which cannot stop a turn; to be able to stop its turns, run it headless with `aep-steer run claude -p`.',
  );
  assert.ok(await page.isDisabled('#detail #stop'), 'the button is there, and disabled');
  assert.is(await page.getAttribute('#detail #stop', 'aria-describedby'), 'stop-why');
  await page.click('#detail #stop', { force: true });
  assert.not.ok(
    claude.received.some((c) => c.type === 'control.cancel'),
    'nothing is sent from a disabled Stop',
  );

  await page.click('nav [data-session="cc-headless"]');
  await page.waitForSelector('#detail [data-field="title"]:has-text("cc-headless")');
  await page.waitForSelector('#detail #stop:not([disabled])');
  assert.is(await page.$('#detail #stop-why'), null);
  await page.click('#detail #stop');
  await page.waitForSelector('#stop-status[data-status="delivered"]');
  const cmd = claude.received.find((c) => c.type === 'control.cancel' && c.session === 'cc-headless');
  assert.ok(cmd, 'the headless session took the cancel');
  assert.equal(pageErrors, []);
});

test.run();
