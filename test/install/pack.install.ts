// Installed like a real CLI: `npm pack` builds the tarball (prepare compiles to dist/), `npm
// install -g` puts it into a temporary prefix offline (its dependencies travel inside it), and
// the `aep-steer` on that prefix's PATH runs --version, the demo, relay + doctor, and install,
// from a directory outside the clone.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../support/shared-dir.js';

const work = mkdtempSync(join(tmpdir(), 'aep-pack-'));
const prefix = join(work, 'prefix');
const elsewhere = mkdtempSync(join(tmpdir(), 'aep-pack-cwd-'));
// The user's own npm settings stay (registry-only.install.ts installs with none); the state is private.
const env: NodeJS.ProcessEnv = {
  ...process.env,
  PATH: `${join(prefix, 'bin')}:${process.env.PATH}`,
  AEP_STATE_DIR: join(work, 'state'),
};
for (const k of ['AEP_TOKEN', 'AEP_RELAY', 'AEP_HOOK_PORT', 'AEP_PORT']) delete env[k];
const children: ChildProcess[] = [];

const run = (cmd: string, args: string[], cwd = elsewhere) =>
  spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 600_000 });

test.after(() => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
  rmSync(elsewhere, { recursive: true, force: true });
});

test('npm pack, then npm install -g of the tarball into a prefix, offline', () => {
  const pack = run('npm', ['pack', '--pack-destination', work], projectRoot);
  assert.is(pack.status, 0, pack.stderr);
  const tgz = readdirSync(work).find((f) => /^aep-steering-.*\.tgz$/.test(f));
  assert.ok(tgz, 'the tarball');
  const install = run('npm', [
    'install',
    '-g',
    '--prefix',
    prefix,
    '--offline',
    '--no-audit',
    '--no-fund',
    join(work, tgz!),
  ]);
  assert.is(install.status, 0, install.stderr);
  const bin = join(prefix, 'bin', 'aep-steer');
  assert.ok(existsSync(bin), 'aep-steer is on the prefix PATH');
  const pkg = join(prefix, 'lib', 'node_modules', 'aep-steering');
  assert.ok(existsSync(join(pkg, 'dist', 'cli', 'main.js')), 'compiled JavaScript, built by prepare');
  assert.not.ok(existsSync(join(pkg, 'src')), 'no TypeScript sources shipped');
  assert.ok(
    statSync(join(pkg, 'dist', 'adapters', 'shim', 'aep-steer-hook.sh')).mode & 0o100,
    'the shim ships executable',
  );
});

test('aep-steer --version and --help from there', () => {
  const v = run('aep-steer', ['--version']);
  assert.equal(
    [v.status, v.stdout.trim()],
    [0, JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')).version],
  );
  const h = run('aep-steer', ['--help']);
  assert.is(h.status, 0);
  for (const c of ['demo', 'relay', 'adapter', 'doctor', 'instruct', 'sessions', 'watch', 'uninstall'])
    assert.match(h.stdout, new RegExp(`^  ${c} `, 'm'));
  const bad = run('aep-steer', ['instruct', '--session', 's', '--bogus']);
  assert.is(bad.status, 2, 'usage errors exit 2');
  assert.match(bad.stderr, "unknown option '--bogus'");
});

test('aep-steer demo runs the whole loop from the installed package (free ports)', () => {
  const d = run('aep-steer', ['demo', '--port', '0', '--relay-port', '0']);
  assert.is(d.status, 0, d.stdout + d.stderr);
  assert.match(d.stdout, /✓ delivered at PreToolUse after \d+ ms/);
  assert.match(d.stdout, 'no violations');
});

test('aep-steer relay creates the local token; doctor finds it and passes; install writes hooks to the installed shim', async () => {
  assert.ok(existsSync(join(prefix, 'bin', 'aep-steer')), 'installed by the first test');
  const relay = spawn('aep-steer', ['relay', '--port', '0', '--memory'], {
    cwd: elsewhere,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(relay);
  relay.on('error', () => {});
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    relay.stderr!.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on http:\/\/([\d.]+:\d+)/.exec(stderr);
      if (m) resolve(`ws://${m[1]}/socket`);
    });
    relay.once('exit', (code) => reject(new Error(`relay exited ${code}: ${stderr}`)));
  });
  assert.match(stderr, `local token created in ${join(work, 'state', 'token')}`);
  assert.is(statSync(join(work, 'state', 'token')).mode & 0o777, 0o600);
  const doc = run('aep-steer', ['doctor', '--relay', url]);
  assert.is(doc.status, 0, doc.stdout + doc.stderr);
  assert.match(doc.stdout, '✓ token: accepted: the local token');
  const project = join(elsewhere, 'proj');
  const inst = run('aep-steer', ['install', 'claude-code', '--project', project]);
  assert.is(inst.status, 0, inst.stderr);
  // A project install writes the file Claude Code keeps out of git, never the committed one (D21).
  assert.not.ok(existsSync(join(project, '.claude', 'settings.json')));
  const settings = readFileSync(join(project, '.claude', 'settings.local.json'), 'utf8');
  const shim = /"command": "([^ "]+aep-steer-hook\.sh)/.exec(settings)?.[1];
  assert.ok(shim?.startsWith(prefix) && existsSync(shim), `the hooks run the installed shim: ${shim}`);
  const vendorDoc = run('aep-steer', ['doctor', 'claude-code', '--relay', url, '--project', project]);
  assert.is(vendorDoc.status, 1, 'no adapter yet');
  assert.match(vendorDoc.stdout, 'fix: AEP_INSTRUCT=1 aep-steer up claude-code');
  const un = run('aep-steer', ['uninstall', 'claude-code', '--project', project]);
  assert.is(un.status, 0, un.stderr);
  relay.kill('SIGTERM');
  await new Promise((r) => relay.once('exit', r));
});

test.run();
