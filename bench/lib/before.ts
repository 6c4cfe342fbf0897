// Another checkout of this project, for a before-and-after figure in one run: the directory
// AEP_BENCH_BEFORE_DIR names (e.g. `git worktree add DIR fd805d8 --detach`, its node_modules
// installed). Its own bench server is started the way this tree's is (its own harness code, in
// its own directory, its modules from its own build when bench/run.ts built both).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { builtImport, start, type Child } from './proc.js';

export const beforeDir = (): string | undefined => process.env.AEP_BENCH_BEFORE_DIR || undefined;

/** The other checkout's commit, short, as the figures name it (its path says nothing to a reader). */
export function beforeCommit(): string {
  const dir = beforeDir();
  if (dir === undefined) return 'none';
  try {
    return execFileSync('git', ['-C', dir, 'log', '-1', '--format=%h %cs'], { encoding: 'utf8' }).trim();
  } catch {
    return `a checkout at ${dir} (not a git work tree)`;
  }
}

/** Why a before-and-after row measured nothing, said in the row's note. */
export const beforeAbsent =
  'absent: set AEP_BENCH_BEFORE_DIR to a checkout of the commit to compare with, its node_modules ' +
  'installed (docs/benchmarks.md)';

/**
 * Starts `bench/servers/<server>` of the other checkout with the argument this tree's server
 * takes. Compatibility check: the server must exist there and answer with the fields named in
 * `needs` (the same ready line as this tree's); anything else fails the module with what is missing.
 */
export async function startBefore(server: string, arg: unknown, needs: readonly string[]): Promise<Child> {
  const dir = beforeDir();
  if (dir === undefined) throw new Error(beforeAbsent);
  const file = join(dir, 'bench', 'servers', server);
  if (!existsSync(file)) throw new Error(`AEP_BENCH_BEFORE_DIR (${dir}) has no bench/servers/${server}`);
  if (!existsSync(join(dir, 'node_modules', 'tsx')))
    throw new Error(`AEP_BENCH_BEFORE_DIR (${dir}) has no node_modules/tsx: install its dependencies there`);
  const child = await start(
    process.execPath,
    ['--import', 'tsx', ...builtImport(), file, JSON.stringify(arg)],
    {},
    undefined,
    120_000,
    dir,
  );
  const missing = needs.filter((k) => child.ready[k] === undefined);
  if (missing.length > 0) {
    await child.stop();
    throw new Error(`the server in ${dir} answered without ${missing.join(', ')}: ${JSON.stringify(child.ready)}`);
  }
  return child;
}
