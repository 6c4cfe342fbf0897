// The tables of docs/errors.md list exactly the codes the software can send. The codes are read
// from the sources, wherever they are declared: the string unions of rule ids and refusal and
// error codes (any `type …RuleId`, `…RefusalCode`, `…ErrorCode` in src/), and the literal codes
// of relay `error` frames, HTTP error bodies and the MCP tools' and console's own refusals. A new
// code without a row there fails, and so does a row whose code the software never sends.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith('.ts') ? [join(dir, d.name)] : [],
  );
// Comments are not code (and may hold a quote or a semicolon).
const stripComments = (t: string): string => t.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
const sources = files(join(root, 'src')).map((f) => ({
  file: relative(root, f),
  code: stripComments(readFileSync(f, 'utf8')),
}));

interface Union {
  name: string;
  file: string;
  members: string[];
  start: number;
  end: number;
}

/** `type X = 'a' | 'b' …;` for every code union, with where it is declared. */
function unions(): Union[] {
  const decl = /(?:export\s+)?type\s+([A-Za-z]*(?:RuleId|RefusalCode|ErrorCode))\s*=([^;]*);/g;
  return sources.flatMap(({ file, code }) =>
    [...code.matchAll(decl)].map((m) => ({
      name: m[1]!,
      file,
      members: [...m[2]!.matchAll(/'([^']+)'/g)].map((x) => x[1]!),
      start: m.index,
      end: m.index + m[0].length,
    })),
  );
}

/** Codes written as literals into relay `error` frames, HTTP error bodies and local refusals. */
function literalCodes(): Set<string> {
  const out = new Set<string>();
  for (const { code: text } of sources) {
    for (const m of text.matchAll(/type: 'error'[^}]*?\bcode: '([a-z][a-z0-9-]*)'/g)) out.add(m[1]!);
    for (const m of text.matchAll(/\{\s*error: '([a-z][a-z0-9-]*)'/g)) out.add(m[1]!);
    // The MCP tools' and the console's own refusals, before anything is sent (consumer/explain.ts).
    for (const m of text.matchAll(/\brefusal\(\s*'([a-z][a-z0-9-]*)'/g)) out.add(m[1]!);
  }
  return out;
}

/** The first cell of every table row in docs/errors.md. */
function documentedCodes(): string[] {
  const doc = readFileSync(join(root, 'docs', 'errors.md'), 'utf8');
  assert.ok(doc.startsWith('# Errors\n'), 'docs/errors.md is the "Errors" page');
  return [...doc.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => m[1]!);
}

test('every code union member is sent somewhere, not only declared', () => {
  const found = unions();
  assert.ok(
    found.some((u) => u.name === 'RuleId') && found.some((u) => u.name === 'RelayRefusalCode'),
    'the unions are found',
  );
  for (const u of found) {
    const elsewhere = sources
      .map((s) => (s.file === u.file ? s.code.slice(0, u.start) + s.code.slice(u.end) : s.code))
      .join('\n');
    for (const code of u.members)
      assert.ok(elsewhere.includes(`'${code}'`), `${u.name} member ${code} (${u.file}) is never used`);
  }
});

test('the docs/errors.md tables list exactly the codes the sources can send', () => {
  const code = new Set([...unions().flatMap((u) => u.members), ...literalCodes()]);
  const rows = documentedCodes();
  assert.equal(
    rows.filter((c, i) => rows.indexOf(c) !== i),
    [],
    'each code has one row',
  );
  const listed = new Set(rows);
  assert.equal(
    [...code].filter((c) => !listed.has(c)).sort(),
    [],
    'codes the sources send with no row in docs/errors.md',
  );
  assert.equal(
    [...listed].filter((c) => !code.has(c)).sort(),
    [],
    'docs/errors.md rows for codes the sources never send',
  );
});

test.run();
