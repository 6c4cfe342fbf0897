import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  checkSpawnCwd,
  makeWorktree,
  planWorktree,
  realRoots,
  SpawnSlots,
  WORKTREE_DIR,
} from '../../src/streams/spawn-place.js';

const base = realRoots([mkdtempSync(join(tmpdir(), 'aep-spawn-'))]).roots[0]!;
const root = join(base, 'root');
const outside = join(base, 'outside');
mkdirSync(join(root, 'proj', 'sub'), { recursive: true });
mkdirSync(outside, { recursive: true });
writeFileSync(join(root, 'file.txt'), 'x');
symlinkSync(outside, join(root, 'escape'));
symlinkSync(join(root, 'proj'), join(base, 'inward'));

const rule = (v: unknown): string | undefined => (v as { rule?: string }).rule;

test('a directory under a root is taken, as its real path', () => {
  const ok = checkSpawnCwd(join(root, 'proj', 'sub'), [root]);
  assert.equal(ok, { cwd: join(root, 'proj', 'sub'), root });
});

test('no roots: spawn is off', () => {
  const r = checkSpawnCwd(join(root, 'proj'), []);
  assert.is(rule(r), 'spawn-off');
  assert.is((r as { reason: string }).reason, 'unsupported');
});

test('each bad cwd has its own code and a sentence that says what to do', () => {
  const cases: [string, string, RegExp][] = [
    [outside, 'cwd-outside-roots', /outside the spawn roots .*spawn in a directory under one of them/],
    [`${root}/proj/../../outside`, 'cwd-dotdot', /climbs with "\.\."/],
    [`${root}/proj/..`, 'cwd-dotdot', /climbs/],
    ['proj', 'cwd-outside-roots', /not an absolute path/],
    [join(root, 'escape'), 'cwd-symlink-escape', /symlink .* leads to .*outside the spawn roots/],
    [join(root, 'nope'), 'cwd-not-directory', /does not exist/],
    [join(root, 'file.txt'), 'cwd-not-directory', /is not a directory/],
  ];
  for (const [cwd, code, sentence] of cases) {
    const r = checkSpawnCwd(cwd, [root]);
    assert.is(rule(r), code, cwd);
    assert.is((r as { reason: string }).reason, 'invalid', cwd);
    assert.match((r as { detail: string }).detail, sentence, cwd);
  }
});

test('a symlink outside the roots that leads into one is taken at its real path', () => {
  const ok = checkSpawnCwd(join(base, 'inward'), [root]);
  assert.equal(ok, { cwd: join(root, 'proj'), root });
});

function repo(): string {
  const dir = join(root, `repo-${Math.random().toString(36).slice(2)}`);
  mkdirSync(join(dir, 'pkg'), { recursive: true });
  const g = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  g('init', '-q', '-b', 'main');
  g('config', 'user.email', 't@example.invalid');
  g('config', 'user.name', 't');
  writeFileSync(join(dir, 'pkg', 'a.txt'), 'a');
  g('add', '.');
  g('commit', '-q', '-m', 'one');
  return dir;
}

test('worktree: made by git under the root, the cwd kept inside it, the branch new', async () => {
  const dir = repo();
  const plan = await planWorktree(join(dir, 'pkg'), root, true, 'w1');
  assert.ok('path' in plan, JSON.stringify(plan));
  if (!('path' in plan)) return;
  assert.is(plan.path, join(root, WORKTREE_DIR, 'aep-w1'));
  assert.is(plan.branch, 'aep/w1');
  const made = await makeWorktree(plan);
  assert.equal(made, { cwd: join(plan.path, 'pkg') });
  assert.ok(existsSync(join(plan.path, 'pkg', 'a.txt')));
  const list = execFileSync('git', ['worktree', 'list'], { cwd: dir }).toString();
  assert.match(list, /aep-w1 .*\[aep\/w1\]/);
  // The same branch again is refused before anything is made.
  const again = await planWorktree(dir, root, true, 'w1');
  assert.is(rule(again), 'worktree-invalid');
});

test('worktree: a named branch; a bad name refused before git runs', async () => {
  const dir = repo();
  const plan = await planWorktree(dir, root, 'feature/x', 'ignored');
  assert.ok('path' in plan && plan.branch === 'feature/x' && plan.path.endsWith('feature-x'));
  const bad = await planWorktree(dir, root, 'bad..name', 'n');
  assert.is(rule(bad), 'worktree-invalid');
  assert.match((bad as { detail: string }).detail, /not a branch name git takes/);
});

test('worktree in a directory that is not a repository: refused, nothing made on disk', async () => {
  const plain = join(root, 'plain');
  mkdirSync(plain, { recursive: true });
  const before = existsSync(join(root, WORKTREE_DIR)) ? readdirSync(join(root, WORKTREE_DIR)).length : 0;
  const r = await planWorktree(plain, root, true, 'w2');
  assert.is(rule(r), 'worktree-not-repo');
  assert.match((r as { detail: string }).detail, /not in a git repository/);
  const after = existsSync(join(root, WORKTREE_DIR)) ? readdirSync(join(root, WORKTREE_DIR)).length : 0;
  assert.is(after, before);
});

test('slots: the cap refuses busy with its code; an end or a failed start frees a place', () => {
  const slots = new SpawnSlots(2);
  const a = slots.take();
  const b = slots.take();
  assert.ok('hold' in a && 'hold' in b);
  const c = slots.take();
  assert.is(rule(c), 'spawn-cap');
  assert.is((c as { reason: string }).reason, 'busy');
  assert.match((c as { detail: string }).detail, /--max-spawned 2/);
  if (!('hold' in a) || !('hold' in b)) return;
  a.hold('s1');
  b.release();
  assert.ok('hold' in slots.take());
  assert.is(rule(slots.take()), 'spawn-cap');
  assert.ok(slots.ended('s1'));
  assert.ok('hold' in slots.take());
});

test.after(() => rmSync(base, { recursive: true, force: true }));

test.run();
