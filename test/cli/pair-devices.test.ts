// `aep-steer pair` against a running console: a terminal QR code of the pairing URL and the same
// URL as text, on the console's phone address, whose code pairs one device with the rights asked;
// `aep-steer devices` lists it (name, rights, paired at, last seen); with no console running,
// `pair` says so and mints nothing; bad rights are refused before anything is made.
import { test } from 'uvu';
import { renderUnicodeCompact } from 'uqr';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConsoleHandle } from '../../src/console/start.js';
import { startTestStack, type TestStack } from './support.js';
import { asDevice, exchange, phoneConsole } from '../support/phone.js';
import { projectRoot } from '../support/shared-dir.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-pair-cli-'));
const idle = mkdtempSync(join(tmpdir(), 'aep-pair-none-'));
const env = { ...process.env, HOME: dir, AEP_STATE_DIR: dir };
const CLI = join(projectRoot, 'src/cli/main.ts');
let stack: TestStack;
let konsole: ConsoleHandle;

test.before(async () => {
  stack = await startTestStack();
  konsole = await phoneConsole(stack, env);
});

const aep = (args: string[], e: NodeJS.ProcessEnv = env) =>
  spawnSync(process.execPath, ['--import', 'tsx', CLI, ...args], { env: e, encoding: 'utf8', timeout: 30_000 });

test.after(async () => {
  await konsole?.close();
  await stack?.stop();
  for (const d of [dir, idle]) rmSync(d, { recursive: true, force: true });
});

test('pair prints the QR code and URL of a one-time code; the code pairs that device; devices lists it', async () => {
  const r = aep(['pair', '--rights', 'watch', '--name', 'kitchen-tablet']);
  assert.is(r.status, 0, r.stderr);
  const url = /https:\/\/laptop\.tail1234\.ts\.net\/pair\/[A-Za-z0-9_-]{24}/.exec(r.stdout)?.[0];
  assert.ok(url, r.stdout);
  const qr = renderUnicodeCompact(url, { ecc: 'M' });
  assert.ok(r.stdout.startsWith(qr), 'the QR code printed encodes exactly that URL');
  assert.match(r.stdout, 'One use, until');

  assert.match(aep(['devices']).stdout, 'No paired devices');
  const paired = await exchange(konsole, url, 'kitchen-tablet');
  assert.is(paired.status, 303);
  const cookie = paired.headers.get('set-cookie')!.split(';')[0]!;
  assert.is((await asDevice(konsole, cookie, 'state')).status, 200);
  assert.is((await exchange(konsole, url, 'second-try')).status, 404, 'the code is spent');

  const listed = aep(['devices']);
  assert.is(listed.status, 0, listed.stderr);
  const [head, row, ...rest] = listed.stdout
    .trim()
    .split('\n')
    .map((l) => l.trimEnd());
  assert.match(head!, /^NAME\s+RIGHTS\s+PAIRED\s+LAST SEEN$/);
  assert.match(row!, /^kitchen-tablet\s+watch\s+\d{4}-\d\d-\d\dT\S+\s+\d{4}-\d\d-\d\dT\S+$/);
  assert.equal(rest, [], 'one device, the one paired');
});

test('pair without --rights pairs a device with the answer right', async () => {
  const r = aep(['pair', '--name', 'hall-phone']);
  assert.is(r.status, 0, r.stderr);
  const url = /https:\/\/laptop\.tail1234\.ts\.net\/pair\/[A-Za-z0-9_-]{24}/.exec(r.stdout)?.[0];
  assert.ok(url, r.stdout);
  assert.is((await exchange(konsole, url, 'hall-phone')).status, 303);
  const row = aep(['devices'])
    .stdout.split('\n')
    .find((l) => l.startsWith('hall-phone '));
  assert.ok(row, 'devices lists it');
  assert.match(row, /^hall-phone\s+answer\s/);
});

test('with no console running, pair says so and mints no code; bad rights are refused first', () => {
  const none = aep(['pair'], { ...env, HOME: idle, AEP_STATE_DIR: idle });
  assert.is(none.status, 1);
  assert.match(none.stderr, 'no console is running for this state directory');
  assert.not.ok(existsSync(join(idle, 'pairing')) && readdirSync(join(idle, 'pairing')).length > 0, 'no code minted');
  const bad = aep(['pair', '--rights', 'admin']);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /rights/);
  assert.not.match(bad.stdout, '/pair/');
});

test.run();
