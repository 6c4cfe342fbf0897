// Runs every bench/*.bench.ts (or those named on the command line), prints one table and
// writes bench/results/latest.json. Each figure is a ratio against a baseline from the same run.
import { readdirSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { BenchFigure, BenchModule } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const files = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.includes(w)))
  .sort();

const results: (BenchFigure & { file: string })[] = [];
for (const file of files) {
  process.stderr.write(`bench: ${file}\n`);
  const mod = (await import(pathToFileURL(join(here, file)).href)) as BenchModule;
  for (const f of await mod.default()) results.push({ ...f, file });
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3));
const rows = results.map((r) => [r.name, `${fmt(r.value)} ${r.unit}`, `${fmt(r.baseline)} ${r.unit}`, `${fmt(r.ratio)}x`, r.baselineWhat]);
const head = ['figure', 'value', 'baseline', 'ratio', 'baseline is'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
console.log(line(head));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));

const out = join(here, 'results', 'latest.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({ node: process.version, at: new Date().toISOString(), figures: results }, null, 2) + '\n');
console.log(`\nwritten: ${out}`);
