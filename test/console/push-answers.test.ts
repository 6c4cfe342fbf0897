// What the push service answers decides what becomes of a subscription: 404 and 410 (it no longer
// knows it) remove it, a 500 is warned about and kept for the next request. Each push is
// `urgency: high` and its payload carries the path only, though the request it tells of has a
// title, a tool and a command at capture full.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import webpush from 'web-push';
import type { AepEvent } from '../../src/protocol/index.js';
import { WebPusher, type WebPushTarget } from '../../src/notify/web-push.js';
import { startPushService, type PushService } from '../support/web-push-service.js';

let svc: PushService;
test.before(async () => {
  svc = await startPushService();
});
test.after(async () => {
  await svc?.close();
});

const requested = (id: string): AepEvent =>
  ({
    aep: '0.1',
    id,
    type: 'attention.requested',
    time: new Date().toISOString(),
    source: 'aep://test/adapter',
    agent: 'claude-code',
    session: 's-push',
    capture: 'full',
    data: {
      kind: 'permission',
      title: 'Deploy the payments service',
      tool: 'Bash',
      input: { command: 'kubectl apply -f secret-prod.yaml' },
    },
  }) as unknown as AepEvent;

test('404 and 410 remove the subscription, a 500 keeps it; every push is urgency high and names only the path', async () => {
  const made = webpush.generateVAPIDKeys();
  const vapid = { ...made, subject: 'mailto:test@localhost' };
  let targets: WebPushTarget[] = ['ok', 'gone404', 'gone410', 'busy'].map((name) => ({
    name,
    sub: svc.subscribe(name),
  }));
  svc.status['gone404'] = 404;
  svc.status['gone410'] = 410;
  svc.status['busy'] = 500;
  const dropped: string[] = [];
  const warnings: string[] = [];
  let settle: () => void = () => {};
  const settled = new Promise<void>((resolve) => {
    settle = resolve;
  });
  const pusher = new WebPusher({
    vapid: () => vapid,
    subscriptions: () => targets,
    drop: (name, endpoint) => {
      dropped.push(name);
      targets = targets.filter((t) => t.sub.endpoint !== endpoint);
    },
    path: (session, request) => `/device/#session=${session}&request=${request}`,
    warn: (m) => {
      warnings.push(m);
      if (warnings.length === 3) settle();
    },
    graceMs: 0,
    agent: svc.agent,
  });
  pusher.arm();
  pusher.observe(requested('r-1'));
  await settled;
  assert.equal(dropped.sort(), ['gone404', 'gone410']);
  assert.ok(warnings.some((w) => w.includes("gone404's subscription is gone at its push service (404); removed")));
  assert.ok(warnings.some((w) => w.includes('could not notify busy (500); the console goes on')));

  pusher.observe(requested('r-2'));
  await svc.next((p) => p.id === 'ok' && p.text.includes('r-2'));
  await svc.next((p) => p.id === 'busy' && p.text.includes('r-2'));
  await pusher.close();
  assert.equal(
    svc.received
      .filter((p) => p.text.includes('r-2'))
      .map((p) => p.id)
      .sort(),
    ['busy', 'ok'],
    'the removed subscriptions are not pushed again; the one that failed once is',
  );
  for (const p of svc.received) {
    assert.is(p.urgency, 'high');
    assert.ok(p.vapidOk);
    assert.equal(Object.keys(JSON.parse(p.text)).sort(), ['kind', 'path']);
    for (const word of ['Deploy', 'payments', 'Bash', 'kubectl', 'secret-prod', 'permission'])
      assert.not.match(p.text, word);
  }
});

test.run();
