// `aep-steer console` as a process: a malformed notify target or a LAN bind without TLS exits 2
// and says what to give instead; with a certificate it serves HTTPS on that address; the notify
// targets and the public address are stated at start.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../support/shared-dir.js';
import { startTestStack, type TestStack } from '../cli/support.js';

const ENTRY = join(projectRoot, 'test/support/console-cli-entry.ts');
const dir = mkdtempSync(join(tmpdir(), 'aep-console-reach-'));
const env = { ...process.env, HOME: dir, AEP_STATE_DIR: dir, AEP_NOTIFY: '' };
const run = (args: string[], extra: Record<string, string> = {}) =>
  spawnSync(
    process.execPath,
    ['--import', 'tsx', ENTRY, 'console', '--port', '0', '--relay', 'ws://127.0.0.1:9/', ...args],
    { encoding: 'utf8', env: { ...env, ...extra }, timeout: 30_000 },
  );
const children: ChildProcess[] = [];
let stack: TestStack | undefined;

test.after(async () => {
  for (const c of children) c.kill('SIGTERM');
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('a malformed --notify target, AEP_NOTIFY entry or config entry exits 2 with the accepted forms', () => {
  for (const [args, extra] of [
    [['--notify', 'pushover:https://x.example'], {}],
    [[], { AEP_NOTIFY: 'ntfy:https://ntfy.sh/' }],
    [['--notify', 'ntfy:https://ntfy.sh/t#capture=loud'], {}],
  ] as const) {
    const r = run([...args], extra);
    assert.is(r.status, 2, r.stderr);
    assert.match(r.stderr, /^console: notify target "/);
    assert.match(r.stderr, 'Accepted forms:\nntfy:https://ntfy.sh/<topic>');
    assert.match(r.stderr, 'webhook:https://example.org/hook');
  }
  const cfg = join(dir, 'console.json');
  writeFileSync(cfg, JSON.stringify({ notify: [{ target: 'ntfy:https://ntfy.sh/x', on: ['lunch'] }] }));
  const r = run(['--config', cfg]);
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stderr, 'on takes attention, dropped, ended-queued, offline');
  writeFileSync(cfg, JSON.stringify({ notfy: [] }));
  assert.match(run(['--config', cfg]).stderr, 'unknown key notfy (known: notify)');
});

test('--host on a LAN address without TLS exits 2 and says why and what to do', () => {
  const r = run(['--host', '192.168.77.5']);
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stderr, 'in plain HTTP to everyone on that network');
  assert.match(r.stderr, 'Give --tls-cert and --tls-key (PEM)');
  assert.match(r.stderr, '--insecure-lan');
  assert.is(run(['--host', '192.168.77.5', '--tls-cert', join(dir, 'nope.pem')]).status, 2, 'a cert needs its key');
  assert.match(run(['--host', 'my laptop']).stderr, 'is not an IP address');
  const wildcard = run(['--host', '0.0.0.0', '--insecure-lan']);
  assert.is(wildcard.status, 2);
  assert.match(wildcard.stderr, 'give the address phones open with --public-url');
  // --insecure-lan lifts the refusal: this machine has no such address, so the bind itself fails (exit 1).
  const lifted = run(['--host', '192.168.77.5', '--insecure-lan']);
  assert.is(lifted.status, 1, lifted.stderr);
  assert.not.match(lifted.stderr, 'plain HTTP');
  assert.match(run(['--public-url', 'laptop:8791']).stderr, '--public-url must be an http: or https: URL');
});

function makeCert(): { cert: string; key: string } | undefined {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.2',
      '-addext',
      'subjectAltName=IP:127.0.0.2',
    ],
    { encoding: 'utf8' },
  );
  return r.status === 0 ? { cert, key } : undefined;
}

test('with --tls-cert/--tls-key it serves HTTPS on the address given, and states its notify targets', async () => {
  const pem = makeCert();
  assert.ok(pem, 'openssl made a test certificate');
  stack = await startTestStack();
  // 127.0.0.2 stands in for a LAN address: not 127.0.0.1, still on this machine.
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      ENTRY,
      'console',
      '--port',
      '0',
      '--relay',
      stack.relayUrl,
      '--token',
      stack.token!,
      '--host',
      '127.0.0.2',
      '--tls-cert',
      pem!.cert,
      '--tls-key',
      pem!.key,
      '--notify',
      'ntfy:https://ntfy.example.org/my-secret-topic',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  for (let i = 0; i < 300 && !/notify/.test(out); i++) await new Promise((r) => setTimeout(r, 50));
  const url = /aep-steer console: (\S+)/.exec(out)?.[1];
  assert.ok(url, out);
  assert.match(url!, /^https:\/\/127\.0\.0\.2:\d+\/[A-Za-z0-9_-]{24}\/$/);
  assert.match(out, 'notify ntfy:https://ntfy.example.org/… (capture metadata; on attention)');
  assert.not.match(out, 'my-secret-topic');
  const u = new URL(url!);
  const page = await new Promise<{ status: number; text: string }>((resolve, reject) => {
    const req = request(
      { host: u.hostname, port: u.port, path: u.pathname, ca: readFileSync(pem!.cert, 'utf8') },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.is(page.status, 200);
  assert.match(page.text, 'aep-steer console');
});

test.run();
