// Pairing a phone with the console, and what a paired device may do: a code is good once and for
// 5 minutes, guessing is rate-limited and pairs nothing, a device's rights bound its actions, a
// revoked device is refused at its next request and its open stream ends within a second, and no
// pairing URL is built on the loopback the console listens on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsoleHandle } from '../../src/console/start.js';
import { pairingUrl } from '../../src/console/phone-reach.js';
import { heldPermission, startTestStack, type TestStack } from '../cli/support.js';
import { asDevice, exchange, onLocal, pairDevice, phoneConsole } from '../support/phone.js';
import { projectRoot } from '../support/shared-dir.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-pairing-'));
const env = { ...process.env, HOME: dir, AEP_STATE_DIR: dir };
let stack: TestStack;
let konsole: ConsoleHandle;

test.before(async () => {
  stack = await startTestStack();
  konsole = await phoneConsole(stack, env);
});

test.after(async () => {
  await konsole?.close();
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a code pairs one device: the cookie is HttpOnly, the token is stored hashed, mode 600; a second use pairs nothing', async () => {
  const { url, expiresAt } = konsole.phone.pair('answer', 'anna-phone');
  assert.match(
    url,
    /^https:\/\/laptop\.tail1234\.ts\.net\/pair\/[A-Za-z0-9_-]{24}$/,
    '144-bit code on the public address',
  );
  assert.ok(expiresAt - Date.now() <= 5 * 60_000 && expiresAt - Date.now() > 4 * 60_000);
  const shown = await fetch(onLocal(konsole, url));
  assert.is(shown.status, 200);
  assert.match(await shown.text(), 'value="anna-phone"', 'the offered name; GET spends nothing');
  const r = await exchange(konsole, url, 'anna-phone');
  assert.is(r.status, 303);
  assert.is(r.headers.get('location'), '/device/');
  const cookie = r.headers.get('set-cookie')!;
  assert.match(cookie, /^aep_device=[A-Za-z0-9_-]{32}; Path=\/device\/; HttpOnly; SameSite=Lax; Max-Age=\d+; Secure$/);
  const token = cookie.split(';')[0]!.slice('aep_device='.length);
  const file = join(dir, 'devices', 'anna-phone.json');
  assert.is(statSync(file).mode & 0o777, 0o600);
  assert.not.match(JSON.stringify(konsole.phone.store.list()), token, 'only the hash is kept');
  assert.equal(
    konsole.phone.store.list().map((d) => [d.name, d.rights]),
    [['anna-phone', 'answer']],
  );
  const state = await asDevice(konsole, cookie.split(';')[0]!, 'state');
  assert.is(state.status, 200);
  assert.ok(Array.isArray(state.body['sessions']));

  const again = await exchange(konsole, url, 'second-phone');
  assert.is(again.status, 404);
  assert.is(again.headers.get('x-aep-code'), 'pair-code-unknown');
  assert.match(await again.text(), 'Nothing was paired');
  assert.is(konsole.phone.store.list().length, 1, 'nothing paired by a used code');
  konsole.phone.store.revoke('anna-phone');
});

test('an expired code is refused and spent; nothing is paired', async () => {
  const { code } = konsole.phone.codes.mint('steer', undefined, 0);
  const r = await exchange(konsole, `https://x.example/pair/${code}`, 'late-phone');
  assert.is(r.status, 410);
  assert.is(r.headers.get('x-aep-code'), 'pair-code-expired');
  assert.match(await r.text(), 'expired');
  assert.is(konsole.phone.store.list().length, 0);
  assert.is(readdirSync(join(dir, 'pairing')).length, 0, 'the expired code is gone');
});

test('a device token is refused for a right it was not given', async () => {
  const s = await stack.openSession();
  const held = await heldPermission(stack, s);
  const watcher = await pairDevice(konsole, 'watch', 'watch-phone');
  const refused = await asDevice(konsole, watcher, 'api/respond', {
    session: s.session,
    request: held.request,
    option: 'allow',
  });
  assert.is(refused.status, 403);
  assert.is(refused.body['code'], 'right-not-given');
  assert.match(String(refused.body['message']), 'Pair it again with --rights answer');
  const answerer = await pairDevice(konsole, 'answer', 'answer-phone');
  const steer = await asDevice(konsole, answerer, 'api/instruct', { session: s.session, text: 'stop' });
  assert.is(steer.status, 403);
  assert.is(steer.body['code'], 'right-not-given');
  assert.not.ok(
    stack.seen.some((e) => e.type === 'control.attention.respond' || e.type.endsWith('.instruct')),
    'nothing reached the relay',
  );
  const ok = await asDevice(konsole, answerer, 'api/respond', {
    session: s.session,
    request: held.request,
    option: 'deny',
  });
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.is(ok.body['outcome'], 'answered');
  assert.match(JSON.stringify((await held.reply).body), '"behavior":"deny"');
  const forged = await asDevice(konsole, 'aep_device=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'state');
  assert.is(forged.status, 401);
  assert.is(forged.body['code'], 'device-unknown');
  konsole.phone.store.revoke('watch-phone');
  konsole.phone.store.revoke('answer-phone');
});

test('revoke: the next request is refused and the open stream ends within a second', async () => {
  const cookie = await pairDevice(konsole, 'steer', 'revoked-phone');
  const ended = new Promise<number>((resolve, reject) => {
    const req = request(new URL('/device/events', konsole.localUrl), { headers: { cookie } }, (res) => {
      assert.is(res.statusCode, 200);
      let revokedAt = 0;
      res.once('data', () => {
        // The first snapshot arrived: the stream is open. Revoke it with the command a person runs.
        const out = spawnSync(process.execPath, ['--import', 'tsx', CLI, 'devices', 'revoke', 'revoked-phone'], {
          env,
          encoding: 'utf8',
        });
        assert.match(out.stdout, 'Revoked revoked-phone');
        revokedAt = Date.now();
      });
      res.on('end', () => resolve(Date.now() - revokedAt));
      res.resume();
    });
    req.on('error', reject);
    req.end();
  });
  const after = await ended;
  assert.ok(after < 1000, `the stream ended ${after} ms after the revoke`);
  const next = await asDevice(konsole, cookie, 'state');
  assert.is(next.status, 401);
  assert.is(next.body['code'], 'device-unknown');
});

test('guessing codes is rate-limited: past 10 refusals even a good code waits, and nothing is paired', async () => {
  const good = konsole.phone.pair('answer');
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) {
    const guess = `https://x.example/pair/${String(i).padStart(24, 'G')}`;
    statuses.push((await exchange(konsole, guess, `guess-${i}`)).status);
  }
  // The earlier tests' two refused codes count too: the eleventh refusal in the minute is not looked up.
  const first429 = statuses.indexOf(429);
  assert.is(first429, 8, statuses.join(' '));
  assert.ok(statuses.slice(0, first429).every((s) => s === 404));
  assert.ok(statuses.slice(first429).every((s) => s === 429));
  const blocked = await exchange(konsole, good.url, 'good-phone');
  assert.is(blocked.status, 429);
  assert.is(blocked.headers.get('x-aep-code'), 'pair-rate-limited');
  assert.ok(Number(blocked.headers.get('retry-after')) > 0);
  assert.is(konsole.phone.store.list().length, 0, 'nothing paired');
});

test('no pairing URL on the loopback the console listens on; the command says why and what would work', async () => {
  const local = { root: 'http://127.0.0.1:8791/', port: 8791 };
  assert.throws(() => pairingUrl(local, 'c'), /loopback, which a phone cannot open/);
  assert.throws(() => pairingUrl({ ...local, root: 'http://localhost:8791/' }, 'c'), /loopback/);
  assert.throws(() => pairingUrl({ ...local, root: 'http://[::1]:8791/' }, 'c'), /loopback/);
  // A --public-url naming localhost is the person saying the phone forwards the port over SSH.
  assert.is(
    pairingUrl({ ...local, root: 'http://localhost:8791/', explicit: true }, 'c'),
    'http://localhost:8791/pair/c',
  );
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', CLI, 'console', '--port', '0', '--relay', 'ws://127.0.0.1:9/', '--pair'],
    { env: { ...env, PATH: '/nonexistent' }, encoding: 'utf8', timeout: 30_000 },
  );
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stderr, 'no pairing URL made');
  assert.match(r.stderr, 'tailscale is not installed');
  assert.match(r.stderr, 'ssh -N -L');
  assert.match(r.stderr, 'TLS reverse proxy');
  const reach = spawnSync(
    process.execPath,
    ['--import', 'tsx', CLI, 'console', '--port', '8799', '--relay', 'ws://127.0.0.1:9/', '--reach'],
    { env: { ...env, PATH: '/nonexistent' }, encoding: 'utf8', timeout: 30_000 },
  );
  assert.is(reach.status, 0, reach.stderr);
  assert.match(reach.stdout, 'a phone cannot open that address');
  assert.match(reach.stdout, 'ssh -N -L 8799:127.0.0.1:8799');
});

const CLI = join(projectRoot, 'src/cli/main.ts');

test.run();
