// The device's service worker, run in a VM with the worker globals it uses: a push shows the same
// fixed words whatever the payload holds (a push service that altered it could not put text on
// the phone), and tapping the notification opens the request's path on the console's own origin;
// a path naming another origin opens the console instead.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runInNewContext } from 'node:vm';
import { SERVICE_WORKER } from '../../src/console/device-page.js';

const SCOPE = 'https://laptop.tail1234.ts.net/device/';

function worker() {
  const handlers = new Map<string, (e: unknown) => void>();
  const shown: { title: string; options: { body: string; data: { path: string } } }[] = [];
  const opened: string[] = [];
  let waited: Promise<unknown> = Promise.resolve();
  const self = {
    location: new URL(`${SCOPE}sw.js`),
    addEventListener: (type: string, fn: (e: unknown) => void) => handlers.set(type, fn),
    skipWaiting: () => {},
    registration: {
      scope: SCOPE,
      showNotification: async (title: string, options: (typeof shown)[number]['options']) => {
        shown.push({ title, options });
      },
    },
    clients: {
      claim: async () => {},
      openWindow: async (url: string) => {
        opened.push(url);
      },
    },
  };
  runInNewContext(SERVICE_WORKER, { self, URL });
  const fire = async (type: string, e: Record<string, unknown>): Promise<void> => {
    handlers.get(type)!({
      ...e,
      waitUntil: (p: Promise<unknown>) => {
        waited = p;
      },
    });
    await waited;
  };
  const push = (payload: unknown) =>
    fire('push', { data: { json: () => (typeof payload === 'string' ? JSON.parse(payload) : payload) } });
  const tap = (i: number) =>
    fire('notificationclick', { notification: { data: shown[i]!.options.data, close: () => {} } });
  return { shown, opened, push, tap, handlers };
}

test('a push shows fixed words only; a tap opens the request on the console', async () => {
  const w = worker();
  assert.ok(!w.handlers.has('fetch'), 'no fetch handler: nothing is cached or served from a cache');
  const path = '/device/#session=s-1&request=r-9';
  await w.push({ kind: 'waiting', path, title: 'rm -rf / now', body: 'Bash: deploy' });
  assert.equal(w.shown[0]!.title, 'aep-steer');
  assert.is(w.shown[0]!.options.body, 'Something waits for you. Tap to open the console.');
  assert.not.match(JSON.stringify(w.shown), /rm -rf|Bash|deploy/);
  await w.tap(0);
  assert.equal(w.opened, ['https://laptop.tail1234.ts.net/device/#session=s-1&request=r-9']);
});

test('a path naming another origin, or none, opens the console itself', async () => {
  const w = worker();
  await w.push({ kind: 'waiting', path: 'https://evil.example/phish' });
  await w.push({ kind: 'waiting' });
  await w.push('not json at all');
  await w.tap(0);
  await w.tap(1);
  assert.equal(w.opened, [SCOPE, SCOPE]);
  assert.is(w.shown.length, 3, 'a payload it cannot read still says something waits');
});

test.run();
