// Away from the desk with Claude Code 2.1.332: the real CLI runs headless against the mock model
// API in default permission mode, so a Bash call raises PermissionRequest; the console pushes it
// to a loopback server standing in for ntfy; a POST to the push's Allow action (what the ntfy app
// sends on a tap) answers through the console, the tool runs, and the model's next request carries
// its output. A second tap is refused and answers nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startConsole } from '../../src/console/start.js';
import { parseTarget } from '../../src/notify/targets.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import { bashThenText } from '../support/mock-anthropic.js';
import { startPushServer, type PushServer } from '../support/push-server.js';
import { bodyHas } from '../support/vendor-e2e.js';

// The suite's own consumer only watches; the console alone may answer.
const e2e = e2eSuite('claude-code', {
  label: 'claude-code notify',
  access: {
    commands: [],
    parties: { 'aep-steer-console': ['control.attention.respond'] },
  },
  flags: { instruct: false, attentionTimeoutMs: '40000' },
});
let push: PushServer;
let ws: VendorWorkspace;

if (e2e.installed) {
  test.before(async () => {
    push = await startPushServer();
    e2e.defer(() => push.close());
    const konsole = await startConsole({
      relay: e2e.stack.relayUrl,
      token: e2e.stack.tokenOf('aep-steer-console'),
      port: 0,
      notify: [parseTarget(`ntfy:${push.url}/phone-topic`)],
    });
    e2e.defer(() => konsole.close());
    await konsole.follower.ready;
    ws = await e2e.workspace();
  });

  test('a PermissionRequest is pushed once; a tap on Allow runs the tool and the model reads its output', async () => {
    const target = join(ws.project, 'from-phone.txt');
    const command = `touch ${target} && printf 'ran %s' ok-from-phone`;
    e2e.mock.setScript(bashThenText([command]));
    const run = e2e.run(ws, 'Create from-phone.txt with bash.', { bypassPermissions: false, killAfterMs: 120_000 });
    const requested = await e2e.stack.waitFor(
      'attention.requested',
      () => e2e.stack.events.find((e) => e.type === 'attention.requested'),
      60_000,
    );
    const session = requested.session!;
    const n = await push.next((p) => String(p.body['click']).includes(`request=${requested.id}`), 5000);
    assert.ok(
      n.at - Date.parse(requested.time) < 1000,
      `pushed within a second of the request (${n.at - Date.parse(requested.time)} ms)`,
    );
    const body = n.body as {
      title: string;
      message: string;
      click: string;
      actions: { label: string; url: string; method: string }[];
    };
    assert.match(body.message, 'requests permission: Bash');
    assert.not.match(JSON.stringify(n.body), 'ok-from-phone', 'the metadata ceiling kept the command out of the push');
    assert.match(body.click, `#session=${session}&request=${requested.id}`);
    const allow = body.actions.find((a) => a.label === 'Allow')!;
    assert.is(allow.method, 'POST');

    const tapped = await fetch(allow.url, { method: 'POST' });
    assert.is(tapped.status, 200, await tapped.clone().text());
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    assert.ok(existsSync(target), 'the command ran');
    const reqs = e2e.requestsIn(session);
    assert.ok(
      reqs.some((q) => bodyHas(q.body, 'ran ok-from-phone')),
      "the model's request carries the tool's output",
    );
    const answered = await e2e.stack.waitFor('attention.answered', () =>
      e2e.stack.events.find((e) => e.type === 'attention.answered' && e.subject === requested.id),
    );
    assert.is(answered.data?.['via'], 'control');
    const respond = e2e.stack.events.filter(
      (e) => e.type === 'control.attention.respond' && e.subject === requested.id,
    );
    assert.is(respond.length, 1);
    assert.is(respond[0]!.agent, 'aep-steer-console');

    const again = await fetch(allow.url, { method: 'POST' });
    assert.is(again.status, 409);
    assert.match(await again.text(), 'already answered from a link');
    await new Promise((res) => setTimeout(res, 200));
    assert.is(
      e2e.stack.events.filter((e) => e.type === 'control.attention.respond' && e.subject === requested.id).length,
      1,
      'nothing more was sent',
    );
    assert.is(
      push.received.filter((p) => String(p.body['click']).includes(requested.id)).length,
      1,
      'one push for the request',
    );
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
