// Runs the registered bench modules (all, or those named on the command line), prints one
// table and writes bench/results/latest.json. Every figure is a ratio to a baseline measured in
// the same run; `scripts/bench-table.mjs` turns the JSON into the README's table.
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registry } from './registry.js';
import { ROUNDS, type BenchFigure } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const wanted = process.argv.slice(2);
const entries = registry.filter((e) => wanted.length === 0 || wanted.some((w) => e.id === w || e.file === w));
if (entries.length === 0) {
  process.stderr.write(`bench: nothing matches ${wanted.join(' ')}; ids: ${registry.map((e) => e.id).join(', ')}\n`);
  process.exit(2);
}

const results: (BenchFigure & { file: string })[] = [];
const failed: string[] = [];
for (const entry of entries) {
  process.stderr.write(`bench: ${entry.id} (${entry.file})\n`);
  const t0 = performance.now();
  try {
    const mod = await entry.load();
    for (const f of await mod.default()) results.push({ ...f, file: entry.file });
  } catch (err) {
    // One broken module must not cost the others' figures; the run still exits non-zero.
    failed.push(entry.id);
    process.stderr.write(
      `bench: ${entry.id} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  process.stderr.write(`bench: ${entry.id} took ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
}

export const fmt = (n: number): string =>
  !Number.isFinite(n)
    ? String(n)
    : Math.abs(n) >= 100
      ? Math.round(n).toLocaleString('en')
      : Math.abs(n) >= 1
        ? n.toFixed(2)
        : n.toPrecision(3);
const rows = results.map((r) => [
  r.name,
  `${fmt(r.value)} ${r.unit}`,
  `${fmt(r.baseline)} ${r.unit}`,
  `${fmt(r.ratio)}x`,
  r.goal ? `${r.goal}x ${r.met ? 'met' : 'NOT met'}` : '',
  r.baselineWhat,
]);
const head = ['figure', 'value', 'baseline', 'ratio', 'goal', 'baseline is'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
console.log(line(head));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
for (const r of results) if (r.note) console.log(`note (${r.name}): ${r.note}`);

if (wanted.length === 0 || process.env.BENCH_WRITE === '1') {
  const out = join(here, 'results', 'latest.json');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify(
      { node: process.version, cpus: cpus().length, rounds: ROUNDS, at: new Date().toISOString(), figures: results },
      null,
      2,
    )}\n`,
  );
  console.log(`\nwritten: ${out}`);
} else {
  // A partial run merges into latest.json so one module can be re-measured alone.
  const out = join(here, 'results', 'latest.json');
  let prev: { figures: (BenchFigure & { file: string })[] } = { figures: [] };
  try {
    prev = JSON.parse((await import('node:fs')).readFileSync(out, 'utf8')) as typeof prev;
  } catch {
    // No earlier run.
  }
  const names = new Set(results.map((r) => r.name));
  const merged = [...prev.figures.filter((f) => !names.has(f.name)), ...results];
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(
    out,
    `${JSON.stringify(
      { node: process.version, cpus: cpus().length, rounds: ROUNDS, at: new Date().toISOString(), figures: merged },
      null,
      2,
    )}\n`,
  );
  console.log(`\nmerged into: ${out}`);
}
if (failed.length > 0) process.exit(1);
