// The bench measures the build the CLI runs: with AEP_BENCH_BUILT_ROOTS naming a checkout, a
// child started with the bench's `--import` loads that checkout's src/ modules from its dist/;
// a build older than its source is an error that says to build, never a silent fallback.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtImport } from '../../bench/lib/proc.js';

const checkout = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-built-'));
  mkdirSync(join(dir, 'src'));
  mkdirSync(join(dir, 'dist'));
  mkdirSync(join(dir, 'bench'));
  writeFileSync(join(dir, 'package.json'), '{"type":"module"}');
  writeFileSync(join(dir, 'src', 'where.ts'), "export const where: string = 'source';\n");
  writeFileSync(join(dir, 'dist', 'where.js'), "export const where = 'build';\n");
  writeFileSync(join(dir, 'bench', 'main.ts'), "import { where } from '../src/where.js';\nconsole.log(where);\n");
  return dir;
};

/** Runs `body` on a fresh checkout, removed afterwards. */
const inCheckout = (body: (dir: string) => void): void => {
  const dir = checkout();
  try {
    body(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

// A Node line without `module.registerHooks` (22.13-22.14): this one with it taken away, after
// tsx has registered its own, so built.mjs takes the loader-thread form (`module.register`).
const WITHOUT_REGISTER_HOOKS =
  'data:text/javascript,import m from "node:module"; delete m.registerHooks; ' +
  'if (typeof m.registerHooks === "function") throw new Error("registerHooks is still there");';

const run = (dir: string, roots?: string, opts: { loaderThread?: boolean } = {}) => {
  const env = { ...process.env };
  delete env.AEP_BENCH_BUILT_ROOTS;
  if (roots !== undefined) env.AEP_BENCH_BUILT_ROOTS = roots;
  const pre = opts.loaderThread ? ['--import', WITHOUT_REGISTER_HOOKS] : [];
  return spawnSync(process.execPath, ['--import', 'tsx', ...pre, ...builtImport(env), join(dir, 'bench', 'main.ts')], {
    cwd: join(import.meta.dirname, '..', '..'),
    env,
    encoding: 'utf8',
  });
};

test('a checkout the bench built loads its src/ modules from dist/', () =>
  inCheckout((dir) => {
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'src', 'where.ts'), old, old);
    const r = run(dir, dir);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout.trim(), 'build');
  }));

test('without the roots set, the sources run through tsx as before', () =>
  inCheckout((dir) => {
    const r = run(dir);
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout.trim(), 'source');
  }));

test('a build older than its source stops the child and says to build', () =>
  inCheckout((dir) => {
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'dist', 'where.js'), old, old);
    const r = run(dir, dir);
    assert.is.not(r.status, 0);
    assert.match(r.stderr, 'is missing or older than its source; run `npm run build`');
    assert.is.not(r.stdout.trim(), 'source');
  }));

test('without module.registerHooks, the loader-thread form loads the build and refuses a stale one', () => {
  inCheckout((dir) => {
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'src', 'where.ts'), old, old);
    const r = run(dir, dir, { loaderThread: true });
    assert.is(r.status, 0, r.stderr);
    assert.is(r.stdout.trim(), 'build');
  });
  inCheckout((dir) => {
    const old = new Date(Date.now() - 60_000);
    utimesSync(join(dir, 'dist', 'where.js'), old, old);
    const r = run(dir, dir, { loaderThread: true });
    assert.is.not(r.status, 0);
    assert.match(r.stderr, 'is missing or older than its source; run `npm run build`');
    assert.is.not(r.stdout.trim(), 'source');
  });
});

test.run();
