// Web Push to paired devices against a local push service that checks the VAPID JWT and decrypts
// each push with the subscription's keys: one push per waiting request, `urgency: high`, a payload
// that says only that something waits and where to look (no title, tool, command or directory,
// though the console's own token sees them), and a subscription the service answers 410 removed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsoleHandle } from '../../src/console/start.js';
import { heldPermission, startTestStack, type TestStack } from '../cli/support.js';
import { asDevice, pairDevice, phoneConsole } from '../support/phone.js';
import { startPushService, type PushService } from '../support/web-push-service.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-web-push-'));
const env = { ...process.env, HOME: dir, AEP_STATE_DIR: dir };
let stack: TestStack;
let svc: PushService;
let konsole: ConsoleHandle;
const warnings: string[] = [];
const warned: ((m: string) => void)[] = [];

test.before(async () => {
  stack = await startTestStack();
  svc = await startPushService();
  konsole = await phoneConsole(stack, env, {
    phone: { env, pushAgent: svc.agent },
    warn: (m) => {
      warnings.push(m);
      for (const w of warned) w(m);
    },
  });
});

test.after(async () => {
  await konsole?.close();
  await svc?.close();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('one encrypted push per waiting request, urgency high, content-free; a 410 removes the subscription', async () => {
  const phone = await pairDevice(konsole, 'answer', 'anna-phone');
  const gone = await pairDevice(konsole, 'watch', 'old-tablet');
  const key = await asDevice(konsole, phone, 'push-key');
  const vapid = JSON.parse(readFileSync(join(dir, 'vapid.json'), 'utf8')) as { publicKey: string };
  assert.is(key.body['key'], vapid.publicKey, 'the page subscribes with the install VAPID key');
  assert.is(statSync(join(dir, 'vapid.json')).mode & 0o777, 0o600);
  assert.is((await asDevice(konsole, phone, 'api/subscribe', svc.subscribe('a'))).status, 200);
  assert.is((await asDevice(konsole, gone, 'api/subscribe', svc.subscribe('b'))).status, 200);
  const bad = await asDevice(konsole, phone, 'api/subscribe', { endpoint: 'http://plain.example/x', keys: {} });
  assert.is(bad.body['code'], 'push-subscription-invalid');
  svc.status['b'] = 410;
  const removed = new Promise<string>((resolve) => warned.push((m) => m.includes('old-tablet') && resolve(m)));

  const s = await stack.openSession();
  const held = await heldPermission(stack, s);
  const push = await svc.next((p) => p.id === 'a');
  assert.ok(push.vapidOk, 'the VAPID JWT verifies: ES256 by k, audience the push origin, expiry within a day');
  assert.is(push.vapidKey, vapid.publicKey);
  assert.is(push.urgency, 'high');
  assert.equal(JSON.parse(push.text), {
    kind: 'waiting',
    path: `/device/#session=${encodeURIComponent(s.session)}&request=${encodeURIComponent(held.request)}`,
  });
  // The console's own stream has the tool and its command (D35); the push has none of it.
  const asked = stack.seen.find((e) => e.id === held.request)!;
  assert.match(JSON.stringify(asked.data), 'touch new-file.txt');
  for (const word of ['Bash', 'touch', 'new-file', 'permission', s.cwd, 'claude']) assert.not.match(push.text, word);

  assert.match(await removed, "old-tablet's subscription is gone at its push service (410); removed");
  assert.equal(
    konsole.phone.store.subscriptions().map((x) => x.name),
    ['anna-phone'],
  );

  // The request is answered from the phone's own page, then a second request: one push each.
  const answered = await asDevice(konsole, phone, 'api/respond', {
    session: s.session,
    request: held.request,
    option: 'allow',
  });
  assert.is(answered.body['outcome'], 'answered');
  await held.reply;
  const second = await heldPermission(stack, await stack.openSession());
  await svc.next((p) => p.id === 'a' && p.text.includes(encodeURIComponent(second.request)));
  assert.is(svc.received.filter((p) => p.id === 'a').length, 2, 'one push per waiting request');
  assert.is(svc.received.filter((p) => p.id === 'b').length, 1, 'nothing more to the removed subscription');
  assert.is(warnings.filter((w) => w.includes('could not notify')).length, 0, warnings.join('\n'));
});

test.run();
