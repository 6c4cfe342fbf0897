// The Codex app-servers an adapter's spawns started, found by their sockets (`spawn-*` in the
// lane's directory), and whether a process still runs: what the spawn suites check is gone.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { processTable } from '../../src/adapters/tool-processes.js';

/** A process that runs (a zombie counts as gone). */
export const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};

/** The spawned app-servers running now, by pid, for the adapter whose state directory is `stateDir`. */
export const spawnedServers = (stateDir: string): number[] =>
  execFileSync('ps', ['-eo', 'pid=,args='])
    .toString()
    .split('\n')
    .filter((l) => l.includes('app-server --listen') && l.includes(join(stateDir, 'codex', 'spawn-')))
    .map((l) => Number(l.trim().split(/\s+/)[0]))
    .filter(alive);

/** The Claude Code adapter's environment in a spawn suite: the home's CLI settings, its binary, and no one there to grant a permission. */
export const claudeSpawnEnv = (home: { env: NodeJS.ProcessEnv }, e2e: { binary: string }): NodeJS.ProcessEnv => ({
  ...home.env,
  AEP_CLAUDE_BIN: e2e.binary,
  AEP_CLAUDE_SPAWN_PERMISSION_MODE: 'bypassPermissions',
});

/** The processes of a Claude Code worker still running: those whose command line names its session (`--session-id`). */
export const claudeWorkerProcesses = (session: string): number[] =>
  (processTable() ?? []).filter((p) => p.state !== 'Z' && p.argv.includes(session)).map((p) => p.pid);
