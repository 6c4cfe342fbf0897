// `aep-steer doctor <vendor>` finds the CLI scripts/install-vendor-cli.sh pinned in .vendor-clis/
// (AEP_VENDOR_CLIS_DIR points doctor at a stand-in layout here): off PATH, it prints the exact
// PATH line, and that line, run by a shell, makes the check pass; absent, the install command.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { claudeCode } from '../../src/adapters/claude-code/table.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'aep-steer.js');
const SCRIPT = join(ROOT, 'scripts', 'install-vendor-cli.sh');
let dir = '';
let clis = '';
let env: NodeJS.ProcessEnv = {};
// No claude on it: this Node's folder and the system's.
const basePath = `${dirname(process.execPath)}:/usr/bin:/bin`;

/** A stand-in `claude` printing its version as the real one does, at `path`. */
function fakeClaude(path: string, version: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `#!/bin/sh\necho "${version} (Claude Code)"\n`);
  chmodSync(path, 0o755);
}
const pinnedDir = () => join(clis, 'claude-code', 'node_modules', '.bin');

function doctor(extraPath = ''): { status: number | null; out: string; cli: string; fix: string } {
  const r = spawnSync(process.execPath, [BIN, 'doctor', 'claude-code', '--relay', 'ws://127.0.0.1:1/socket'], {
    env: { ...env, PATH: `${extraPath}${basePath}` },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const lines = r.stdout.split('\n');
  const at = lines.findIndex((l) => l.includes(' vendor CLI: '));
  return { status: r.status, out: r.stdout, cli: lines[at] ?? '', fix: lines[at + 1] ?? '' };
}

test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'aep-doctor-cli-'));
  clis = join(dir, 'vendor-clis');
  env = {
    HOME: join(dir, 'home'),
    AEP_STATE_DIR: join(dir, 'state'),
    CLAUDE_CONFIG_DIR: join(dir, 'claude'),
    AEP_VENDOR_CLIS_DIR: clis,
    FORCE_COLOR: '0',
  };
});
test.after.each(() => rmSync(dir, { recursive: true, force: true }));

test('pinned in .vendor-clis but not on PATH: the exact PATH line, which a shell then takes', () => {
  fakeClaude(join(pinnedDir(), 'claude'), claudeCode.version);
  const r = doctor();
  assert.is(r.status, 1);
  assert.is(
    r.cli,
    `✗ vendor CLI: claude is not on PATH; the pinned claude ${claudeCode.version} is in ${pinnedDir()}`,
    r.out,
  );
  const line = `export PATH="${pinnedDir()}:$PATH"`;
  assert.ok(r.fix.startsWith(`    fix: ${line}   # `), r.fix);
  assert.match(r.fix, '~/.bashrc');

  // The printed line as a person pastes it (comment and all), then doctor again in that shell.
  const pasted = r.fix.replace('    fix: ', '');
  const shell = spawnSync(
    '/bin/sh',
    ['-c', `${pasted}\nexec "${process.execPath}" "${BIN}" doctor claude --relay ws://127.0.0.1:1/socket`],
    { env: { ...env, PATH: basePath }, encoding: 'utf8', timeout: 30_000 },
  );
  assert.match(
    shell.stdout,
    `✓ vendor CLI: claude ${claudeCode.version} (${join(pinnedDir(), 'claude')}), the version the claude-code table was observed on`,
  );
  assert.not.match(shell.stdout, /vendor CLI[^\n]*\n\s+fix:/);
});

test('neither on PATH nor pinned: the clone install command, then the PATH line', () => {
  const r = doctor();
  assert.is(r.status, 1);
  assert.is(r.cli, `✗ vendor CLI: claude is not on PATH, nor installed in ${pinnedDir()}`, r.out);
  assert.is(r.fix, `    fix: ${SCRIPT} claude-code, then export PATH="${pinnedDir()}:$PATH"`);
  assert.not.match(r.out, 'npm install -g');
});

test('another version first on PATH while the pinned one is installed: the line that puts the pinned one first', () => {
  fakeClaude(join(pinnedDir(), 'claude'), claudeCode.version);
  const other = join(dir, 'other-bin');
  fakeClaude(join(other, 'claude'), '2.0.1');
  const r = doctor(`${other}:`);
  assert.is(r.status, 1);
  assert.match(r.cli, `✗ vendor CLI: ${join(other, 'claude')} is 2.0.1; the claude-code table was observed on`);
  assert.match(r.cli, `the pinned ${claudeCode.version} in ${pinnedDir()} is not first on PATH`);
  assert.ok(r.fix.startsWith(`    fix: export PATH="${pinnedDir()}:$PATH"`), r.fix);
});

test('the pinned version on PATH: the check holds and names where it found it', () => {
  const own = join(dir, 'own-bin');
  fakeClaude(join(own, 'claude'), claudeCode.version);
  const r = doctor(`${own}:`);
  assert.is(
    r.cli,
    `✓ vendor CLI: claude ${claudeCode.version} (${join(own, 'claude')}), the version the claude-code table was observed on`,
  );
  assert.not.match(r.fix, 'fix:');
});

test.run();
