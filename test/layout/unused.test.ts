// Nothing unused: `npm run unused` (knip with knip.json) finds no unused file, export or
// dependency in the tree. On a scratch copy of the tracked files, an unused export, an export
// read only inside its own module, an orphan module and a dependency nothing imports are each
// reported where they were planted, and a module only a test imports is not.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import {
  appendFileSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const knip = join(root, 'node_modules', 'knip', 'bin', 'knip.js');

test('npm run unused passes on the tree and prints nothing', () => {
  const r = spawnSync('npm', ['run', '--silent', 'unused'], { cwd: root, encoding: 'utf8' });
  const out = `${r.stdout}${r.stderr}`;
  assert.is(r.status, 0, out);
  assert.is(out.trim(), '', out);
});

interface Named {
  name: string;
}
interface FileIssues {
  file: string;
  files?: Named[];
  exports?: Named[];
  dependencies?: Named[];
}

/** A copy of the tracked files (as they are in the work tree) sharing this tree's node_modules. */
const withCopy = (fn: (dir: string) => void): void => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-unused-'));
  try {
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
    for (const path of tracked.filter(Boolean)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      cpSync(join(root, path), join(dir, path));
    }
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir');
    fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

test('on a copy, each planted unused thing is reported where it was planted', () => {
  withCopy((dir) => {
    appendFileSync(join(dir, 'src/relay/origin.ts'), 'export const plantedUnused = 1;\n');
    appendFileSync(
      join(dir, 'src/relay/hub.ts'),
      'export const plantedLocal = 2;\nexport const plantedUser = (): number => plantedLocal;\n',
    );
    writeFileSync(join(dir, 'src/relay/planted-orphan.ts'), 'export const orphan = 3;\n');
    // A module only a test imports: tests are entries, so this is in use.
    writeFileSync(join(dir, 'src/relay/planted-tested.ts'), 'export const tested = 4;\n');
    writeFileSync(
      join(dir, 'test/relay/planted.test.ts'),
      "import { tested } from '../../src/relay/planted-tested.js';\nconsole.log(tested);\n",
    );
    const pkgPath = join(dir, 'package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8')) as { dependencies: Record<string, string> };
    pkg.dependencies['aep-planted-dependency'] = '1.0.0';
    writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));

    const r = spawnSync(process.execPath, [knip, '--reporter', 'json'], { cwd: dir, encoding: 'utf8' });
    assert.is(r.status, 1, `${r.stdout}${r.stderr}`);
    const issues = (JSON.parse(r.stdout) as { issues: FileIssues[] }).issues;
    const found = (file: string, kind: 'files' | 'exports' | 'dependencies'): string[] =>
      issues.filter((i) => i.file === file).flatMap((i) => (i[kind] ?? []).map((n) => n.name));

    assert.ok(found('src/relay/origin.ts', 'exports').includes('plantedUnused'), r.stdout);
    // Read in its own module only: still an export nothing needs.
    assert.ok(found('src/relay/hub.ts', 'exports').includes('plantedLocal'), r.stdout);
    assert.equal(found('src/relay/planted-orphan.ts', 'files'), ['src/relay/planted-orphan.ts'], r.stdout);
    assert.equal(found('package.json', 'dependencies'), ['aep-planted-dependency'], r.stdout);
    assert.equal(found('src/relay/planted-tested.ts', 'files'), [], r.stdout);
    assert.equal(found('src/relay/planted-tested.ts', 'exports'), [], r.stdout);
  });
});

test.run();
