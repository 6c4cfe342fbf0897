// The console's "Start now" in headless Chromium on a real relay (D43), at a desk's size and a
// phone's: an idle session its adapter describes startable offers it, one on the hook lane alone
// does not; pressing it sends the instruction with `idle: "start"` through the console's own
// action, and the page shows the outcome once the stream settles it (delivered, `started`, with
// the turn's id). While a turn runs it is not offered: "idle" says only that nothing waits. The
// page runs under its hash-based CSP throughout.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { launchChromium, SHOTS, type Browser } from '../support/browser.js';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { startTestTarget, type TestTarget } from '../support/relay-target.js';
import { startTestStack, type TestStack } from '../cli/support.js';

const INSTRUCT = 'x.codex.control.instruct';
let stack: TestStack;
let codex: TestTarget;
let konsole: ConsoleHandle;

test.before(async () => {
  stack = await startTestStack();
  codex = await startTestTarget({ url: stack.relayUrl, token: stack.token, agent: 'codex', accepts: [INSTRUCT] });
  // As the adapter describes them: sessions its app-server lane reaches (startable) and a plain
  // `codex exec` one (the hook lane only).
  for (const [session, lanes, startable] of [
    ['cx-desk', ['hook', 'app-server'], true],
    ['cx-phone', ['hook', 'app-server'], true],
    ['cx-plain', ['hook'], false],
    ['cx-busy', ['hook', 'app-server'], true],
  ] as const) {
    codex.claim(session);
    codex.link.send(
      codex.emitter(session).emit({ type: 'x.codex.session.described', data: { lanes: [...lanes], startable } }),
    );
  }
  await stack.waitFor((e) => e.session === 'cx-plain' && e.type === 'x.codex.session.described');
  konsole = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await konsole.follower.ready;
});

test.after(async () => {
  await konsole?.close();
  await codex?.close();
  await stack?.stop();
});

/** A page at this size, with every script error and CSP violation kept. */
async function pageAt(width: number, height: number): Promise<{ browser: Browser; page: Page; errors: string[] }> {
  const browser = await launchChromium({ width, height });
  const errors: string[] = [];
  browser.page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  browser.page.on('pageerror', (e) => errors.push(e.message));
  await browser.page.goto(konsole.url);
  await browser.page.waitForSelector('#relay[data-connected="true"]');
  return { browser, page: browser.page, errors };
}

const open = async (page: Page, session: string) => {
  await page.click(`nav [data-session="${session}"]`);
  await page.waitForSelector(`#detail [data-field="title"]:has-text("${session}")`);
  await page.waitForSelector('#detail #instruct-send');
};

for (const [width, height, session] of [
  [1280, 900, 'cx-desk'],
  [390, 844, 'cx-phone'],
] as const) {
  test(`${width}x${height}: Start now on an idle startable session only; pressed, it sends idle start and shows the started turn`, async () => {
    const { browser, page, errors } = await pageAt(width, height);
    try {
      await open(page, 'cx-plain');
      assert.is(await page.$('#detail #instruct-start'), null, 'a session no lane can start offers no Start now');

      await open(page, session);
      await page.waitForSelector('#detail #instruct-start');
      assert.ok(await page.isVisible('#detail #instruct-start'));
      const text = `Write the release notes (${session})`;
      await page.fill('#instruct-text', text);
      await page.click('#detail #instruct-start');
      // The adapter's accept, on the relay's stream, means the command reached it.
      await stack.waitFor((e) => e.type === 'control.accepted' && e.session === session);
      const cmd = codex.received.find((c) => c.type === INSTRUCT && c.session === session)!;
      assert.ok(cmd, 'the adapter received the instruction');
      assert.equal(cmd.data, { text, idle: 'start' });
      await page.waitForSelector(`#instruct-status[data-command="${cmd.id}"][data-status="pending"]`);

      // The adapter's receipt: the turn it began, cause-linked to the command.
      codex.link.send(
        codex.emitter(session).emit({
          type: 'x.codex.instruction.delivered',
          cause: cmd.id,
          data: { queued_ms: 4, lane: 'app-server', ref: `turn-${session}`, started: true },
        }),
      );
      await page.waitForSelector(`#instruct-status[data-command="${cmd.id}"][data-status="delivered"]`);
      assert.match((await page.textContent('#instruct-status'))!, `started a turn (turn-${session}) at `);
      assert.ok(
        await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth),
        `no horizontal scroll at ${width} px`,
      );
      await page.screenshot({ path: join(SHOTS, `console-start-${width}.png`), fullPage: true });
      assert.equal(errors, [], 'no script error or CSP violation on the page');
    } finally {
      await browser.close();
    }
  });
}

test('Start now is hidden while a turn runs in a startable session (its state still idle) and back once the turn ends', async () => {
  const { browser, page, errors } = await pageAt(1280, 900);
  try {
    await open(page, 'cx-busy');
    await page.waitForSelector('#detail #instruct-start');
    const emit = (type: string, data: Record<string, unknown>) =>
      codex.link.send(codex.emitter('cx-busy').emit({ type, data }));
    emit('run.started', { trigger: 'user' });
    await page.waitForSelector('#detail #instruct-start', { state: 'detached' });
    // Nothing waits: the session is idle all the same, and the send box is still there.
    assert.ok(await page.isVisible('#detail #instruct-send'), 'the send box stays');
    emit('run.finished', { duration_ms: 5 });
    await page.waitForSelector('#detail #instruct-start');
    assert.equal(errors, [], 'no script error or CSP violation on the page');
  } finally {
    await browser.close();
  }
});

test.run();
