// D45: a worker spawned through `aep-steer mcp` in a new worktree of a scratch repository under
// the suite's home, with what every vendor's spawn suite checks of the answer: a session id, and a
// worktree made under the spawn root's worktree folder.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { WORKTREE_DIR } from '../../src/streams/spawn-place.js';
import type { McpClient } from '../mcp/support.js';
import { scratchRepo } from './scratch-repo.js';

type Called = Awaited<ReturnType<McpClient['call']>>;

export async function spawnInWorktree(
  mcp: McpClient,
  root: string,
  vendor: string,
  prompt: string,
): Promise<{ repo: string; spawned: Called; session: string; worktree: string }> {
  const repo = scratchRepo(join(root, 'scratch'));
  const spawned = await mcp.call('spawn', { vendor, cwd: repo, worktree: true, prompt });
  assert.not.ok(spawned.isError, spawned.text);
  const session = spawned.facts['session'] as string;
  assert.type(session, 'string');
  const worktree = spawned.facts['worktree'] as string;
  assert.ok(worktree.startsWith(join(root, WORKTREE_DIR)), worktree);
  assert.ok(existsSync(worktree), 'the worktree is made');
  return { repo, spawned, session, worktree };
}
