import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { realRoots, WORKTREE_DIR } from '../../src/streams/spawn-place.js';
import { scratchRepo } from '../support/scratch-repo.js';
import { spawner, type Launcher, type Worker } from '../../src/streams/spawner.js';

const base = realRoots([mkdtempSync(join(tmpdir(), 'aep-spawner-'))]).roots[0]!;
const root = join(base, 'root');
const repo = join(root, 'repo');
scratchRepo(repo);

/** A launcher that records what it was asked and hands out workers the test ends. */
function fakeLauncher() {
  const asked: Parameters<Launcher>[0][] = [];
  const ends = new Map<string, () => void>();
  let stopped = 0;
  const launch: Launcher = async (req) => {
    asked.push(req);
    const session = `s-${asked.length}`;
    let end!: () => void;
    const ended = new Promise<void>((r) => (end = r));
    ends.set(session, end);
    const w: Worker = {
      session,
      ended,
      async stop() {
        stopped += 1;
        end();
      },
    };
    return w;
  };
  return { launch, asked, ends, stopped: () => stopped };
}

const rule = (v: unknown): string | undefined => (v as { rule?: string }).rule;

test('a spawn in a worktree: the launcher runs in it, the answer names the session and the worktree', async () => {
  const f = fakeLauncher();
  const s = spawner({ roots: [root], launch: f.launch });
  const r = await s.spawn({ prompt: 'do it', cwd: repo, worktree: true, commandId: 'CMD1' });
  assert.ok(r.ok, JSON.stringify(r));
  if (!r.ok) return;
  assert.is(r.session, 's-1');
  assert.is(r.worktree, join(root, WORKTREE_DIR, 'aep-cmd1'));
  assert.is(f.asked[0]?.cwd, r.worktree);
  assert.is(f.asked[0]?.prompt, 'do it');
  assert.ok(existsSync(join(r.worktree!, 'README')));
  assert.equal(s.running(), ['s-1']);
  await s.stopAll();
  assert.equal(s.running(), []);
});

test('refusals start nothing: spawn off, outside, a worktree in no repository, the cap', async () => {
  const f = fakeLauncher();
  const off = spawner({ roots: [], launch: f.launch });
  assert.is(rule(await off.spawn({ prompt: 'p', cwd: repo, commandId: 'A' })), 'spawn-off');
  const s = spawner({ roots: [repo], max: 1, launch: f.launch });
  assert.is(rule(await s.spawn({ prompt: 'p', cwd: base, commandId: 'B' })), 'cwd-outside-roots');
  const plain = join(base, 'plain');
  mkdirSync(plain);
  const p = spawner({ roots: [plain], launch: f.launch });
  const notRepo = await p.spawn({ prompt: 'p', cwd: plain, worktree: true, commandId: 'C' });
  assert.is(rule(notRepo), 'worktree-not-repo');
  assert.not.ok(existsSync(join(plain, WORKTREE_DIR)), 'no worktree directory made');
  assert.is(f.asked.length, 0, 'no launcher ran');
  const first = await s.spawn({ prompt: 'p', cwd: repo, commandId: 'D' });
  assert.ok(first.ok);
  const capped = await s.spawn({ prompt: 'p', cwd: repo, commandId: 'E' });
  assert.is(rule(capped), 'spawn-cap');
  assert.is((capped as { reason: string }).reason, 'busy');
  assert.is(f.asked.length, 1, 'the capped spawn started nothing');
  // The worker ends on its own: its place is free again.
  f.ends.get('s-1')!();
  await new Promise((r) => setImmediate(r));
  assert.ok((await s.spawn({ prompt: 'p', cwd: repo, commandId: 'F' })).ok);
  await s.stopAll();
});

test('a launcher that fails frees its place and says why; stopAll stops every worker and refuses new ones', async () => {
  let fail = true;
  const f = fakeLauncher();
  const s = spawner({
    roots: [root],
    max: 1,
    launch: async (req) => {
      if (fail) throw new Error('no codex binary');
      return f.launch(req);
    },
  });
  const r = await s.spawn({ prompt: 'p', cwd: repo, commandId: 'G' });
  assert.is(rule(r), 'spawn-failed');
  assert.match((r as { detail: string }).detail, /could not start: no codex binary/);
  fail = false;
  assert.ok((await s.spawn({ prompt: 'p', cwd: repo, commandId: 'H' })).ok);
  await s.stopAll();
  assert.is(f.stopped(), 1);
  const after = await s.spawn({ prompt: 'p', cwd: repo, commandId: 'I' });
  assert.is((after as { reason: string }).reason, 'busy');
  assert.match((after as { detail: string }).detail, /stopping/);
});

test.after(() => rmSync(base, { recursive: true, force: true }));

test.run();
