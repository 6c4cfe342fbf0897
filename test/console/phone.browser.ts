// A phone paired with the console, in headless Chromium at a phone's size: the pairing page
// exchanges the code for a device token (a cookie the page never shows), the device page then
// answers a held request; its service worker registers and its manifest is valid; once revoked,
// its next answer is refused and its open stream closes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, type Browser } from '../support/browser.js';
import type { ConsoleHandle } from '../../src/console/start.js';
import { heldPermission, startTestStack, type TestStack } from '../cli/support.js';
import { onLocal, phoneConsole } from '../support/phone.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-phone-browser-'));
let stack: TestStack;
let konsole: ConsoleHandle;
let browser: Browser;
let page: Page;

test.before(async () => {
  stack = await startTestStack();
  konsole = await phoneConsole(stack, { ...process.env, AEP_STATE_DIR: dir });
  browser = await launchChromium({ width: 390, height: 844 });
  page = browser.page;
});

test.after(async () => {
  await browser?.close();
  await konsole?.close();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('the pairing page exchanges the code; the device page answers a held request with its token', async () => {
  const { url } = konsole.phone.pair('answer', 'anna-phone');
  // The phone would open the tailnet name; this browser reaches the same console on its local address.
  await page.goto(onLocal(konsole, url));
  assert.is(await page.textContent('[data-field="title"]'), 'Pair this device');
  assert.is(await page.inputValue('#name'), 'anna-phone');
  await page.fill('#name', 'pixel-7');
  await page.click('button[type="submit"]');
  await page.waitForURL(/\/device\/$/);
  await page.waitForSelector('#relay[data-connected="true"]');
  assert.equal(
    konsole.phone.store.list().map((d) => [d.name, d.rights]),
    [['pixel-7', 'answer']],
  );
  const token = (await browser.context.cookies()).find((c) => c.name === 'aep_device')!;
  assert.ok(token.httpOnly, 'no script on the page can read the token');
  assert.not.match(await page.content(), token.value, 'the token is never shown');

  const s = await stack.openSession();
  const held = await heldPermission(stack, s);
  // As a tap on the push opens it: the device page at the request.
  await page.goto(onLocal(konsole, `https://x/device/#session=${s.session}&request=${held.request}`));
  await page.reload();
  const box = `#detail [data-request="${held.request}"]`;
  await page.waitForSelector(box);
  await page.click(`${box} button[data-answer="allow"]`);
  const hook = await held.reply;
  assert.equal(hook.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
});

test('the service worker registers and caches nothing; the manifest is valid and its icons load', async () => {
  await page.waitForSelector('html[data-sw="registered"]');
  const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
  assert.match(scope, /\/device\/$/);
  assert.equal(await page.evaluate(async () => caches.keys()), [], 'no Cache Storage');
  const manifest = await page.evaluate(async () => {
    const href = document.querySelector('link[rel="manifest"]')!.getAttribute('href')!;
    const r = await fetch(href, { credentials: 'omit' });
    return { type: r.headers.get('content-type'), body: (await r.json()) as Record<string, unknown>, base: r.url };
  });
  assert.is(manifest.type, 'application/manifest+json');
  assert.is(manifest.body['display'], 'standalone');
  assert.is(manifest.body['start_url'], './');
  assert.ok(typeof manifest.body['name'] === 'string');
  const icons = manifest.body['icons'] as { src: string; sizes: string; type: string }[];
  assert.equal(
    icons.map((i) => i.sizes),
    ['192x192', '512x512'],
  );
  for (const icon of icons) {
    const loaded = await page.evaluate(async (src) => {
      const img = new Image();
      img.src = src;
      await img.decode();
      return img.naturalWidth;
    }, new URL(icon.src, manifest.base).toString());
    assert.is(`${loaded}x${loaded}`, icon.sizes);
  }
  assert.ok(await page.isVisible('#push-on'), 'the page offers to turn notifications on');
});

test('revoked: the next answer is refused and the open stream closes', async () => {
  const s = await stack.openSession();
  const held = await heldPermission(stack, s);
  // As a tap on the push opens it: the device page at the request.
  await page.goto(onLocal(konsole, `https://x/device/#session=${s.session}&request=${held.request}`));
  await page.reload();
  const box = `#detail [data-request="${held.request}"]`;
  await page.waitForSelector(box);
  await page.waitForSelector('#relay[data-connected="true"]');
  const answered = page.waitForResponse((r) => r.url().endsWith('/device/api/respond'));
  assert.ok(konsole.phone.store.revoke('pixel-7'));
  // The open stream ends: the page shows the console unreachable.
  await page.waitForSelector('#relay[data-connected="false"]', { timeout: 2000 });
  await page.click(`${box} button[data-answer="deny"]`);
  const refused = await answered;
  assert.is(refused.status(), 401);
  assert.is(((await refused.json()) as { code: string }).code, 'device-unknown');
  assert.not.ok(
    stack.seen.some((e) => e.type === 'control.attention.respond' && e.subject === held.request),
    'nothing reached the relay',
  );
  assert.is((await page.request.get(onLocal(konsole, 'https://x/device/state'))).status(), 401);
});

test.run();
