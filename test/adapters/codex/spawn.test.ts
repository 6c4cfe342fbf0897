// The Codex table's spawn (D45) when the worker's app-server cannot start: the spawner answers
// spawn-failed with the server's own last words, frees its place, names the worktree it made and
// keeps it, the adapter's lane is never asked to join, and no socket is left in the lane's directory.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { codexAppServer } from '../../../src/adapters/codex/app-server/spec.js';
import { realRoots } from '../../../src/streams/spawn-place.js';
import { spawner } from '../../../src/streams/spawner.js';
import { scratchRepo } from '../../support/scratch-repo.js';

const base = realRoots([mkdtempSync(join(tmpdir(), 'aep-codex-spawn-'))]).roots[0]!;
const fake = join(base, 'codex');
writeFileSync(fake, '#!/bin/sh\necho "error: no model provider configured" >&2\nexit 1\n');
chmodSync(fake, 0o755);
const repo = scratchRepo(join(base, 'repo'));
const state = join(base, 'state');

test('an app-server that exits at start: spawn-failed with its words, nothing joined, no socket, the worktree kept', async () => {
  let joins = 0;
  const launch = await codexAppServer.spawn!({ AEP_CODEX_BIN: fake, PATH: process.env.PATH }, state, async () => {
    joins += 1;
    return {};
  });
  const s = spawner({ roots: [base], max: 1, launch });
  const r = await s.spawn({ prompt: 'p', cwd: repo, worktree: true, commandId: 'CMDX' });
  assert.is((r as { rule?: string }).rule, 'spawn-failed');
  const detail = (r as { detail: string }).detail;
  assert.match(detail, /could not start: the Codex app-server exited at start: error: no model provider configured/);
  assert.match(detail, /the worktree .*aep-cmdx was made and is kept/);
  assert.is(joins, 0, 'the lane was not asked to join');
  assert.equal(
    readdirSync(join(state, 'codex')).filter((n) => n.endsWith('.sock')),
    [],
  );
  assert.ok(existsSync(join(base, '.aep-worktrees', 'aep-cmdx', 'README')));
  // Its place is free again: the next spawn is not refused by the cap.
  const again = await s.spawn({ prompt: 'p', cwd: repo, commandId: 'CMDY' });
  assert.is((again as { rule?: string }).rule, 'spawn-failed');
});

test.after(() => rmSync(base, { recursive: true, force: true }));

test.run();
