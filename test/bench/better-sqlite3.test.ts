// The bench's better-sqlite3 comparison runs only where the binding loads: a build made for
// another Node line (or no build at all) marks its rows absent and says why, not a failed module.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { betterSqlite3Unusable } from '../../bench/lib/better-sqlite3.js';

const dirs: string[] = [];
/** A directory in which `better-sqlite3` resolves to `source`. */
function withModule(source: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bsq-'));
  dirs.push(dir);
  const mod = join(dir, 'node_modules', 'better-sqlite3');
  mkdirSync(mod, { recursive: true });
  writeFileSync(join(mod, 'package.json'), '{"name":"better-sqlite3","main":"index.js"}');
  writeFileSync(join(mod, 'index.js'), source);
  return dir;
}

const saved = process.env.AEP_BENCH_BETTER_SQLITE3_DIR;
test.after.each(() => {
  if (saved === undefined) delete process.env.AEP_BENCH_BETTER_SQLITE3_DIR;
  else process.env.AEP_BENCH_BETTER_SQLITE3_DIR = saved;
});
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test('a build that loads is usable', () => {
  process.env.AEP_BENCH_BETTER_SQLITE3_DIR = withModule(
    'module.exports = class { constructor(p) { this.p = p; } close() {} };',
  );
  assert.is(betterSqlite3Unusable(), undefined);
});

test('a build for another Node line: absent, naming this line and what to do', () => {
  process.env.AEP_BENCH_BETTER_SQLITE3_DIR = withModule(
    "throw new Error('The module was compiled against a different Node.js version using\\nNODE_MODULE_VERSION 137.');",
  );
  const why = betterSqlite3Unusable() ?? '';
  assert.ok(why.startsWith('absent: '), why);
  assert.ok(why.includes(process.version), why);
  assert.ok(why.includes('compiled against a different Node.js version using NODE_MODULE_VERSION 137'), why);
  assert.ok(why.includes("build it with this line's headers"), why);
});

test('a directory without the module: absent too', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bsq-'));
  dirs.push(dir);
  process.env.AEP_BENCH_BETTER_SQLITE3_DIR = dir;
  assert.match(betterSqlite3Unusable() ?? '', /^absent: better-sqlite3 in .* does not load/);
});

test.run();
