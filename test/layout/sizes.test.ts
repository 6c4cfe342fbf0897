// Small parts: no file of src/ is over MAX_FILE_LINES lines and no function over MAX_FUNCTION_LINES,
// so each part can be read whole. Functions are found with the TypeScript compiler's own parser
// (every function-like node with a body: declarations, methods, accessors, constructors,
// function expressions and arrows), counted from their first token to their last line.
// The offenders that predate the rule are named below, each a file or a function in a file. It is
// a ratchet: a listed part that is no longer over its limit (split, moved or gone) fails the test
// too, so the list is cut as parts are split and never grows. A moved offender comes off the list
// under its old name and may not come back under its new one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const MAX_FILE_LINES = 500;
const MAX_FUNCTION_LINES = 120;

/** Files over MAX_FILE_LINES when the rule came in (paths from the project root). */
const FILES_OVER: readonly string[] = [];

/** Functions over MAX_FUNCTION_LINES when the rule came in: `file#name` (a method as `Class.method`). */
const FUNCTIONS_OVER: readonly string[] = [];

interface Oversize {
  /** `file` for a file, `file#name` for a function. */
  id: string;
  lines: number;
}

/** Lines of a text as an editor numbers them (a final line break ends the last line). */
const lineCount = (text: string): number => {
  if (text === '') return 0;
  const breaks = text.split('\n').length - 1;
  return text.endsWith('\n') ? breaks : breaks + 1;
};

/** What a function is called where it is written: its own name, its variable's or property's, else `(anonymous)`. */
function functionName(node: ts.SignatureDeclaration, sf: ts.SourceFile): string {
  const own = (node as { name?: ts.PropertyName }).name;
  const parent = node.parent;
  // The node that carries the name: the function itself, or the variable or property it is assigned to.
  let holder: ts.Node = node;
  let name: string | undefined;
  if (ts.isConstructorDeclaration(node)) name = 'constructor';
  else if (own !== undefined) name = own.getText(sf);
  else if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    name = parent.name.getText(sf);
    holder = parent;
  }
  const cls = ts.isClassLike(holder.parent) ? holder.parent.name?.getText(sf) : undefined;
  const base = name ?? '(anonymous)';
  return cls === undefined ? base : `${cls}.${base}`;
}

/** The file and the functions of one source text that are over their limits. */
function oversized(path: string, text: string, limits = { file: MAX_FILE_LINES, fn: MAX_FUNCTION_LINES }) {
  const found: Oversize[] = [];
  const lines = lineCount(text);
  if (lines > limits.file) found.push({ id: path, lines });
  const sf = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const n = last - first + 1;
      if (n > limits.fn) found.push({ id: `${path}#${functionName(node, sf)}`, lines: n });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

/**
 * Against the listed offenders: what is over its limit and not listed, and what is listed and no
 * longer over it (split, renamed, moved or removed: take it off the list).
 */
function judge(found: readonly Oversize[], listed: readonly string[]): { unlisted: Oversize[]; stale: string[] } {
  const over = new Set(found.map((f) => f.id));
  return {
    unlisted: found.filter((f) => !listed.includes(f.id)),
    stale: listed.filter((id) => !over.has(id)),
  };
}

const root = resolve(import.meta.dirname, '../..');

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return sources(p);
    return /\.(ts|mts|cts|tsx)$/.test(d.name) && !d.name.endsWith('.d.ts') ? [p] : [];
  });

test(`no file of src/ over ${MAX_FILE_LINES} lines, no function over ${MAX_FUNCTION_LINES}, but the listed ones, each still over`, () => {
  const found = sources(join(root, 'src')).flatMap((file) =>
    oversized(relative(root, file).split('\\').join('/'), readFileSync(file, 'utf8')),
  );
  const { unlisted, stale } = judge(found, [...FILES_OVER, ...FUNCTIONS_OVER]);
  assert.equal(
    unlisted.map((f) => `${f.id} (${f.lines} lines)`),
    [],
    'over the limit: split it by job (a function into smaller ones, a file into modules beside it)',
  );
  assert.equal(stale, [], 'no longer over the limit: take it off the list in test/layout/sizes.test.ts');
});

test('the checker fires on a file and a function just over the limits, and not at them', () => {
  const body = (n: number): string => Array.from({ length: n }, (_, i) => `  x += ${i};`).join('\n');
  // A declaration of `n` lines in all: its first line, n - 2 statements, its closing brace.
  const fn = (name: string, n: number): string => `function ${name}(): number {\n  let x = 0;\n${body(n - 3)}\n}\n`;
  const filler = (n: number): string => Array.from({ length: n }, (_, i) => `export const c${i} = ${i};\n`).join('');
  const atLimits = fn('fits', MAX_FUNCTION_LINES) + filler(MAX_FILE_LINES - MAX_FUNCTION_LINES);
  assert.is(lineCount(atLimits), MAX_FILE_LINES);
  assert.equal(oversized('at.ts', atLimits), []);

  const over = `${fn('tooLong', MAX_FUNCTION_LINES + 1)}${filler(MAX_FILE_LINES - MAX_FUNCTION_LINES)}`;
  assert.equal(oversized('over.ts', over), [
    { id: 'over.ts', lines: MAX_FILE_LINES + 1 },
    { id: 'over.ts#tooLong', lines: MAX_FUNCTION_LINES + 1 },
  ]);
});

test('every kind of function is found and named: methods, constructors, accessors, arrows, nested ones', () => {
  const limits = { file: 10_000, fn: 3 };
  const lines = (n: number) => Array.from({ length: n }, () => '    void 0;').join('\n');
  const text = [
    'export class Box {',
    `  constructor() {\n${lines(3)}\n  }`,
    `  open(): void {\n${lines(3)}\n  }`,
    `  get size(): number {\n${lines(3)}\n    return 1;\n  }`,
    `  handler = () => {\n${lines(3)}\n  };`,
    '}',
    `export const arrow = (): void => {\n${lines(3)}\n};`,
    `export const table = { entry: function (): void {\n${lines(3)}\n} };`,
    `export function outer(): void {\n  const inner = () => {\n${lines(3)}\n  };\n  inner();\n}`,
    `export default function (): void {\n${lines(3)}\n}`,
    'export function short(): void {\n  void 0;\n}',
    '',
  ].join('\n');
  assert.equal(
    oversized('kinds.ts', text, limits).map((f) => f.id),
    [
      'kinds.ts#Box.constructor',
      'kinds.ts#Box.open',
      'kinds.ts#Box.size',
      'kinds.ts#Box.handler',
      'kinds.ts#arrow',
      'kinds.ts#entry',
      'kinds.ts#outer',
      'kinds.ts#inner',
      'kinds.ts#(anonymous)',
    ],
  );
});

test('the list is a ratchet: an unlisted offender fails, and so does a listed part no longer over', () => {
  const found: Oversize[] = [
    { id: 'src/a.ts', lines: 600 },
    { id: 'src/b.ts#big', lines: 200 },
  ];
  assert.equal(judge(found, ['src/a.ts', 'src/b.ts#big']), { unlisted: [], stale: [] });
  assert.equal(judge(found, ['src/a.ts']), { unlisted: [{ id: 'src/b.ts#big', lines: 200 }], stale: [] });
  assert.equal(judge(found, ['src/a.ts', 'src/b.ts#big', 'src/split.ts']), {
    unlisted: [],
    stale: ['src/split.ts'],
  });
});

test.run();
