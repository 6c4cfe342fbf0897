// D46 and D48 for a paired phone: an answer from a device names it as `decided_by.device`, the
// name taken from the token the console authenticated, never from what the request says; and a
// device speaks with its console's relay identity, so its allow of a risky request is only the
// first of two: neither another paired device nor the console's own page can be the second key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsoleHandle } from '../../src/console/start.js';
import { allowAs } from '../support/second-key.js';
import { heldPermission, permissionRequest, startTestStack, type TestStack } from '../cli/support.js';
import { asDevice, pairDevice, phoneConsole } from '../support/phone.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-device-decided-'));
let stack: TestStack;
let konsole: ConsoleHandle;
/** The console's own relay identity: every answer it forwards is sent as this sender. */
const CONSOLE = 'aep-steer-console';

test.before(async () => {
  stack = await startTestStack();
  konsole = await phoneConsole(stack, { ...process.env, HOME: dir, AEP_STATE_DIR: dir });
});

test.after(async () => {
  await konsole?.close();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const resolvedOf = (request: string) => stack.waitFor((e) => e.type === 'attention.resolved' && e.subject === request);

test('a paired device answers a held request: decided_by names it; a name, surface or identity in the body is ignored', async () => {
  const phone = await pairDevice(konsole, 'answer', 'pixel-7');
  await pairDevice(konsole, 'answer', 'other-phone');
  const s = await stack.openSession();
  const held = await heldPermission(stack, s);
  const answered = await asDevice(konsole, phone, 'api/respond', {
    session: s.session,
    request: held.request,
    option: 'allow',
    // A device trying to speak as another device, another surface or another person.
    device: 'other-phone',
    surface: 'link',
    identity: 'mallory',
  });
  assert.is(answered.status, 200, JSON.stringify(answered.body));
  assert.is(answered.body['outcome'], 'answered');
  assert.match(JSON.stringify((await held.reply).body), '"behavior":"allow"');
  const resolved = await resolvedOf(held.request);
  assert.equal(resolved.data?.['decided_by'], { identity: CONSOLE, surface: 'console', device: 'pixel-7' });
  const respond = stack.seen.find((e) => e.type === 'control.attention.respond' && e.subject === held.request);
  assert.equal(
    [respond?.agent, respond?.data?.['surface'], respond?.data?.['device']],
    [CONSOLE, 'console', 'pixel-7'],
    'the command carries the authenticated device, as the console forwarded it',
  );
});

test("a device's allow of a risky request is the first key only; another device or the console page is the same identity", async () => {
  const phone = await pairDevice(konsole, 'answer', 'anna-phone');
  const tablet = await pairDevice(konsole, 'answer', 'anna-tablet');
  const s = await stack.openSession();
  const reply = stack.postHook({ ...permissionRequest(s), tool_input: { command: 'git push --force origin main' } });
  const requested = await stack.waitFor((e) => e.session === s.session && e.type === 'attention.requested');
  assert.is((requested.data?.['risky'] as { rule?: string } | undefined)?.rule, 'force-push');
  const ask = { session: s.session, request: requested.id, option: 'allow' };

  const first = await asDevice(konsole, phone, 'api/respond', ask);
  assert.is(first.status, 200, JSON.stringify(first.body));
  assert.is(first.body['outcome'], 'pending-second', JSON.stringify(first.body));
  const again = await asDevice(konsole, tablet, 'api/respond', ask);
  assert.is(again.body['code'] ?? again.body['rule'], 'second-approver-same', JSON.stringify(again.body));
  // The console's own page (its secret URL, no device) sends as the same relay identity.
  const page = await fetch(new URL('api/respond', konsole.localUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ask),
  });
  assert.match(await page.text(), 'second-approver-same');
  assert.not.ok(
    stack.seen.some((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    'still held: one identity gave both allows',
  );

  assert.is(await allowAs(stack, 'bob', s.session, requested.id), 'answered');
  assert.match(JSON.stringify((await reply).body), 'allow');
  const resolved = await resolvedOf(requested.id);
  assert.equal(resolved.data?.['decided_by'], { identity: 'bob', surface: 'cli' });
  assert.equal(resolved.data?.['first_by'], { identity: CONSOLE, surface: 'console', device: 'anna-phone' });
});

test.run();
