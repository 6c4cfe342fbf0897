#!/usr/bin/env node
// Regenerates the benchmark table in docs/benchmarks.md from bench/results/latest.json (written by
// `npm run bench`): the lines between the two bench-table markers are replaced, nothing else.
// `--check` exits 1 when the table there differs from what the JSON gives.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const START = '<!-- bench-table:start (scripts/bench-table.mjs writes this from bench/results/latest.json) -->';
const END = '<!-- bench-table:end -->';

// A figure that could not be measured here (NaN, null in the JSON) shows as a dash.
const fmt = (n) =>
  n === null || Number.isNaN(n)
    ? '—'
    : !Number.isFinite(n)
      ? String(n)
      : Math.abs(n) >= 100
        ? Math.round(n).toLocaleString('en')
        : Math.abs(n) >= 1
          ? n.toFixed(2)
          : n.toPrecision(3);

export function table(results) {
  const nodes = results.nodes ?? [results.node];
  const rows = [
    `Measured ${results.at.slice(0, 16).replace('T', ' ')} UTC, Node ${nodes.join(', ')}, ${results.cpus ?? '?'} CPUs, ` +
      'interleaved rounds per figure as each row says (medians; "quick": a smoke run, smaller loads). ' +
      'Each row names the Node line that ran it, the 1-minute load average before and after its module, and the relay store it measured.',
    '',
    '| figure | value | baseline (same run) | ratio | goal | rounds | Node | load avg | store |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const f of results.figures) {
    const goal = f.goal ? `${f.goal.replace('<=', '≤').replace('>=', '≥')}x ${f.met ? 'met' : '**not met**'}` : '';
    const load = f.load ? `${f.load[0]}–${f.load[1]}` : '';
    rows.push(
      `| ${f.what} | ${fmt(f.value)} ${f.unit} | ${f.baselineWhat}: ${fmt(f.baseline)} ${f.unit} | ${fmt(f.ratio)}x | ${goal} |` +
        ` ${f.rounds ?? 1}${f.quick ? ' (quick)' : ''} | ${f.node ?? results.node} | ${load} | ${f.store ?? ''} |`,
    );
  }
  // One line per figure and note; a figure whose note differs between Node lines names the line.
  const byName = new Map();
  for (const f of results.figures) {
    const lines = byName.get(f.name) ?? new Map();
    lines.set(f.node ?? results.node, f.note);
    byName.set(f.name, lines);
  }
  const notes = [];
  for (const [name, lines] of byName) {
    const said = [...lines].filter(([, note]) => note);
    if (said.length === 0) continue;
    const shared = said.length === lines.size && new Set(said.map(([, note]) => note)).size === 1;
    if (shared) notes.push(`- \`${name}\`: ${said[0][1]}`);
    else for (const [node, note] of said) notes.push(`- \`${name}\` (${node}): ${note}`);
  }
  return [...rows, ...(notes.length ? ['', ...notes] : [])].join('\n');
}

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1];
if (isMain) {
  const results = JSON.parse(readFileSync(join(root, 'bench', 'results', 'latest.json'), 'utf8'));
  const docPath = join(root, 'docs', 'benchmarks.md');
  const doc = readFileSync(docPath, 'utf8');
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a === -1 || b === -1 || b < a) {
    process.stderr.write(`bench-table: docs/benchmarks.md has no ${START} … ${END} block\n`);
    process.exit(2);
  }
  const next = `${doc.slice(0, a + START.length)}\n\n${table(results)}\n\n${doc.slice(b)}`;
  if (process.argv.includes('--check')) {
    process.exit(next === doc ? 0 : 1);
  }
  writeFileSync(docPath, next);
  process.stdout.write(`bench-table: docs/benchmarks.md table from ${results.figures.length} figures\n`);
}
