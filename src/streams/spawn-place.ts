// D45: where a spawned session may run. A spawn names a working directory; it must lie under one
// of the adapter's `--spawn-root`s once every symlink is followed, and name no `..`. A worktree,
// when asked, is made by git under the root the cwd lies in. Every refusal is decided before
// anything is started or made on disk, so a refused spawn leaves nothing behind.
import { execFile } from 'node:child_process';
import { mkdirSync, realpathSync, rmSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';
import type { Rejection } from '../protocol/index.js';

const run = promisify(execFile);

/** Where the worktrees a spawn makes live, inside the root the cwd lies in. */
export const WORKTREE_DIR = '.aep-worktrees';

const refuse = (rule: Rejection['rule'], detail: string): Rejection => ({ reason: 'invalid', rule, detail });

/** Each root as it really is on disk (symlinks followed); a missing root is left out and named. */
export function realRoots(roots: readonly string[]): { roots: string[]; missing: string[] } {
  const out: string[] = [];
  const missing: string[] = [];
  for (const r of roots) {
    try {
      out.push(realpathSync(resolve(r)));
    } catch {
      missing.push(r);
    }
  }
  return { roots: out, missing };
}

const within = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

/**
 * The real directory a spawn may run in, or why not: no `..` segment, an absolute path, a
 * directory that exists, and under a root both as written and once its symlinks are followed.
 */
export function checkSpawnCwd(cwd: string, roots: readonly string[]): { cwd: string; root: string } | Rejection {
  if (roots.length === 0) return { reason: 'unsupported', rule: 'spawn-off', detail: 'spawn is off on this adapter' };
  if (cwd.split(/[\\/]/).includes('..'))
    return refuse('cwd-dotdot', `cwd ${cwd} climbs with "..": give the directory's own path under a spawn root`);
  if (!isAbsolute(cwd))
    return refuse('cwd-outside-roots', `cwd ${cwd} is not an absolute path: give one under ${roots.join(', ')}`);
  const written = resolve(cwd);
  const rootAsWritten = roots.find((r) => within(r, written)) ?? roots.find((r) => within(r, realOr(written)));
  if (rootAsWritten === undefined)
    return refuse(
      'cwd-outside-roots',
      `cwd ${cwd} is outside the spawn roots (${roots.join(', ')}): spawn in a directory under one of them`,
    );
  let real: string;
  try {
    real = realpathSync(written);
  } catch {
    return refuse('cwd-not-directory', `cwd ${cwd} does not exist: create it first, or spawn in one that does`);
  }
  if (!within(rootAsWritten, real) && !roots.some((r) => within(r, real)))
    return refuse(
      'cwd-symlink-escape',
      `cwd ${cwd} is a symlink (or lies under one) that leads to ${real}, outside the spawn roots: spawn in the real directory under a root`,
    );
  if (!statSync(real).isDirectory())
    return refuse('cwd-not-directory', `cwd ${cwd} is not a directory: give the directory the worker should run in`);
  return { cwd: real, root: roots.find((r) => within(r, real)) ?? rootAsWritten };
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** git's answer to one question, or undefined when git says no (or is missing). */
async function git(cwd: string, args: string[]): Promise<string | undefined> {
  try {
    const { stdout } = await run('git', args, { cwd, timeout: 30_000 });
    return stdout.trim();
  } catch {
    return undefined;
  }
}

/** A branch name git would take (`git check-ref-format --branch`), asked before anything is made. */
const BRANCH = /^(?!-)(?!.*\.\.)(?!.*[~^:?*[\\\s])(?!.*\/\/)(?!.*@\{)[A-Za-z0-9._/-]{1,100}(?<![./])$/;

export interface WorktreePlan {
  /** The repository's top-level directory. */
  top: string;
  /** Where the worktree goes. */
  path: string;
  branch: string;
  /** The cwd's place inside the repository, kept inside the worktree. */
  within: string;
}

/**
 * D45: what a worktree for `cwd` would be, or why there can be none (not a git repository, a
 * bad branch name, a branch or path that exists). Nothing is made here.
 */
export async function planWorktree(
  cwd: string,
  root: string,
  asked: true | string,
  name: string,
): Promise<WorktreePlan | Rejection> {
  const top = await git(cwd, ['rev-parse', '--show-toplevel']);
  if (top === undefined || top === '')
    return refuse(
      'worktree-not-repo',
      `cwd ${cwd} is not in a git repository, so no worktree can be made there: spawn without worktree, or in a repository`,
    );
  const branch = asked === true ? `aep/${name}` : asked;
  if (!BRANCH.test(branch))
    return refuse('worktree-invalid', `worktree branch "${branch}" is not a branch name git takes: give a plain one`);
  if ((await git(top, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`])) !== undefined)
    return refuse('worktree-invalid', `branch ${branch} exists already: name a new branch for the worktree`);
  const path = join(root, WORKTREE_DIR, branch.replaceAll('/', '-'));
  try {
    statSync(path);
    return refuse('worktree-invalid', `${path} exists already: name another branch, or remove that worktree`);
  } catch {
    /* free: as it should be */
  }
  const inner = relative(realOr(top), cwd);
  return { top, path, branch, within: inner.split(sep).join('/') };
}

/** Makes the planned worktree; on failure whatever git began is removed, and the error says why. */
export async function makeWorktree(plan: WorktreePlan): Promise<{ cwd: string } | Rejection> {
  mkdirSync(join(plan.path, '..'), { recursive: true, mode: 0o700 });
  try {
    await run('git', ['worktree', 'add', '-b', plan.branch, plan.path], { cwd: plan.top, timeout: 60_000 });
  } catch (err) {
    await git(plan.top, ['worktree', 'remove', '--force', plan.path]);
    await git(plan.top, ['branch', '-D', plan.branch]);
    rmSync(plan.path, { recursive: true, force: true });
    const why = String((err as { stderr?: string }).stderr ?? (err as Error).message)
      .trim()
      .split('\n')[0];
    return refuse('worktree-invalid', `git could not make the worktree ${plan.path}: ${why}`);
  }
  return { cwd: plan.within === '' ? plan.path : join(plan.path, plan.within) };
}

/** D45: at most `max` spawned sessions at once; a place is taken before a start and given back at its end. */
export class SpawnSlots {
  private readonly live = new Set<string>();
  private pending = 0;
  constructor(readonly max: number) {}

  /** A place for one start, or the refusal naming the cap. */
  take(): { release(session?: string): void; hold(session: string): void } | Rejection {
    if (this.live.size + this.pending >= this.max)
      return {
        reason: 'busy',
        rule: 'spawn-cap',
        detail: `this adapter already runs ${this.max} spawned sessions (--max-spawned ${this.max}): wait for one to end, or stop one`,
      };
    this.pending += 1;
    let done = false;
    const settle = () => {
      if (done) return false;
      done = true;
      this.pending -= 1;
      return true;
    };
    return {
      hold: (session) => {
        if (settle()) this.live.add(session);
      },
      release: () => void settle(),
    };
  }

  /** The session ended: its place is free. */
  ended(session: string): boolean {
    return this.live.delete(session);
  }

  sessions(): string[] {
    return [...this.live];
  }
}
