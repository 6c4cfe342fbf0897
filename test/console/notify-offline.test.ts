// A target that opted in to `offline` hears when a live session's adapter goes away (its relay
// link closes, the roster drops the claim); one that did not hears nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { parseTarget } from '../../src/notify/targets.js';
import { startTestStack, type TestStack } from '../cli/support.js';
import { startPushServer, type PushServer } from '../support/push-server.js';

let stack: TestStack;
let push: PushServer;
let konsole: ConsoleHandle;

test.before(async () => {
  stack = await startTestStack();
  push = await startPushServer();
  konsole = await startConsole({
    relay: stack.relayUrl,
    token: stack.token,
    port: 0,
    notify: [parseTarget(`webhook:${push.url}/offline#on=offline`), parseTarget(`webhook:${push.url}/attention`)],
  });
  await konsole.follower.ready;
});
test.after(async () => {
  await konsole?.close();
  await push?.close();
  await stack?.stop();
});

test('the adapter stops: an offline push for its live session, to the target that asked', async () => {
  const s = await stack.openSession();
  // The console's board has the claim before the adapter goes.
  for (let i = 0; i < 200; i++) {
    const snap = (await (await fetch(`${konsole.localUrl}state`)).json()) as {
      sessions: { session: string; claimants: number }[];
    };
    if (snap.sessions.some((x) => x.session === s.session && x.claimants === 1)) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  await stack.adapter.close();
  const p = await push.next((x) => x.path === '/offline' && x.body['session'] === s.session, 10_000);
  assert.is(p.body['kind'], 'offline');
  assert.match(String(p.body['title']), 'the adapter went offline');
  assert.ok(String(p.body['console_url']).includes(`#session=${s.session}`));
  assert.not.ok(
    push.received.some((x) => x.path === '/attention'),
    'attention-only target heard nothing',
  );
});

test.run();
