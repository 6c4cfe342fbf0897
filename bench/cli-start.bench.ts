// `aep-steer --version` wall time (the bin as installed: compiled JavaScript when dist/ holds
// it) against `node -e ''`, the floor of any Node CLI, interleaved, medians.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { interleave, median } from './lib/stats.js';
import { projectDir } from './lib/proc.js';
import { figure, QUICK, type BenchFigure } from './types.js';

const N = QUICK ? 5 : 15;

const timed = (args: string[]): Promise<number> => {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, args, { cwd: projectDir, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    p.stderr.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) =>
      code === 0
        ? resolve(Number(process.hrtime.bigint() - t0) / 1e6)
        : reject(new Error(`node ${args.join(' ')} exited ${code}: ${err}`)),
    );
  });
};

export default async function cliStart(): Promise<BenchFigure[]> {
  const bin = join(projectDir, 'bin', 'aep-steer.js');
  await timed([bin, '--version']);
  const runs = await interleave(N, {
    node: () => timed(['-e', '']),
    cli: () => timed([bin, '--version']),
    help: () => timed([bin, '--help']),
  });
  const baselineWhat = "`node -e ''`, interleaved";
  return [
    figure({
      name: 'cli-version',
      what: `\`aep-steer --version\` wall time (bin/aep-steer.js), median of ${N}`,
      unit: 'ms',
      value: median(runs.cli),
      baseline: median(runs.node),
      baselineWhat,
      ratios: runs.cli.map((v, i) => v / runs.node[i]!),
      goal: '<= 1.5',
    }),
    figure({
      name: 'cli-help',
      what: `\`aep-steer --help\` wall time, median of ${N}`,
      unit: 'ms',
      value: median(runs.help),
      baseline: median(runs.node),
      baselineWhat,
      ratios: runs.help.map((v, i) => v / runs.node[i]!),
    }),
  ];
}
