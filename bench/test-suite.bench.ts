// `npm test` as a whole, once: its wall time against its budget (four minutes on a 2-core machine),
// with the CPU its processes spent beside it. Timed here and never asserted by a test: the suite's
// length depends on the machine and its load, which the table names. A quick run skips it.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { projectDir } from './lib/proc.js';
import { figure, QUICK, type BenchFigure } from './types.js';

const BUDGET_S = 240;
/** Clock ticks per second of /proc's `cutime`/`cstime` (USER_HZ, 100 on Linux). */
const HZ = 100;

/** CPU seconds of this process's waited-for children so far (Linux), or undefined elsewhere. */
function childrenCpu(): number | undefined {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8')
      .replace(/^.*\) /, '')
      .split(' ');
    return (Number(fields[13]) + Number(fields[14])) / HZ;
  } catch {
    return undefined;
  }
}

function run(): Promise<{ wallS: number; files: number }> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['scripts/test.mjs', 'test', '.test.ts'], {
      cwd: projectDir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.stderr.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => {
      const passed = /(\d+)\/(\d+) test files passed/.exec(out);
      const failed = out.split('\n').filter((l) => l.startsWith('FAIL') || l.includes('✘'));
      if (code !== 0 || passed === null)
        return reject(new Error(`npm test failed (exit ${code}):\n${failed.join('\n')}\n${out.slice(-800)}`));
      resolve({ wallS: Number(process.hrtime.bigint() - t0) / 1e9, files: Number(passed[2]) });
    });
  });
}

export default async function testSuite(): Promise<BenchFigure[]> {
  if (QUICK) return [];
  const cpu0 = childrenCpu();
  const r = await run();
  const cpu1 = childrenCpu();
  const cpuS = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
  return [
    figure({
      name: 'npm-test-wall',
      what: `\`npm test\` wall time, ${r.files} files, ${cpus().length} CPUs`,
      unit: 's',
      value: r.wallS,
      baseline: BUDGET_S,
      baselineWhat: 'the budget: four minutes on a 2-core machine',
      goal: '<= 1',
      ...(cpuS === undefined
        ? {}
        : { note: `CPU of its processes: ${cpuS.toFixed(0)} s (${(cpuS / r.files).toFixed(1)} s per file)` }),
    }),
  ];
}
