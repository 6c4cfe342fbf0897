#!/usr/bin/env node
// `prepack`: takes out of the bundled runtime dependencies (the lockfile's node_modules entries not
// marked dev) what nothing runs, so the tarball carries code and not its leftovers: source maps,
// TypeScript sources (declarations stay: the typecheck of a clone reads them), and a `src/` tree
// left with no JavaScript in it (superjson's holds its tests and a 6.6 MB fixture), and the
// browser builds (UMD and minified copies: rxjs, xstate, tweetnacl) that Node never loads, unless
// the package's own entry points name one. Run in a
// clone's node_modules, which `npm ci` rebuilds; `--dry-run` only counts.
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const dry = process.argv.includes('--dry-run');
const SOURCE_MAP = /\.map$/;
const TS_SOURCE = /(?<!\.d)\.[mc]?ts$/;
const JAVASCRIPT = /\.[mc]?js$/;
const DECLARATION = /\.d\.[mc]?ts$/;
const BROWSER_BUILD = /\.(?:umd|min)(?:\.min)?\.[mc]?js$/;

/** Every file a package's manifest names as an entry for Node or a bundler (`main`, `module`, `exports`). */
function entriesOf(dir) {
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  } catch {
    return new Set();
  }
  const out = new Set();
  const walk = (v) => {
    if (typeof v === 'string') out.add(join(dir, v));
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x);
  };
  walk([manifest.main, manifest.module, manifest.exports]);
  return out;
}

/** Files under `dir`, not descending into a nested node_modules (its packages are listed on their own). */
function filesIn(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory() && e.name !== 'node_modules') out.push(...filesIn(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8'));
const bundled = Object.entries(lock.packages)
  .filter(([p, m]) => p.startsWith('node_modules/') && !m.dev && !m.link)
  .map(([p]) => join(root, p));
let files = 0;
let bytes = 0;
const drop = (p) => {
  files += 1;
  bytes += statSync(p).size;
  if (!dry) rmSync(p);
};
for (const dir of bundled) {
  let all;
  try {
    all = filesIn(dir);
  } catch {
    continue; // an optional dependency not installed here
  }
  for (const f of all) if (SOURCE_MAP.test(f) || TS_SOURCE.test(f)) drop(f);
  const entries = entriesOf(dir);
  for (const f of all) if (BROWSER_BUILD.test(f) && !entries.has(f)) drop(f);
  const src = join(dir, 'src');
  const left = all.filter(
    (f) => f.startsWith(`${src}/`) && !SOURCE_MAP.test(f) && !TS_SOURCE.test(f) && !DECLARATION.test(f),
  );
  if (left.length > 0 && !left.some((f) => JAVASCRIPT.test(f))) for (const f of left) drop(f);
}
process.stderr.write(
  `prune-bundle: ${dry ? 'would remove' : 'removed'} ${files} files (${(bytes / 2 ** 20).toFixed(1)} MiB) from ${bundled.length} bundled packages\n`,
);
