// A git repository with one commit, for the tests of spawn's worktrees (D45): real git, in `dir`.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Makes `dir` (if need be) a repository on `main` whose one commit holds all it has (and a README). */
export function scratchRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const g = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  g('init', '-q', '-b', 'main');
  g('config', 'user.email', 'test@example.invalid');
  g('config', 'user.name', 'test');
  writeFileSync(join(dir, 'README'), 'scratch\n');
  // Forced: settings a vendor's installer wrote count too, so a worktree of it has them.
  g('add', '-f', '-A');
  g('commit', '-q', '-m', 'scratch');
  return dir;
}
