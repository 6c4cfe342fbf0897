// The console against a foreign page in headless Chromium, on a real relay and Claude Code adapter:
// a page on another loopback port that frames the console gets no console (Chrome refuses the frame:
// CSP frame-ancestors 'none', X-Frame-Options DENY), so it cannot trick a click on Send or Allow;
// and the console opened as localhost:PORT runs its script under the CSP and can send.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { launchChromium, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let konsole: ConsoleHandle;
let browser: Browser;
let foreign: Server;
let foreignUrl = '';
/** What Chrome said about refused frames and blocked script, per page. */
const consoleLines: string[] = [];

test.before(async () => {
  stack = await startTestStack();
  konsole = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await konsole.follower.ready;
  browser = await launchChromium({ width: 1280, height: 860 });
  browser.page.on('console', (m) => consoleLines.push(m.text()));
  // A page on another loopback port: it frames the console, and (as a control) a page of its own.
  foreign = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    if (req.url === '/own') return res.end('<!doctype html><p id="own">a frame that may render</p>');
    res.end(`<!doctype html><title>foreign</title>
<iframe id="console" src="${konsole.url}" width="900" height="600"></iframe>
<iframe id="own" src="/own" width="300" height="100"></iframe>`);
  });
  await new Promise<void>((r) => foreign.listen(0, '127.0.0.1', () => r()));
  foreignUrl = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}/`;
});

test.after(async () => {
  await browser?.close();
  foreign?.closeAllConnections();
  await new Promise<void>((r) => (foreign ? foreign.close(() => r()) : r()));
  await konsole?.close();
  await stack?.stop();
});

test('a foreign page on another loopback port that frames the console gets no console in the frame', async () => {
  const page = browser.page;
  const s = await stack.openSession();
  await page.goto(foreignUrl);
  // The control frame renders: frames as such work on this page.
  const own = page.frameLocator('#own');
  await own.locator('#own').waitFor();
  const framed = page.frames().find((f) => f !== page.mainFrame() && !f.url().endsWith('/own'));
  assert.ok(framed, 'the console frame exists');
  await page.waitForTimeout(500);
  // Chrome refused it: no console document, so no session button to click and no Send.
  assert.is(await framed!.$('#relay'), null, `the console rendered inside ${framed!.url()}`);
  assert.is(await framed!.$(`nav [data-session="${s.session}"]`), null);
  assert.is(await framed!.$('#instruct-send'), null);
  assert.ok(
    consoleLines.some((l) => /frame-ancestors|X-Frame-Options/i.test(l)),
    consoleLines.join('\n'),
  );
});

test('opened as localhost:PORT the console runs under its CSP and sends an instruction that is accepted', async () => {
  const page = browser.page;
  consoleLines.length = 0;
  const local = konsole.url.replace('//127.0.0.1:', '//localhost:');
  assert.match(local, /^http:\/\/localhost:\d+\//);
  const res = await page.goto(local);
  assert.match(res!.headers()['content-security-policy']!, /frame-ancestors 'none'/);
  await page.waitForSelector('#relay[data-connected="true"]');
  const s = await stack.openSession();
  await page.click(`nav [data-session="${s.session}"]`);
  await page.waitForSelector('#detail [data-field="state"][data-state="idle"]');
  await page.fill('#instruct-text', 'Sent from the console opened as localhost.');
  await page.click('#instruct-send');
  await page.waitForSelector('#instruct-status[data-status="pending"]');
  assert.match((await page.textContent('#instruct-status'))!, /^accepted at /);
  const reply = await stack.postHook(s.toolCall[0]!);
  assert.equal(
    (reply.body as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext,
    'Sent from the console opened as localhost.',
  );
  await page.waitForSelector('#instruct-status[data-status="delivered"]');
  // The page's script and style ran under the policy: Chrome blocked nothing of its own.
  assert.not.ok(
    consoleLines.some((l) => /Content Security Policy/i.test(l)),
    consoleLines.join('\n'),
  );
});

test.run();
