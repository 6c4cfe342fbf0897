// Runs the registered bench modules (all, or those named on the command line), prints one
// table and writes bench/results/latest.json. Every figure is a ratio to a baseline measured in
// the same run; `scripts/bench-table.mjs` turns the JSON into the table in docs/benchmarks.md.
//   --quick          a smoke run (BENCH_QUICK=1): one round, smaller loads, a few minutes in all
//   --node 22,24,26  runs the modules once on each supported Node line (scripts/node-line.sh;
//                    AEP_NODE_CACHE_DIR names where the builds are), one line after another,
//                    and keeps each line's figures, each naming its line
// Each figure records the Node version that ran it, the 1-minute load average before and after
// its module, and the relay store it measured.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectDir } from './lib/proc.js';
import type { BenchFigure } from './types.js';

const here = dirname(fileURLToPath(import.meta.url));
const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  if (i === -1) return undefined;
  const v = argv[i + 1];
  argv.splice(i, 2);
  return v;
};
const quick = argv.includes('--quick');
if (quick) {
  argv.splice(argv.indexOf('--quick'), 1);
  process.env.BENCH_QUICK = '1';
}
const lines = flag('--node');
// A child of a `--node` run writes its figures here instead of latest.json.
const lineOut = process.env.BENCH_LINE_OUT;
const wanted = argv;
// Every figure measures the build the CLI runs (dist/, tsc output), not tsx's transform of the
// sources (bench/lib/built-hooks.mjs): built once here, before any module loads, for this tree
// and the checkout AEP_BENCH_BEFORE_DIR names; a `--node` line's child inherits the build. The
// hook serves this process too (in-process figures) and every child the bench starts.
if (process.env.AEP_BENCH_BUILT_ROOTS === undefined) {
  const project = projectDir;
  const before = process.env.AEP_BENCH_BEFORE_DIR ? resolve(process.env.AEP_BENCH_BEFORE_DIR) : undefined;
  for (const dir of before === undefined ? [project] : [project, before]) {
    const r = spawnSync(process.execPath, [join(dir, 'scripts', 'build.mjs')], { cwd: dir, encoding: 'utf8' });
    if (r.status !== 0) {
      process.stderr.write(
        `bench: the build in ${dir} failed (${`${r.stdout}${r.stderr}`.trim().split('\n').slice(0, 5).join('; ')}); ` +
          `install its dependencies there (npm ci)${dir === before ? ' or unset AEP_BENCH_BEFORE_DIR' : ''}\n`,
      );
      process.exit(2);
    }
  }
  process.env.AEP_BENCH_BUILT_ROOTS = before === undefined ? project : `${project}:${before}`;
}
// @ts-expect-error plain ESM script without types
await import('./lib/built.mjs');
const { registry } = await import('./registry.js');
const { ROUNDS } = await import('./types.js');

type Result = BenchFigure & { file: string };
interface Results {
  node: string;
  nodes?: string[];
  cpus: number;
  rounds: number;
  quick?: boolean;
  at: string;
  figures: Result[];
}

const entries = registry.filter((e) => wanted.length === 0 || wanted.some((w) => e.id === w || e.file === w));
if (entries.length === 0) {
  process.stderr.write(`bench: nothing matches ${wanted.join(' ')}; ids: ${registry.map((e) => e.id).join(', ')}\n`);
  process.exit(2);
}

const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;
const results: Result[] = [];
const failed: string[] = [];
if (lines !== undefined) {
  // One child per line, each the whole selection on that line's node (and its children too).
  const tmp = mkdtempSync(join(tmpdir(), 'aep-bench-lines-'));
  try {
    for (const line of lines.split(',').map((l) => l.trim())) {
      const bin = execFileSync('sh', [join(projectDir, 'scripts', 'node-line.sh'), '--bin', line], {
        encoding: 'utf8',
      }).trim();
      const out = join(tmp, `${line}.json`);
      process.stderr.write(`bench: Node line ${line} (${bin})\n`);
      const r = spawnSync(join(bin, 'node'), ['--import', 'tsx', join(here, 'run.ts'), ...wanted], {
        stdio: 'inherit',
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, BENCH_LINE_OUT: out },
      });
      if (r.status !== 0) failed.push(`node ${line}`);
      try {
        results.push(...(JSON.parse(readFileSync(out, 'utf8')) as Result[]));
      } catch {
        failed.push(`node ${line} (no figures)`);
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
} else {
  for (const entry of entries) {
    process.stderr.write(`bench: ${entry.id} (${entry.file}), load average ${load1()}\n`);
    const t0 = performance.now();
    const before = load1();
    try {
      const mod = await entry.load();
      const figures = await mod.default();
      const load: [number, number] = [before, load1()];
      for (const f of figures)
        results.push({
          ...f,
          file: entry.file,
          node: process.version,
          load,
          // A figure that measured another store than its module's names it itself.
          ...((f.store ?? entry.store) ? { store: f.store ?? entry.store } : {}),
          ...(quick || process.env.BENCH_QUICK === '1' ? { quick: true } : {}),
        });
    } catch (err) {
      // One broken module must not cost the others' figures; the run still exits non-zero.
      failed.push(entry.id);
      process.stderr.write(
        `bench: ${entry.id} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
      );
    }
    process.stderr.write(`bench: ${entry.id} took ${((performance.now() - t0) / 1000).toFixed(1)} s\n`);
  }
}

if (lineOut !== undefined) {
  writeFileSync(lineOut, JSON.stringify(results));
  process.exit(failed.length > 0 ? 1 : 0);
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
  String(r.rounds ?? 1),
  r.node ?? '',
  r.load ? `${r.load[0]}–${r.load[1]}` : '',
  r.baselineWhat,
]);
const head = ['figure', 'value', 'baseline', 'ratio', 'goal', 'rounds', 'node', 'load', 'baseline is'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ');
console.log(line(head));
console.log(widths.map((w) => '-'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
for (const r of results) if (r.note) console.log(`note (${r.name}): ${r.note}`);

// A figure is one name on one Node line: a partial run (named modules, or some lines) replaces
// those and keeps the rest of latest.json, so one module can be re-measured alone.
const out = join(here, 'results', 'latest.json');
const keyOf = (f: Result) => `${f.name}\u0000${f.node ?? ''}`;
let prev: Result[] = [];
if (wanted.length > 0 && process.env.BENCH_WRITE !== '1') {
  try {
    prev = (JSON.parse(readFileSync(out, 'utf8')) as Results).figures;
  } catch {
    // No earlier run.
  }
}
const fresh = new Set(results.map(keyOf));
const merged = [...prev.filter((f) => !fresh.has(keyOf(f))), ...results];
// Table order: modules as registered, each module's figures in its own order, Node lines together.
const fileRank = new Map(registry.map((e, i) => [e.file, i]));
const nameRank = new Map<string, number>();
for (const [i, f] of merged.entries()) if (!nameRank.has(f.name)) nameRank.set(f.name, i);
const figures = merged.sort(
  (a, b) =>
    (fileRank.get(a.file) ?? 99) - (fileRank.get(b.file) ?? 99) ||
    nameRank.get(a.name)! - nameRank.get(b.name)! ||
    (a.node ?? '').localeCompare(b.node ?? '', 'en', { numeric: true }),
);
const doc: Results = {
  node: process.version,
  nodes: [...new Set(figures.map((f) => f.node ?? process.version))],
  cpus: cpus().length,
  rounds: ROUNDS,
  ...(quick ? { quick: true } : {}),
  at: new Date().toISOString(),
  figures,
};
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(doc, null, 2)}\n`);
console.log(`\n${prev.length > 0 ? 'merged into' : 'written'}: ${out}`);
if (failed.length > 0) process.stderr.write(`bench: failed: ${failed.join(', ')}\n`);
// Exits now rather than when the last handle of a module (a client's keep-alive timer) lets go.
process.exit(failed.length > 0 ? 1 : 0);
