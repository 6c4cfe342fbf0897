// `scripts/node-line.sh --profile 24` makes the set-up outlast the terminal: in a fresh HOME, a new
// shell started with nothing but HOME and the system PATH (as `env -i` gives it) finds the pinned
// Node line and `aep-steer` (the ~/.local/bin launcher, which runs this clone's bin/aep-steer.js).
// Login shells (bash, sh) read ~/.profile, an interactive bash ~/.bashrc; each is spawned for real.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'node-line.sh');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
const SYSTEM_PATH = '/usr/bin:/bin';
let home = '';

/** The step a person runs once, from their terminal (SHELL says which shell they use). */
function profile(shell = '/bin/bash', line = '24', extra: NodeJS.ProcessEnv = {}) {
  return spawnSync(SCRIPT, ['--profile', line], {
    env: { HOME: home, SHELL: shell, PATH: process.env['PATH'], ...extra },
    encoding: 'utf8',
    timeout: 120_000,
  });
}

/** A new shell, as a new terminal starts it: only HOME and the system PATH. */
function newShell(argv: string[]) {
  return spawnSync(argv[0]!, [...argv.slice(1), 'aep-steer --version; node --version; command -v aep-steer'], {
    env: { HOME: home, PATH: SYSTEM_PATH },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

const nodeVersion = () =>
  spawnSync(SCRIPT, ['--bin', '24'], { encoding: 'utf8' })
    .stdout.trim()
    .match(/node\/(\d+\.\d+\.\d+)\/bin$/)![1]!;

test.before.each(() => {
  home = mkdtempSync(join(tmpdir(), 'aep-node-line-home-'));
});
test.after.each(() => rmSync(home, { recursive: true, force: true }));

test('before the step, a new shell has neither (the system node is not the pinned line)', () => {
  const r = newShell(['bash', '-lc']);
  assert.not.match(r.stdout, VERSION);
  assert.not.match(r.stdout, `v${nodeVersion()}`);
});

test('after --profile, new login and interactive shells find aep-steer and the pinned node', () => {
  const r = profile();
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, 'wrote ~/.local/bin/aep-steer');
  assert.match(r.stdout, 'added an aep-steering PATH block to ~/.profile');
  assert.match(r.stdout, 'added an aep-steering PATH block to ~/.bashrc');
  assert.match(r.stdout, 'next: open a new terminal');
  for (const argv of [
    ['bash', '-lc'],
    ['sh', '-lc'],
    ['bash', '-ic'],
  ]) {
    const s = newShell(argv);
    assert.equal(
      s.stdout.trim().split('\n'),
      [VERSION, `v${nodeVersion()}`, join(home, '.local', 'bin', 'aep-steer')],
      `${argv.join(' ')}: ${s.stderr}`,
    );
  }
});

test('run again: nothing added twice; another line replaces the block; other lines stay', () => {
  writeFileSync(join(home, '.profile'), 'export KEEP_ME=1');
  assert.is(profile().status, 0);
  const again = profile();
  assert.is(again.status, 0, again.stderr);
  assert.match(again.stdout, '~/.profile already puts Node.js');
  assert.match(again.stdout, '~/.local/bin/aep-steer already runs');
  const text = readFileSync(join(home, '.profile'), 'utf8');
  assert.is(text.split('# >>> aep-steering PATH').length - 1, 1, text);
  assert.ok(text.startsWith('export KEEP_ME=1\n# >>> aep-steering PATH'), text);

  // Another line, from a cache holding a stand-in node 22 (no download in a test).
  const v22 = /^\s*22\) version='([\d.]+)'/m.exec(readFileSync(SCRIPT, 'utf8'))![1]!;
  const cache = join(home, 'cache');
  mkdirSync(join(cache, v22, 'bin'), { recursive: true });
  writeFileSync(
    join(cache, v22, 'bin', 'node'),
    `#!/bin/sh\ncase "$1" in -p) echo ${v22} ;; --version) echo v${v22} ;; esac\n`,
    { mode: 0o755 },
  );
  const other = profile('/bin/bash', '22', { AEP_NODE_CACHE_DIR: cache });
  assert.is(other.status, 0, other.stderr);
  assert.match(other.stdout, 'replaced the aep-steering PATH block in ~/.profile');
  const after = readFileSync(join(home, '.profile'), 'utf8');
  assert.is(after.split('# >>> aep-steering PATH').length - 1, 1, after);
  assert.match(after, 'export KEEP_ME=1');
  const s = newShell(['bash', '-lc']);
  assert.match(s.stdout, `v${v22}`, s.stderr);
});

test("bash's own login file is written when it exists (bash then skips ~/.profile)", () => {
  writeFileSync(join(home, '.bash_profile'), '# mine\n');
  const r = profile();
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, 'added an aep-steering PATH block to ~/.bash_profile');
  const s = newShell(['bash', '-lc']);
  assert.match(s.stdout, VERSION, s.stderr);
});

test('an aep-steer in ~/.local/bin that the script did not write is left alone, and said so', () => {
  mkdirSync(join(home, '.local', 'bin'), { recursive: true });
  writeFileSync(join(home, '.local', 'bin', 'aep-steer'), '#!/bin/sh\necho mine\n', { mode: 0o755 });
  const r = profile();
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, '~/.local/bin/aep-steer exists and is not one this script wrote; left as it is');
  assert.is(readFileSync(join(home, '.local', 'bin', 'aep-steer'), 'utf8'), '#!/bin/sh\necho mine\n');
});

test.run();
