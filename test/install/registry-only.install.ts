// Installed from the npm registry alone (D40), as on a fresh machine: a fresh HOME (no .npmrc, a
// cold npm cache) and no npm settings in the environment but two the sandbox needs to reach the
// registry (its CA file, `npm_config_cafile`, and `npm_config_registry` when the caller set one):
// `npm_config_nodedir` is unset. `npm ci` in a fresh clone of HEAD, `npm pack`, and `npm install
// -g` of the tarball into a temporary prefix (offline: the tarball carries its dependencies) must
// succeed with no compiler run (cc, c++, gcc, g++, make, python3, node-gyp, … are shims first on
// PATH that record a call and fail) and nothing fetched but from the registry (every proxy
// variable points at a closed port, the registry alone is exempt; the lockfile resolves nowhere
// else). The tarball carries no build leftovers and stays within its size budget; the installed
// `aep-steer` answers --version and starts a relay with a file store that keeps an event.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { postWithLocalToken, startRelayProcess } from '../support/relay-process.js';
import { projectRoot } from '../support/shared-dir.js';

/** The packed tarball's budget (D40: under 3 MB). */
const TARBALL_BUDGET = 3_000_000;
const COMPILERS = [
  'cc',
  'c++',
  'gcc',
  'g++',
  'clang',
  'clang++',
  'make',
  'gmake',
  'python',
  'python3',
  'node-gyp',
  'prebuild-install',
];
/** What a native build leaves behind, and what no runtime reads (source maps, TypeScript sources of dependencies). */
const LEFTOVER =
  /(^|\/)(build|deps|prebuilds)\/|\.(node|o|a|so|gyp|gypi|c|cc|cpp|h|hpp|map)$|^package\/node_modules\/.*(?<!\.d)\.[mc]?ts$/;
const CA_FILE = '/etc/ssl/certs/ca-certificates.crt';

const work = mkdtempSync(join(tmpdir(), 'aep-registry-only-'));
const home = join(work, 'home');
const clone = join(work, 'clone');
const prefix = join(work, 'prefix');
const shims = join(work, 'shims');
const calls = join(work, 'compiler-calls.log');
mkdirSync(home);
mkdirSync(shims);
for (const name of COMPILERS) {
  const shim = join(shims, name);
  writeFileSync(
    shim,
    `#!/bin/sh\necho "${name} $*" >> '${calls}'\necho "${name}: no compiler may run in this install" >&2\nexit 1\n`,
  );
  chmodSync(shim, 0o755);
}

async function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

const registry = process.env.npm_config_registry ?? 'https://registry.npmjs.org/';
const env: NodeJS.ProcessEnv = {};
const PROXY = /^(https?_proxy|all_proxy|no_proxy|npm_.*)$/i;
for (const [k, v] of Object.entries(process.env)) if (!PROXY.test(k) && !k.startsWith('AEP_')) env[k] = v;
Object.assign(env, {
  HOME: home,
  // The shims first, then this Node (npm runs on it), then the system's tools (git, tar, sh).
  PATH: [shims, join(prefix, 'bin'), dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':'),
  AEP_STATE_DIR: join(work, 'state'),
  npm_config_registry: registry,
});
if (existsSync(CA_FILE)) env.npm_config_cafile = CA_FILE;

const run = (cmd: string, args: string[], cwd: string) =>
  spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 600_000 });
const compilerCalls = (): string => (existsSync(calls) ? readFileSync(calls, 'utf8') : '');

test.before(async () => {
  const proxy = `http://127.0.0.1:${await closedPort()}`;
  const host = new URL(registry).hostname;
  Object.assign(env, {
    HTTP_PROXY: proxy,
    HTTPS_PROXY: proxy,
    http_proxy: proxy,
    https_proxy: proxy,
    NO_PROXY: host,
    no_proxy: host,
  });
});

test.after(() => rmSync(work, { recursive: true, force: true }));

test('the lockfile resolves every package from the registry or leaves it to the registry', () => {
  const lock = JSON.parse(readFileSync(join(projectRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { resolved?: string }>;
  };
  const elsewhere = Object.entries(lock.packages).filter(
    ([, m]) => m.resolved !== undefined && new URL(m.resolved).host !== new URL(registry).host,
  );
  assert.equal(
    elsewhere.map(([p, m]) => `${p}: ${m.resolved}`),
    [],
  );
});

test('npm ci in a fresh clone of HEAD: no nodedir, no compiler, only the registry', () => {
  const c = spawnSync('git', ['clone', '--quiet', projectRoot, clone], { env, encoding: 'utf8' });
  assert.is(c.status, 0, c.stderr);
  const ci = run('npm', ['ci', '--no-audit', '--no-fund'], clone);
  assert.is(ci.status, 0, ci.stdout + ci.stderr);
  assert.not.match(ci.stderr, /EBADENGINE/, 'every dependency supports the Node lines engines names');
  assert.is(compilerCalls(), '', 'no compiler ran');
  assert.ok(existsSync(join(clone, 'dist', 'cli', 'main.js')), 'prepare built dist/');
  // A native addon only as a prebuilt package the registry serves, of a development tool (the
  // unused-code check's parser): the CLI and everything it ships load none.
  const lock = JSON.parse(readFileSync(join(clone, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { resolved?: string; dev?: boolean }>;
  };
  const ownerOf = (file: string): string => {
    const parts = `node_modules/${file}`.split('/');
    const at = parts.lastIndexOf('node_modules');
    const scoped = parts[at + 1]!.startsWith('@');
    return parts.slice(0, at + (scoped ? 3 : 2)).join('/');
  };
  const native = readdirSync(join(clone, 'node_modules'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.node'));
  const shipped = native.filter((f) => {
    const m = lock.packages[ownerOf(f)];
    // No `resolved`: the lockfile leaves it to the registry (the test above).
    return m?.dev !== true || (m.resolved !== undefined && new URL(m.resolved).host !== new URL(registry).host);
  });
  assert.equal(shipped, [], 'no native addon but prebuilt ones of development tools, from the registry');
});

let tarball = '';

test(`npm pack: no build leftovers, within ${TARBALL_BUDGET.toLocaleString('en')} bytes`, () => {
  const pack = run('npm', ['pack', '--pack-destination', work], clone);
  assert.is(pack.status, 0, pack.stdout + pack.stderr);
  const name = readdirSync(work).find((f) => /^aep-steering-.*\.tgz$/.test(f));
  assert.ok(name, 'the tarball');
  tarball = join(work, name!);
  const size = statSync(tarball).size;
  const list = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8', maxBuffer: 64 << 20 });
  assert.is(list.status, 0, list.stderr);
  const entries = list.stdout.split('\n').filter(Boolean);
  const mb = (n: number) => (n / 1e6).toFixed(2);
  process.stdout.write(
    `install: ${name} is ${size.toLocaleString('en')} bytes (${mb(size)} MB, budget ${mb(TARBALL_BUDGET)} MB), ${entries.length} entries\n`,
  );
  assert.ok(size <= TARBALL_BUDGET, `the tarball is ${size} bytes, over its ${TARBALL_BUDGET}-byte budget`);
  assert.equal(
    entries.filter((e) => LEFTOVER.test(e)),
    [],
    'no build leftovers, source maps or dependency TypeScript sources',
  );
  for (const e of ['package/dist/relay/store.js', 'package/node_modules/ws/package.json'])
    assert.ok(entries.includes(e), `the tarball holds ${e}`);
  assert.is(compilerCalls(), '', 'no compiler ran');
});

test('npm install -g of the tarball into a prefix, offline, with a cold cache', () => {
  const install = run(
    'npm',
    ['install', '-g', '--prefix', prefix, '--offline', '--no-audit', '--no-fund', tarball],
    work,
  );
  assert.is(install.status, 0, install.stdout + install.stderr);
  assert.is(compilerCalls(), '', 'no compiler ran');
  const v = run(join(prefix, 'bin', 'aep-steer'), ['--version'], work);
  assert.equal([v.status, v.stdout.trim()], [0, JSON.parse(readFileSync(join(clone, 'package.json'), 'utf8')).version]);
});

test('the installed aep-steer starts a relay whose file store keeps an event, with nothing on stderr but its own lines', async () => {
  const relay = await startRelayProcess(join(prefix, 'bin', 'aep-steer'), [], env, work);
  let r: { status: number; body: { stored?: number } };
  try {
    r = await postWithLocalToken(relay.url, join(work, 'state'));
  } finally {
    assert.is(await relay.stop(), 0, relay.stderr());
  }
  assert.is(r.status, 202);
  assert.is(r.body.stored, 1);
  assert.equal(
    relay
      .stderr()
      .split('\n')
      .filter((l) => l !== '' && !l.startsWith('relay: ')),
    [],
    "only the relay's own lines",
  );
});

test.run();
