// The package's runtime dependencies are exactly what the shipped code needs: each is imported by
// src/ or bin/, or by the code of another runtime dependency (some import packages they do not
// declare); what only tests use is a devDependency, so a global install does not carry it. Every
// runtime dependency is bundled (the offline install), and nothing else is.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../support/shared-dir.js';

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  bundleDependencies?: string[];
}

const manifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;
const pkg = manifest(projectRoot);
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)['"]([^'"./][^'"]*)['"]/g;
const packageOf = (spec: string): string =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

function files(dir: string, exts: RegExp, out: string[] = []): string[] {
  if (!existsSync(dir)) return out;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (name === 'node_modules') continue;
    if (statSync(p).isDirectory()) files(p, exts, out);
    else if (exts.test(name)) out.push(p);
  }
  return out;
}

function importsIn(paths: string[]): Set<string> {
  const found = new Set<string>();
  for (const p of paths) {
    for (const m of readFileSync(p, 'utf8').matchAll(SPECIFIER)) {
      const spec = m[1]!;
      if (!spec.startsWith('node:') && /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*/.test(spec)) found.add(packageOf(spec));
    }
  }
  return found;
}

const shipped = importsIn([...files(join(projectRoot, 'src'), /\.ts$/), ...files(join(projectRoot, 'bin'), /\.js$/)]);

test('every package the shipped code imports is a runtime dependency', () => {
  const runtime = new Set(Object.keys(pkg.dependencies ?? {}));
  const missing = [...shipped].filter((p) => !runtime.has(p) && !p.startsWith('node:'));
  assert.equal(missing, [], `imported by src/ or bin/ but not in dependencies: ${missing.join(', ')}`);
});

test('every runtime dependency is needed by the shipped code (what only tests use is a devDependency)', () => {
  const runtime = Object.keys(pkg.dependencies ?? {});
  const reached = new Set<string>();
  const queue = [...shipped];
  while (queue.length > 0) {
    const p = queue.shift()!;
    if (reached.has(p)) continue;
    reached.add(p);
    const dir = join(projectRoot, 'node_modules', p);
    if (!existsSync(join(dir, 'package.json'))) continue;
    const m = manifest(dir);
    queue.push(...Object.keys({ ...m.dependencies, ...m.peerDependencies, ...m.optionalDependencies }));
    queue.push(...importsIn(files(dir, /\.(m|c)?js$/)));
  }
  const unneeded = runtime.filter((d) => !reached.has(d));
  assert.equal(
    unneeded,
    [],
    `runtime dependencies nothing shipped imports (move them to devDependencies, or drop them): ${unneeded.join(', ')}`,
  );
});

test('the bundled dependencies are the runtime dependencies, no more', () => {
  assert.equal([...(pkg.bundleDependencies ?? [])].sort(), Object.keys(pkg.dependencies ?? {}).sort());
});

test.run();
