// The tree is formatted and linted as biome.json says: `npm run lint` (biome check: format and
// lint together) passes with no diagnostic at all. The same settings are shown to refuse a file
// that breaks a rule and one that is not formatted.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const biome = join(root, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');

test('npm run lint passes on the tree, with no warning or note either', () => {
  const r = spawnSync('npm', ['run', '--silent', 'lint'], { cwd: root, encoding: 'utf8' });
  const out = `${r.stdout}${r.stderr}`;
  assert.is(r.status, 0, out);
  assert.not.match(out, /Found \d+ (error|warning|info)/, out);
});

/** Runs biome check on one file in a temp dir holding the project's settings. */
const checkOne = (text: string): { status: number | null; out: string } => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-lint-'));
  try {
    const settings = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8')) as Record<string, unknown>;
    delete settings['$schema'];
    delete settings['vcs'];
    settings['files'] = { includes: ['*.ts'] };
    writeFileSync(join(dir, 'biome.json'), JSON.stringify(settings));
    writeFileSync(join(dir, 'probe.ts'), text);
    const r = spawnSync(process.execPath, [biome, 'check', '--error-on-warnings', 'probe.ts'], {
      cwd: dir,
      encoding: 'utf8',
    });
    return { status: r.status, out: `${r.stdout}${r.stderr}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

test('the settings refuse a broken rule and an unformatted file', () => {
  assert.is(checkOne('export const probe = (a: number): number => a + 1;\n').status, 0);
  const lint = checkOne('export const probe = (a: number): number => {\n  debugger;\n  return a;\n};\n');
  assert.is.not(lint.status, 0);
  assert.match(lint.out, /lint\/suspicious\/noDebugger/);
  const format = checkOne('export const probe = (a: number): number =>   a;\n');
  assert.is.not(format.status, 0);
  assert.match(format.out, /format/);
});

test.run();
