// The processes of the Qwen Code workers an adapter spawned: every process running in a worker's
// folder (the worker's `qwen serve` daemon and the agent it runs), found by working directory, so a
// spawn suite can check that none is left once the worker or its adapter stopped.
import { readlinkSync } from 'node:fs';
import { sep } from 'node:path';
import { processTable } from '../../src/adapters/tool-processes.js';

const cwdOf = (pid: number): string | undefined => {
  try {
    return readlinkSync(`/proc/${pid}/cwd`);
  } catch {
    return undefined;
  }
};

/** The live processes whose working directory is `dir` or under it (zombies count as gone). */
export const processesIn = (dir: string): number[] =>
  (processTable() ?? [])
    .filter((p) => p.state !== 'Z')
    .filter((p) => {
      const cwd = cwdOf(p.pid);
      return cwd !== undefined && (cwd === dir || cwd.startsWith(`${dir}${sep}`));
    })
    .map((p) => p.pid);
