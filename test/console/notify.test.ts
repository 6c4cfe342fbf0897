// Pushes from the console on a real relay and Claude Code adapter, to a loopback server standing
// in for ntfy and for a webhook: one push per held request with the click link and the answer
// links, the capture ceiling keeping the command out of the push, a tap on Allow going through
// the console's respond path, and every refused tap (second use, ended request, forged link)
// recording nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import { parseTarget } from '../../src/notify/targets.js';
import { heldPermission, startTestStack, type TestStack } from '../cli/support.js';
import { startPushServer, type Pushed, type PushServer } from '../support/push-server.js';

let stack: TestStack;
let push: PushServer;
let konsole: ConsoleHandle;
const warnings: string[] = [];
const PUBLIC = 'https://laptop.example-tailnet.ts.net';

test.before(async () => {
  stack = await startTestStack();
  push = await startPushServer();
  konsole = await startConsole({
    relay: stack.relayUrl,
    token: stack.token,
    port: 0,
    publicUrl: PUBLIC,
    notify: [
      parseTarget(`ntfy:${push.url}/aep-topic`),
      parseTarget(`webhook:${push.url}/hook#capture=redacted&on=attention,dropped,ended-queued`),
    ],
    warn: (m) => warnings.push(m),
  });
  await konsole.follower.ready;
});
test.after(async () => {
  await konsole?.close();
  await push?.close();
  await stack?.stop();
});

/** The answer link URLs of a push rebased onto the console's real address (the test has no tailnet). */
const local = (url: string): string => url.replace(PUBLIC, new URL(konsole.localUrl).origin);
const ntfyFor = (request: string) => (p: Pushed) =>
  p.path === '/' && String(p.body['click']).includes(`request=${request}`);
const hookFor = (request: string) => (p: Pushed) =>
  p.path === '/hook' && (p.body['request'] as { id?: string } | undefined)?.id === request;
const tap = (url: string, method = 'POST') => fetch(local(url), { method });
const responds = (request: string) =>
  stack.seen.filter((e) => e.type === 'control.attention.respond' && e.subject === request);

test('a held permission is pushed once within a second, with the click link and Allow / Deny; the command stays out', async () => {
  const s = await stack.openSession();
  const { request, reply } = await heldPermission(stack, s);
  const seenAt = Date.now();
  const n = await push.next(ntfyFor(request), 1000);
  assert.ok(n.at - seenAt < 1000, 'within a second of the request');
  const body = n.body as {
    topic: string;
    title: string;
    message: string;
    priority: number;
    tags: string[];
    click: string;
    actions: { action: string; label: string; url: string; method: string }[];
  };
  assert.is(body.topic, 'aep-topic');
  assert.is(body.priority, 4);
  assert.match(body.title, 'waits for you: permission');
  assert.match(body.message, 'requests permission: Bash', 'the tool name is in it');
  assert.ok(body.click.startsWith(`${PUBLIC}/`), 'links name the public address');
  assert.match(body.click, `#session=${s.session}&request=${request}`);
  assert.equal(
    body.actions.map((a) => [a.action, a.label, a.method]),
    [
      ['http', 'Allow', 'POST'],
      ['http', 'Deny', 'POST'],
    ],
  );
  for (const a of body.actions) assert.match(a.url, new RegExp(`^${PUBLIC}/answer/[A-Za-z0-9_-]{24}$`));
  // metadata ceiling: nothing of the command (touch new-file.txt) went to the push server.
  assert.not.match(JSON.stringify(n.body), 'touch');

  // The webhook gets the documented body, with the same answer links.
  const w = (await push.next(hookFor(request), 1000)).body as Record<string, unknown>;
  assert.is(w['type'], 'aep-steer.notice');
  assert.is(w['kind'], 'attention');
  assert.is(w['session'], s.session);
  assert.is(w['capture'], 'redacted');
  assert.is(w['console_url'], body.click);
  assert.equal(w['answers'], { allow: body.actions[0]!.url, deny: body.actions[1]!.url });
  assert.is(
    push.received.filter((p) => p.path === '/' && p.body['click'] === body.click).length,
    1,
    'one push per request',
  );

  // A GET only describes the link: nothing is answered.
  const look = await tap(body.actions[0]!.url, 'GET');
  assert.is(look.status, 200);
  assert.match(await look.text(), 'Allow this request?');
  assert.is(responds(request).length, 0);

  // Tapping Allow answers through the console: the held hook returns allow.
  const allowed = await tap(body.actions[0]!.url);
  assert.is(allowed.status, 200, await allowed.clone().text());
  assert.match(await allowed.text(), 'Answered: request');
  const hook = await reply;
  assert.equal(hook.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  assert.is(responds(request).length, 1);
  assert.is(responds(request)[0]!.agent, 'aep-steer-console', "the console's identity answered");
  const answered = await stack.waitFor((e) => e.type === 'attention.answered' && e.subject === request);
  assert.is(answered.data?.['via'], 'control');

  // A second tap, on either button, is refused and records nothing.
  for (const url of [body.actions[0]!.url, body.actions[1]!.url]) {
    const again = await tap(url);
    assert.is(again.status, 409);
    assert.match(await again.text(), 'already answered from a link (allow)');
  }
  await new Promise((r) => setTimeout(r, 200));
  assert.is(responds(request).length, 1, 'no second answer was sent');
});

test('a request that ends at the agent before anyone taps: its links say so and record nothing', async () => {
  const s = await stack.openSession();
  const { request, reply } = await heldPermission(stack, s);
  const n = (await push.next(ntfyFor(request))).body as { actions: { url: string }[] };
  // The session ends at the agent: the adapter dismisses the held request (AEP-0002 §7).
  await stack.postHook(s.closing[1]!);
  await reply;
  await stack.waitFor((e) => e.type === 'attention.resolved' && e.subject === request);
  await new Promise((r) => setTimeout(r, 100));
  const r = await tap(n.actions[0]!.url);
  assert.is(r.status, 409);
  assert.match(await r.text(), 'dismissed at the agent');
  assert.is(responds(request).length, 0);
});

test('a request answered at the agent before anyone taps (as the agent reports it): its links say so', async () => {
  const s = await stack.openSession();
  const { request, reply } = await heldPermission(stack, s);
  const n = (await push.next(ntfyFor(request))).body as { actions: { url: string }[] };
  // What an adapter reports when the agent's own screen answered first (D34): attention.answered via
  // oob, posted to the relay's ingest as an emitter sends it.
  const relayHttp = stack.relayUrl.replace(/^ws/, 'http').replace(/\/socket$/, '/events');
  const answered = {
    aep: '0.1',
    id: `oob-${request}`,
    type: 'attention.answered',
    subject: request,
    cause: request,
    session: s.session,
    seq: 1,
    time: new Date().toISOString(),
    source: `aep://localhost/agent/agent-screen/session/${s.session}`,
    agent: 'claude-code',
    data: { answer: { option: 'allow' }, via: 'oob' },
  };
  const posted = await fetch(relayHttp, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'aep-version': '0.1', authorization: `Bearer ${stack.token}` },
    body: JSON.stringify(answered),
  });
  assert.is(posted.status, 202, await posted.clone().text());
  await stack.waitFor((e) => e.id === answered.id);
  await new Promise((r) => setTimeout(r, 100));
  const r = await tap(n.actions[1]!.url);
  assert.is(r.status, 409);
  assert.match(await r.text(), 'already answered at the agent');
  assert.is(responds(request).length, 0, 'nothing was sent');
  await stack.postHook(s.closing[1]!);
  await reply;
});

test('forged and malformed links are refused and record nothing', async () => {
  const before = stack.seen.filter((e) => e.type === 'control.attention.respond').length;
  for (const path of ['answer/AAAAAAAAAAAAAAAAAAAAAAAA', 'answer/short', 'answer/../state', 'answer/']) {
    const r = await fetch(new URL(path, new URL('/', konsole.localUrl)), { method: 'POST' });
    assert.ok(r.status === 404, `${path}: ${r.status}`);
  }
  const forged = await fetch(new URL('/answer/AAAAAAAAAAAAAAAAAAAAAAAA', konsole.localUrl), { method: 'POST' });
  assert.match(await forged.text(), 'not known to this console');
  assert.is(forged.headers.get('x-frame-options'), 'DENY');
  await new Promise((r) => setTimeout(r, 100));
  assert.is(stack.seen.filter((e) => e.type === 'control.attention.respond').length, before);
});

test('opted in: an instruction dropped at the session end, and the end with instructions queued', async () => {
  const s = await stack.openSession();
  const sent = await fetch(`${konsole.localUrl}api/instruct`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ session: s.session, text: 'never delivered' }),
  });
  assert.is(((await sent.json()) as { outcome: string }).outcome, 'accepted');
  await stack.postHook(s.closing[1]!);
  const dropped = await push.next(
    (p) => p.path === '/hook' && p.body['kind'] === 'dropped' && p.body['session'] === s.session,
  );
  assert.equal((dropped.body['instruction'] as { reason?: string }).reason, 'session-ended');
  const ended = await push.next(
    (p) => p.path === '/hook' && p.body['kind'] === 'ended-queued' && p.body['session'] === s.session,
  );
  assert.match(String(ended.body['message']), '1 instruction never reached the agent');
  // The ntfy target did not opt in to either.
  assert.not.ok(push.received.some((p) => p.path === '/' && /dropped|ended with/.test(String(p.body['title']))));
});

test('a request answered before the push went out is never pushed, nor one already waiting when the console started', async () => {
  const waiting = await stack.openSession();
  const before = await heldPermission(stack, waiting);
  const slow = await startConsole({
    relay: stack.relayUrl,
    token: stack.token,
    port: 0,
    notify: [parseTarget(`webhook:${push.url}/slow`)],
    notifyTuning: { graceMs: 1500 },
  });
  await slow.follower.ready;
  const s = await stack.openSession();
  const { request, reply } = await heldPermission(stack, s);
  const r = await fetch(`${slow.localUrl}api/respond`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ session: s.session, request, option: 'deny' }),
  });
  assert.is(((await r.json()) as { outcome: string }).outcome, 'answered');
  await reply;
  await new Promise((res) => setTimeout(res, 2000));
  assert.not.ok(
    push.received.some((p) => p.path === '/slow'),
    'nothing pushed: one answered at once, one from history',
  );
  await slow.close();
  await stack.postHook(waiting.closing[1]!);
  await before.reply;
});

test('an unreachable target: one warning, and the console keeps working', async () => {
  const said: string[] = [];
  const lost = await startConsole({
    relay: stack.relayUrl,
    token: stack.token,
    port: 0,
    notify: [parseTarget('ntfy:http://127.0.0.1:9/gone')],
    notifyTuning: { graceMs: 10, retry: { attempts: 2, firstWaitMs: 20, timeoutMs: 500 } },
    warn: (m) => said.push(m),
  });
  await lost.follower.ready;
  const held = [];
  for (let i = 0; i < 2; i++) {
    const s = await stack.openSession();
    held.push({ s, ...(await heldPermission(stack, s)) });
  }
  for (let i = 0; i < 100 && said.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
  await new Promise((r) => setTimeout(r, 300));
  for (const { s, request, reply } of held) {
    const r = await fetch(`${lost.localUrl}api/respond`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ session: s.session, request, option: 'allow' }),
    });
    assert.is(((await r.json()) as { outcome: string }).outcome, 'answered', 'the console answers as ever');
    await reply;
  }
  assert.is(said.length, 1, said.join('\n'));
  assert.match(said[0]!, 'could not deliver to ntfy:http://127.0.0.1:9/… after 2 tries');
  assert.not.match(said[0]!, 'gone', 'the topic (its password) is not printed');
  assert.is((await fetch(lost.localUrl)).status, 200);
  await lost.close();
});

test('the page is an installable web app: manifest and icons under the secret path, allowed by the policy', async () => {
  const page = await fetch(konsole.localUrl);
  assert.match(page.headers.get('content-security-policy') ?? '', "manifest-src 'self'");
  const html = await page.text();
  assert.match(html, '<link rel="manifest" href="manifest.webmanifest">');
  const m = (await (await fetch(`${konsole.localUrl}manifest.webmanifest`)).json()) as {
    start_url: string;
    display: string;
    icons: { src: string; sizes: string }[];
  };
  assert.is(m.start_url, './');
  assert.is(m.display, 'standalone');
  for (const icon of m.icons) {
    const r = await fetch(`${konsole.localUrl}${icon.src}`);
    assert.is(r.headers.get('content-type'), 'image/png');
    const png = Buffer.from(await r.arrayBuffer());
    assert.equal([...png.subarray(1, 4)], [0x50, 0x4e, 0x47]);
    assert.is(`${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`, icon.sizes);
  }
  assert.is(
    (await fetch(new URL('/manifest.webmanifest', konsole.localUrl))).status,
    404,
    'nothing outside the secret path',
  );
  for (const name of ['__proto__', 'constructor', 'hasOwnProperty'])
    assert.is((await fetch(`${konsole.localUrl}${name}`)).status, 404, name);
});

test('--public-url: the page answers to that name and accepts actions from that origin', async () => {
  assert.ok(konsole.url.startsWith(`${PUBLIC}/`));
  assert.is(new URL(konsole.url).pathname, new URL(konsole.localUrl).pathname);
  const u = new URL(konsole.localUrl);
  const { request } = await import('node:http');
  const status = (headers: Record<string, string>, method = 'GET', body?: string) =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          host: u.hostname,
          port: u.port,
          path: `${u.pathname}${method === 'POST' ? 'api/instruct' : ''}`,
          method,
          headers,
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const host = new URL(PUBLIC).host;
  assert.is(await status({ host }), 200);
  const body = JSON.stringify({ session: 'no-such-session', text: 'x' });
  assert.is(await status({ host, origin: PUBLIC, 'content-type': 'application/json' }, 'POST', body), 200);
  assert.is(
    await status({ host, origin: 'https://evil.example', 'content-type': 'application/json' }, 'POST', body),
    403,
  );
  assert.is(await status({ host: 'evil.example' }), 421);
});

test('no warning was printed by the healthy targets', () => {
  assert.equal(warnings, []);
});

test.run();
