// The bin's Node check: a Node outside package.json's engines gets one line naming the supported
// lines and exit 2 (the hook path exits 0, failing open), before anything else loads.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../support/shared-dir.js';

const work = mkdtempSync(join(tmpdir(), 'aep-node-support-'));
test.after(() => rmSync(work, { recursive: true, force: true }));

/** A copy of the bin beside a package.json declaring `range`, with no dist/ at all. */
const fakeInstall = (range: string): string => {
  const dir = mkdtempSync(join(work, 'pkg-'));
  mkdirSync(join(dir, 'bin'));
  copyFileSync(join(projectRoot, 'bin', 'aep-steer.js'), join(dir, 'bin', 'aep-steer.js'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module', engines: { node: range } }));
  return join(dir, 'bin', 'aep-steer.js');
};
const run = (bin: string, args: string[], node = process.execPath) =>
  spawnSync(node, [bin, ...args], { encoding: 'utf8', timeout: 30_000 });

test('a Node outside engines: one line naming the supported lines, exit 2, nothing loaded', () => {
  const r = run(fakeInstall('^997.1.0 || ^998.0.0 || >=999.0.0'), ['relay']);
  assert.is(r.status, 2, r.stderr);
  assert.is(r.stdout, '');
  const lines = r.stderr.trimEnd().split('\n');
  assert.is(lines.length, 1, r.stderr);
  assert.match(lines[0]!, `Node.js ${process.versions.node} is not supported`);
  assert.match(lines[0]!, 'use Node.js 997 (997.1.0 or later), 998, 999 or newer');
  assert.match(lines[0]!, 'scripts/node-line.sh');
  assert.match(lines[0]!, 'scripts/node-line.sh --profile 24 keeps it', 'the way to keep it for new terminals too');
  assert.not.match(r.stderr, 'dist', 'the check runs before the missing build is noticed');
});

test('the hook path fails open on an unsupported Node: exit 0, nothing on stdout', () => {
  const r = run(fakeInstall('>=999.0.0'), ['hook', 'claude-code']);
  assert.is(r.status, 0);
  assert.is(r.stdout, '');
  assert.match(r.stderr, 'not supported');
});

test('a Node inside engines passes the check (the caret keeps to its line)', () => {
  const [major] = process.versions.node.split('.');
  for (const range of [`^${major}.0.0`, `>=${major}.0.0`, `^1.0.0 || ^${major}.0.0`]) {
    const r = run(fakeInstall(range), ['--version']);
    assert.not.match(r.stderr, 'not supported', range);
    assert.match(r.stderr, 'is missing; run `npm run build`', 'the check passed; the build is what is missing');
  }
  const r = run(fakeInstall(`^${Number(major) - 1}.0.0 || ^${Number(major) + 1}.0.0`), ['--version']);
  assert.is(r.status, 2, 'neither caret line takes this major');
});

test('the project runs on the Node this test runs on, and its engines name 22, 24 and 26', () => {
  const engines: string = JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')).engines.node;
  for (const line of ['22', '24', '26']) assert.match(engines, new RegExp(`\\b${line}\\.`), engines);
  const r = run(join(projectRoot, 'bin', 'aep-steer.js'), ['--version']);
  assert.is(r.status, 0, r.stderr);
});

test('the end-of-life Node 20, where this machine has it, is refused by the real bin', () => {
  const old = '/usr/bin/node';
  if (!existsSync(old)) return;
  const v = spawnSync(old, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  if (!v.startsWith('20.')) return;
  const r = run(join(projectRoot, 'bin', 'aep-steer.js'), ['sessions'], old);
  assert.is(r.status, 2, r.stderr);
  assert.match(r.stderr, `Node.js ${v} is not supported; use Node.js 22 (22.13.0 or later), 24, 26 or newer`);
});

test.run();
