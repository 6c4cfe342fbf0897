// The bench harness itself: every module is registered, figures carry their goal verdicts, the
// interleaving alternates sides, and the table in docs/benchmarks.md is exactly what latest.json gives.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { registry } from '../../bench/registry.js';
import { interleave, quantile } from '../../bench/lib/stats.js';
import { figure } from '../../bench/types.js';
// @ts-expect-error plain ESM script without types
import { table } from '../../scripts/bench-table.mjs';

const root = join(import.meta.dirname, '..', '..');

test('every bench/*.bench.ts is in the registry, once', () => {
  const files = readdirSync(join(root, 'bench'))
    .filter((f) => f.endsWith('.bench.ts'))
    .sort();
  assert.equal(registry.map((e) => e.file).sort(), files);
  assert.equal(new Set(registry.map((e) => e.id)).size, registry.length);
});

test('a figure takes the median of its per-round ratios and judges its goal', () => {
  const f = figure({
    name: 'x',
    what: 'w',
    unit: 'ms',
    value: 2,
    baseline: 1,
    baselineWhat: 'b',
    ratios: [1.1, 3, 1.2],
    goal: '<= 1.3',
  });
  assert.is(f.ratio, 1.2);
  assert.is(f.met, true);
  assert.is(f.rounds, 3);
  const g = figure({ name: 'y', what: 'w', unit: 'ev/s', value: 1, baseline: 2, baselineWhat: 'b', goal: '>= 2' });
  assert.is(g.ratio, 0.5);
  assert.is(g.met, false);
});

test('interleave alternates which side goes first', async () => {
  const order: string[] = [];
  const side = (name: string, value: number) => async (): Promise<number> => {
    order.push(name);
    return value;
  };
  const runs = await interleave(3, { a: side('a', 1), b: side('b', 2) });
  assert.equal(order, ['a', 'b', 'b', 'a', 'a', 'b']);
  assert.equal(runs, { a: [1, 1, 1], b: [2, 2, 2] });
  assert.is(quantile([5, 1, 3, 2, 4], 0.5), 3);
});

test('the benchmark table renders every figure with its goal verdict', () => {
  const text = table({
    at: '2026-12-01T15:00:00.000Z',
    node: 'v20',
    cpus: 2,
    rounds: 3,
    figures: [
      figure({
        name: 'a',
        what: 'thing A',
        unit: 'ms',
        value: 1.5,
        baseline: 1,
        baselineWhat: 'floor',
        goal: '<= 1.3',
        note: 'why',
      }),
      figure({
        name: 'b',
        what: 'thing B',
        unit: 'ev/s',
        value: 3000,
        baseline: 1000,
        baselineWhat: 'peer',
        goal: '>= 2',
      }),
    ],
  }) as string;
  assert.ok(text.includes('| thing A | 1.50 ms | floor: 1.00 ms | 1.50x | ≤ 1.3x **not met** |'), text);
  assert.ok(text.includes('| thing B | 3,000 ev/s | peer: 1,000 ev/s | 3.00x | ≥ 2x met |'), text);
  assert.ok(text.includes('- `a`: why'));
});

test('a note that differs between Node lines is given per line; one they share, once', () => {
  const on = (name: string, node: string, note?: string) =>
    figure({ name, what: name, unit: 'ms', value: 1, baseline: 1, baselineWhat: 'x', node, ...(note ? { note } : {}) });
  const notes = (figures: ReturnType<typeof figure>[]) =>
    table({ at: '2026-12-01T15:00:00.000Z', node: 'v24', nodes: ['v22', 'v24'], cpus: 2, figures }) as string;
  const text = notes([
    on('a', 'v22', 'absent'),
    on('a', 'v24', 'measured'),
    on('b', 'v22', 'same'),
    on('b', 'v24', 'same'),
  ]);
  assert.ok(text.includes('- `a` (v22): absent'), text);
  assert.ok(text.includes('- `a` (v24): measured'), text);
  assert.ok(text.includes('- `b`: same'), text);
  assert.not.ok(text.includes('- `b` ('), text);
  const partly = notes([on('c', 'v22', 'absent'), on('c', 'v24')]);
  assert.ok(partly.includes('- `c` (v22): absent'), 'a note only some lines have names them');
});

test('docs/benchmarks.md has the table block the script writes', () => {
  const doc = readFileSync(join(root, 'docs', 'benchmarks.md'), 'utf8');
  assert.ok(doc.includes('<!-- bench-table:start'));
  assert.ok(doc.includes('<!-- bench-table:end -->'));
});

test.run();
