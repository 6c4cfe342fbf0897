// D49: every decision number the project cites resolves inside the repository. docs/decisions.md
// defines each one as a `## D<n> title` heading; a citation anywhere in the code, tests, docs,
// benchmarks or scripts that names a number with no heading fails here, with its file and line.
// The rule is also shown to fire on a planted citation, and each entry is checked to name the
// tests that show it (which must exist) or to say it is not built yet.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');
const recordPath = join(root, 'docs', 'decisions.md');
const scanned = ['src', 'test', 'docs', 'bench', 'scripts', 'bin', 'README.md'];

// A citation is `D` plus one to three digits standing alone: a letter, digit, `_`, `#` or `$`
// before it (hex such as 0xD4, identifiers, colours) or a letter, digit or `_` after it (D4x,
// D1_X, a fourth digit) means it is part of something else, not a decision number.
const citation = /(?<![A-Za-z0-9_#$])D(\d{1,3})(?![A-Za-z0-9_])/g;

type Source = { path: string; text: string };
type Entry = { n: number; title: string; body: string[] };

const entries = (record: string): Entry[] => {
  const out: Entry[] = [];
  for (const line of record.split('\n')) {
    const h = /^## D(\d+) (\S.*)$/.exec(line);
    if (h) out.push({ n: Number(h[1]), title: h[2]!, body: [] });
    else out.at(-1)?.body.push(line);
  }
  return out;
};

/** `path:line Dn` for each citation in `sources` whose number `defined` lacks. */
const undefinedCitations = (sources: Source[], defined: Set<number>): string[] =>
  sources.flatMap(({ path, text }) =>
    text.split('\n').flatMap((line, i) =>
      [...line.matchAll(citation)]
        .map((m) => Number(m[1]))
        .filter((n) => !defined.has(n))
        .map((n) => `${path}:${i + 1} D${n}`),
    ),
  );

const walk = (p: string): string[] =>
  statSync(p).isDirectory() ? readdirSync(p).flatMap((name) => walk(join(p, name))) : [p];

const tree = (): Source[] =>
  scanned
    .map((p) => join(root, p))
    .filter((p) => existsSync(p))
    .flatMap(walk)
    .map((p) => ({ path: relative(root, p), text: readFileSync(p, 'utf8') }));

const record = readFileSync(recordPath, 'utf8');
const defined = new Set(entries(record).map((e) => e.n));

test('every D-number cited in the tree is defined in docs/decisions.md', () => {
  const sources = tree();
  const sawSources = sources.some((s) => s.path.startsWith('src/'));
  assert.ok(sawSources, 'the scan found the sources');
  const missing = undefinedCitations(sources, defined);
  assert.equal(missing, [], `cited but not defined in docs/decisions.md:\n${missing.join('\n')}`);
});

test('the check reports a citation of an undefined number, and not look-alikes', () => {
  // Built at run time so this file does not itself cite the number it plants.
  const absent = 999;
  assert.not.ok(defined.has(absent));
  const planted = [
    `// see D${absent} for why`,
    `const a = 0xD${absent}; const b = fooD${absent}; const c = 'D${absent}abc'; const d = D${absent}_X;`,
    `// D${absent}1 has four digits; #D${absent} is a colour`,
    '// D4 is defined',
  ].join('\n');
  assert.equal(undefinedCitations([{ path: 'planted.ts', text: planted }], defined), [`planted.ts:1 D${absent}`]);
});

test('the record defines each number once, from D1 up with no gap', () => {
  const ns = entries(record).map((e) => e.n);
  assert.ok(ns.length > 0);
  const expected = ns.map((_, i) => i + 1);
  assert.equal(ns, expected);
});

test('each entry names the tests that show it, which exist, or says it is not built yet', () => {
  const testFile = /^test\/.+\.(test|e2e|nats|faults|browser|install|conf)\.ts$/;
  const problems: string[] = [];
  for (const e of entries(record)) {
    // "Shown by:" may wrap: it runs to the next blank line.
    const start = e.body.findIndex((l) => l.startsWith('Shown by:'));
    const end = start < 0 ? -1 : e.body.findIndex((l, i) => i > start && l.trim() === '');
    const shown = start < 0 ? '' : e.body.slice(start, end < 0 ? undefined : end).join(' ');
    const files = [...shown.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
    const notBuilt = e.body.some((l) => /^Not built yet\b/.test(l));
    if (files.length === 0 && !notBuilt) problems.push(`D${e.n}: no "Shown by:" test and no "Not built yet"`);
    for (const f of files) {
      if (!testFile.test(f)) problems.push(`D${e.n}: ${f} is not a test file`);
      else if (!existsSync(join(root, f))) problems.push(`D${e.n}: ${f} does not exist`);
    }
    if (e.body.every((l) => l.trim() === '' || l.startsWith('Shown by:') || l.startsWith('Not built yet')))
      problems.push(`D${e.n}: says nothing about what it settles`);
  }
  assert.equal(problems, [], problems.join('\n'));
});

test.run();
