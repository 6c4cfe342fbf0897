#!/usr/bin/env node
// Build: compiles src/ to dist/ (tsc), then copies what tsc does not carry (the command-hook
// shim), so the installed package runs plain JavaScript and needs no TypeScript loader.
// A build none of whose inputs changed since it started is kept as it is (--force compiles anyway):
// `npm ci` builds on `prepare`, and the first `npx aep-steer` in a clone runs `prepare` again (npm
// links the clone into its npx cache as a package), which cost a whole compile before the command.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
// Outside dist/, so the packed tarball does not carry it (.cache/ is ignored, as for node-line.sh).
const stampPath = join(root, '.cache', 'build-inputs.json');
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(dir, e.name)) : [relative(root, join(dir, e.name))],
  );
/** Everything the output depends on: the sources, the compiler settings and version, this script. */
const inputs = () =>
  [
    ...walk(join(root, 'src')),
    'tsconfig.json',
    'tsconfig.build.json',
    'package-lock.json',
    'scripts/build.mjs',
    relative(root, join(dirname(tsc), '..', 'package.json')),
  ].sort();
/** What the build wrote, with sizes, so a removed or cut-short file is noticed. */
const outputs = () =>
  walk(dist)
    .sort()
    .map((f) => `${f} ${statSync(join(root, f)).size}`);

function current() {
  try {
    const stamp = JSON.parse(readFileSync(stampPath, 'utf8'));
    const files = inputs();
    return (
      stamp.inputs.join('\n') === files.join('\n') &&
      files.every((f) => statSync(join(root, f)).mtimeMs < stamp.startedAt) &&
      stamp.outputs.join('\n') === outputs().join('\n')
    );
  } catch {
    return false; // no stamp, an unreadable one, or an input gone: build
  }
}

if (!process.argv.includes('--force') && current()) {
  console.log('build: dist/ is current (no input changed since it was built); nothing compiled (--force compiles)');
  process.exit(0);
}
const startedAt = Date.now();
rmSync(dist, { recursive: true, force: true });
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
const shim = ['adapters', 'shim', 'aep-steer-hook.sh'];
mkdirSync(join(dist, ...shim.slice(0, -1)), { recursive: true });
copyFileSync(join(root, 'src', ...shim), join(dist, ...shim));
chmodSync(join(dist, ...shim), 0o755);
mkdirSync(dirname(stampPath), { recursive: true });
writeFileSync(stampPath, `${JSON.stringify({ startedAt, inputs: inputs(), outputs: outputs() })}\n`);
