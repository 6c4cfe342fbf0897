// The check after the e2e suite (scripts/leftover-processes.mjs): a vendor CLI that a test run
// started and left running is found by the run's mark, named, and ended; a process of another
// run, or one that is no vendor CLI, is not touched. Real processes: a stand-in `codex` script.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain ESM script of the test runner, without types
import { RUN_MARK, endLeftovers, vendorLeftovers } from '../../scripts/leftover-processes.mjs';
import { until } from '../support/until.js';

type Leftover = { pid: number; command: string };
const find = vendorLeftovers as (id: string) => Leftover[];
const end = endLeftovers as (list: Leftover[], graceMs?: number) => Promise<void>;

const dir = mkdtempSync(join(tmpdir(), 'aep-leftover-'));
const children: ChildProcess[] = [];
test.after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/** A process's group; undefined once it is gone. */
function groupOf(pid: number): number | undefined {
  try {
    return Number(
      readFileSync(`/proc/${pid}/stat`, 'utf8')
        .replace(/^.*\) /, '')
        .split(' ')[2],
    );
  } catch {
    return undefined;
  }
}

/** A script named `name` that runs until it is ended, started detached (as a daemon is) with `mark`. */
async function daemon(name: string, mark: string): Promise<ChildProcess> {
  const bin = join(dir, name);
  writeFileSync(bin, '#!/bin/sh\nwhile true; do sleep 1; done\n');
  chmodSync(bin, 0o755);
  const c = spawn(bin, ['app-server', '--managed-daemon'], {
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env.PATH, [RUN_MARK]: mark },
  });
  children.push(c);
  await until(() => c.pid !== undefined, `${name} started`);
  return c;
}

test("a vendor daemon this run left is named, and ended; another run's, and a non-vendor process, are not", async () => {
  const mine = await daemon('codex', 'run-a');
  const other = await daemon('qwen', 'run-b');
  const helper = await daemon('mock-server', 'run-a');
  const left = await (async () => {
    let l: Leftover[] = [];
    await until(() => {
      l = find('run-a');
      return l.length > 0;
    }, 'the leftover seen');
    return l;
  })();
  // The shell forks for each `sleep`: until the fork runs `sleep`, it shows the script's own line,
  // so it may be named too; it is of the daemon's process group, never another.
  const found = left.find((p) => p.pid === mine.pid);
  assert.ok(found, 'the daemon itself is named');
  for (const p of left)
    if (p.pid !== mine.pid) assert.ok([undefined, mine.pid].includes(groupOf(p.pid)), `${p.pid} is the daemon's`);
  assert.match(found.command, `${join(dir, 'codex')} app-server --managed-daemon`);
  const gone = new Promise((r) => mine.once('exit', r));
  await end(left);
  await gone;
  assert.equal(find('run-a'), []);
  assert.is(other.exitCode, null, "another run's daemon is not touched");
  assert.is(helper.exitCode, null, 'a process that is no vendor CLI is not touched');
  assert.ok(
    find('run-b').some((p) => p.pid === other.pid),
    "the other run's daemon is still named for its own run",
  );
});

test.run();
