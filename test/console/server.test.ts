// The console process against a real relay and adapter: the secret path, the same-origin JSON
// rule on its actions, the Host check, and the actions themselves (instruct, respond) going
// through the relay. The page is driven in a real browser in console.browser.ts.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { startConsole, type ConsoleHandle } from '../../src/console/start.js';
import type { BoardSnapshot } from '../../src/consumer/board.js';
import { heldPermission, startTestStack, type TestStack } from '../cli/support.js';

let stack: TestStack;
let konsole: ConsoleHandle;
test.before(async () => {
  stack = await startTestStack();
  konsole = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  await konsole.follower.ready;
});
test.after(async () => {
  await konsole?.close();
  await stack?.stop();
});

const origin = () => new URL(konsole.url).origin;

/** A raw request, so the test can send headers fetch() would not let it set (Host, Origin). */
function raw(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  const u = new URL(path, konsole.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path: u.pathname, method, headers }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const act = async (name: string, body: unknown): Promise<Record<string, unknown>> => {
  const res = await fetch(`${konsole.url}api/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: origin() },
    body: JSON.stringify(body),
  });
  return (await res.json()) as Record<string, unknown>;
};

async function stateWhere(test: (s: BoardSnapshot) => boolean): Promise<BoardSnapshot> {
  for (let i = 0; i < 200; i++) {
    const s = (await (await fetch(`${konsole.url}state`)).json()) as BoardSnapshot;
    if (test(s)) return s;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('the board never reached the expected state');
}

test('the page lives under a secret path made at start; elsewhere is 404, and the bare secret redirects', async () => {
  const u = new URL(konsole.url);
  assert.is(u.hostname, '127.0.0.1');
  assert.match(u.pathname, /^\/[A-Za-z0-9_-]{24}\/$/);
  const page = await fetch(konsole.url);
  assert.is(page.status, 200);
  assert.match(await page.text(), 'aep-steer console');
  assert.is((await fetch(`${origin()}/`)).status, 404);
  assert.is((await fetch(`${origin()}/state`)).status, 404);
  assert.is((await fetch(`${origin()}/not-the-secret/state`)).status, 404);
  const bare = await fetch(konsole.url.slice(0, -1), { redirect: 'manual' });
  assert.is(bare.status, 301);
  assert.is(bare.headers.get('location'), u.pathname);
  const other = await startConsole({ relay: stack.relayUrl, token: stack.token, port: 0 });
  assert.is.not(new URL(other.url).pathname, u.pathname, 'a new secret each start');
  await other.close();
});

test('actions take same-origin JSON only, and the Host must be the loopback name', async () => {
  const path = `${new URL(konsole.url).pathname}api/instruct`;
  const body = JSON.stringify({ session: 'x', text: 'y' });
  const host = new URL(konsole.url).host;
  assert.is(
    (await raw('POST', path, { host, 'content-type': 'application/json', origin: 'http://evil.example' }, body)).status,
    403,
  );
  assert.is((await raw('POST', path, { host, 'content-type': 'text/plain', origin: origin() }, body)).status, 415);
  assert.is((await raw('POST', path, { host, 'content-type': 'application/json' }, '[1,2]')).status, 400);
  assert.is((await raw('GET', new URL(konsole.url).pathname, { host: 'rebound.example:80' })).status, 421);
  assert.is(
    (await raw('POST', `${new URL(konsole.url).pathname}api/nope`, { host, 'content-type': 'application/json' }, '{}'))
      .status,
    404,
  );
});

test('the page may run only its own script and style (by hash) and may not be framed; every answer says DENY', async () => {
  const page = await fetch(konsole.url);
  const html = await page.text();
  const csp = page.headers.get('content-security-policy') ?? '';
  const hash = (tag: string) => {
    const body = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)![1]!;
    return `'sha256-${createHash('sha256').update(body, 'utf8').digest('base64')}'`;
  };
  const directives = Object.fromEntries(
    csp
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([k, ...v]) => [k, v.join(' ')]),
  );
  assert.is(directives['default-src'], "'none'");
  assert.is(directives['script-src'], hash('script'), "no unsafe-inline: exactly the page's own script");
  assert.is(directives['style-src'], hash('style'));
  assert.is(directives['connect-src'], "'self'");
  assert.is(directives['frame-ancestors'], "'none'");
  assert.is(page.headers.get('x-frame-options'), 'DENY');
  for (const path of ['state', 'api/nope']) {
    const r = await fetch(
      `${konsole.url}${path}`,
      path.startsWith('api') ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' } : {},
    );
    assert.is(r.headers.get('x-frame-options'), 'DENY', path);
  }
});

test('opened as localhost the console answers and its actions accept that origin, as for 127.0.0.1', async () => {
  const u = new URL(konsole.url);
  const local = `localhost:${u.port}`;
  assert.is((await raw('GET', u.pathname, { host: local })).status, 200);
  const body = JSON.stringify({ session: 'no-such-session', text: 'hello' });
  const viaLocal = await raw(
    'POST',
    `${u.pathname}api/instruct`,
    { host: local, 'content-type': 'application/json', origin: `http://${local}` },
    body,
  );
  assert.is(viaLocal.status, 200, viaLocal.text);
  assert.match(viaLocal.text, 'no-route', 'it reached the relay');
  // Another port on the same machine is another origin.
  const otherPort = await raw(
    'POST',
    `${u.pathname}api/instruct`,
    { host: local, 'content-type': 'application/json', origin: `http://localhost:${Number(u.port) + 1}` },
    body,
  );
  assert.is(otherPort.status, 403);
});

test('instruct: accepted through the relay, then delivered on the board the page reads', async () => {
  const s = await stack.openSession();
  const r = await act('instruct', { session: s.session, text: 'write the changelog entry' });
  assert.is(r['outcome'], 'accepted', String(r['message']));
  assert.is(r['error'], false);
  const id = r['command_id'] as string;
  const cmd = stack.seen.find((e) => e.id === id)!;
  assert.is(cmd.agent, 'aep-steer-console');
  await stateWhere((b) => b.instructions.some((i) => i.id === id && i.status === 'pending'));
  const reply = await stack.postHook(s.toolCall[0]!);
  assert.equal(
    (reply.body as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput.additionalContext,
    'write the changelog entry',
  );
  const b = await stateWhere((x) => x.instructions.some((i) => i.id === id && i.status === 'delivered'));
  assert.type(b.instructions.find((i) => i.id === id)!.delivered!.queuedMs, 'number');
});

test('instruct with idle start (Start now): sent as data.idle; anything but start is refused before it is sent (D43)', async () => {
  const s = await stack.openSession();
  const r = await act('instruct', { session: s.session, text: 'start the release notes', idle: 'start' });
  // The session's turn runs (its prompt opened one), so idle changes nothing: accepted as sent.
  assert.is(r['outcome'], 'accepted', String(r['message']));
  const cmd = stack.seen.find((e) => e.id === r['command_id'])!;
  assert.equal(cmd.data, { text: 'start the release notes', idle: 'start' });
  const bad = await act('instruct', { session: s.session, text: 'x', idle: 'later' });
  assert.is(bad['code'], 'invalid-request');
});

test('instruct refusals come back as a sentence with the code', async () => {
  const r = await act('instruct', { session: 'no-such-session', text: 'hello' });
  assert.is(r['error'], true);
  assert.is(r['code'], 'no-route');
  assert.match(String(r['message']), 'Refused (no-route): session no-such-session has no live claimant');
  const bad = await act('instruct', { session: 'x' });
  assert.is(bad['code'], 'invalid-request');
});

test('respond: a held permission allowed from the console; the held hook returns allow', async () => {
  const s = await stack.openSession();
  const { request: req, reply } = await heldPermission(stack, s);
  await stateWhere((b) => b.sessions.some((x) => x.session === s.session && x.holds.some((h) => h.request === req)));
  const r = await act('respond', { session: s.session, request: req, option: 'allow' });
  assert.is(r['outcome'], 'answered', String(r['message']));
  const hook = await reply;
  assert.equal(hook.body, {
    hookSpecificOutput: { hookEventName: 'PermissionRequest', decision: { behavior: 'allow' } },
  });
  const none = await act('respond', { session: s.session, request: req });
  assert.is(none['code'], 'invalid-answer');
});

test.run();
