// scripts/build.mjs keeps dist/ when nothing it was built from changed (the first `npx aep-steer`
// in a clone runs `prepare` again, which used to cost a whole compile before the command), and
// compiles again when a source or an output changed. Run on a small project
// laid out like this one (the same script, the same compiler), so the clone's own dist/ is never
// touched while other tests use it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../support/shared-dir.js';

const root = mkdtempSync(join(tmpdir(), 'aep-build-skip-'));
test.after(() => rmSync(root, { recursive: true, force: true }));

const write = (path: string, text: string): void => {
  mkdirSync(join(root, path, '..'), { recursive: true });
  writeFileSync(join(root, path), text);
};

test.before(() => {
  mkdirSync(join(root, 'scripts'));
  copyFileSync(join(projectRoot, 'scripts', 'build.mjs'), join(root, 'scripts', 'build.mjs'));
  symlinkSync(join(projectRoot, 'node_modules'), join(root, 'node_modules'));
  copyFileSync(join(projectRoot, 'package-lock.json'), join(root, 'package-lock.json'));
  write('tsconfig.json', JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', strict: true } }));
  write(
    'tsconfig.build.json',
    JSON.stringify({
      extends: './tsconfig.json',
      compilerOptions: { rootDir: 'src', outDir: 'dist' },
      include: ['src'],
    }),
  );
  write('src/adapters/shim/aep-steer-hook.sh', '#!/bin/sh\n');
  write('src/main.ts', 'export const answer: number = 41;\n');
});

const build = (): string => {
  const r = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr + r.stdout);
  return r.stdout;
};
const KEPT = /dist\/ is current/;

test('a build with nothing changed keeps dist/; a changed source or a removed output compiles again', () => {
  assert.not.match(build(), KEPT, 'the first build compiles');
  assert.ok(existsSync(join(root, 'dist', 'main.js')));
  assert.match(build(), KEPT, 'nothing changed');
  write('src/main.ts', 'export const answer: number = 42;\n');
  assert.not.match(build(), KEPT, 'a source changed');
  rmSync(join(root, 'dist', 'main.js'));
  assert.not.match(build(), KEPT, 'an output was removed');
  assert.ok(existsSync(join(root, 'dist', 'main.js')));
  assert.match(build(), KEPT);
});

test.run();
