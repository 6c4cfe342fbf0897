// D33: finding and ending the tool processes a stopped turn left behind, on real processes. This
// test process plays the vendor: it starts shell commands the way Codex 0.171.0 does (each its
// own process group, `/bin/bash -lc '<script>'`), and the lane's helpers find them under it by
// the command the vendor showed, and end them with everything under them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import {
  descendantsOf,
  endTools,
  findTools,
  outlasting,
  processTable,
  shellWords,
} from '../../src/adapters/tool-processes.js';
import { until } from '../support/until.js';

const children: ChildProcess[] = [];
const procs = existsSync('/proc/self/stat');

/** A shell command as the vendor starts it: detached (its own group); resolves once `ready` holds. */
async function start(argv: string[], ready: (argv: string[]) => boolean): Promise<ChildProcess> {
  const c = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: 'ignore' });
  children.push(c);
  await until(
    () => processTable()?.some((p) => p.pid === c.pid && ready(p.argv)) === true,
    `${argv.join(' ')} running`,
    // A loaded machine may take a while to start a shell; the wait ends as soon as it runs.
    20_000,
  );
  return c;
}
const exited = (c: ChildProcess): Promise<void> =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', () => r()));

test.after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

test('a vendor command line splits as the shell splits it (the quoting Codex 0.171.0 shows)', () => {
  // As observed on an item/started commandExecution of the app-server.
  const shown = `/bin/bash -lc 'while [ ! -e '"'/tmp/x/never.go' ]; do sleep 0.05; done; echo TOOL_RAN_1"`;
  assert.equal(shellWords(shown), [
    '/bin/bash',
    '-lc',
    "while [ ! -e '/tmp/x/never.go' ]; do sleep 0.05; done; echo TOOL_RAN_1",
  ]);
  assert.equal(shellWords(`echo "a \\"b\\" c" d\\ e ''`), ['echo', 'a "b" c', 'd e', '']);
  assert.is(shellWords("echo 'unbalanced"), undefined);
});

if (!procs) {
  test('tool processes: /proc is readable (Linux)', () => {
    assert.unreachable('these checks need /proc');
  });
} else {
  test('a command left running is found under the vendor by the line the vendor showed, and ended with its children', async () => {
    const script = 'while true; do sleep 0.05; done; echo never';
    const shown = `/bin/bash -lc '${script}'`;
    const c = await start(['/bin/bash', '-lc', script], (a) => a[2] === script);
    // Its loop's `sleep` runs under it: the whole tree goes. A login shell first runs the profile,
    // whose own children (a version manager's init) are not the loop: wait for the sleep itself.
    const loopSleeps = () => descendantsOf(c.pid!, processTable()!).some((p) => p.argv[0] === 'sleep');
    await until(loopSleeps, 'the loop running a sleep');
    const found = findTools(process.pid, [shown, '/bin/bash -lc "never started"']);
    assert.equal(found, [{ pid: c.pid, command: shown }], 'the running one, with its pid; the other is not there');
    const gone = exited(c);
    const r = await endTools(found, { graceMs: 3000 });
    assert.equal(r, { killed: [{ pid: c.pid, command: shown }], leftRunning: [] });
    await gone;
    assert.equal(
      processTable()!.filter((p) => p.pgid === c.pid && p.state !== 'Z'),
      [],
      'nothing of its group is left',
    );
  });

  test('a shell shown with other flags than it runs with is found by its script (observed: shown -lc, run -c)', async () => {
    const script = 'while true; do sleep 0.05; done';
    const c = await start(['/bin/bash', '-c', script], (a) => a[2] === script);
    const shown = `/bin/bash -lc '${script}'`;
    assert.equal(findTools(process.pid, [shown]), [{ pid: c.pid, command: shown }]);
    assert.equal(findTools(process.pid, [`/bin/sh -lc '${script}'`]), [], 'another shell is another command');
    const gone = exited(c);
    await endTools([{ pid: c.pid!, command: shown }]);
    await gone;
  });

  test('a shell that ran its one command in its own place is found by that command', async () => {
    const c = await start(['/bin/bash', '-c', 'exec sleep 30'], (a) => a[0] === 'sleep');
    assert.equal(findTools(process.pid, ["/bin/bash -c 'sleep 30'"]), [
      { pid: c.pid, command: "/bin/bash -c 'sleep 30'" },
    ]);
    const gone = exited(c);
    assert.equal((await endTools([{ pid: c.pid!, command: 'sleep 30' }])).killed.length, 1);
    await gone;
  });

  test('a process that ignores SIGTERM is ended with SIGKILL after the grace', async () => {
    const script = "trap '' TERM; while true; do sleep 0.05; done";
    const c = await start(['/bin/bash', '-c', script], (a) => a[2] === script);
    // The loop's first `sleep` runs only after the trap is set: a TERM before it would end the shell.
    await until(
      () => descendantsOf(c.pid!, processTable()!).some((p) => p.argv[0] === 'sleep'),
      'the trap set and the loop running',
    );
    const gone = exited(c);
    const r = await endTools([{ pid: c.pid!, command: script }], { graceMs: 300 });
    assert.equal(r.killed, [{ pid: c.pid, command: script }]);
    await gone;
    assert.is(c.signalCode, 'SIGKILL');
  });

  test('only what outlasts the vendor is left running: a command the vendor ends meanwhile is not', async () => {
    const script = (n: number) => `while true; do sleep 0.05; done; echo ${n}`;
    const ended = await start(['/bin/bash', '-c', script(1)], (a) => a[2] === script(1));
    const stays = await start(['/bin/bash', '-c', script(2)], (a) => a[2] === script(2));
    const tools = [
      { pid: ended.pid!, command: script(1) },
      { pid: stays.pid!, command: script(2) },
      { command: 'unseen' },
    ];
    const left = outlasting(tools, { graceMs: 2000 });
    // The vendor ends the command its turn was running, just after it said the turn ended.
    ended.kill('SIGKILL');
    assert.equal(await left, [tools[1], tools[2]]);
    stays.kill('SIGKILL');
  });

  test('where the lane cannot look (no vendor pid) the command is said without a pid, and never claimed ended', async () => {
    assert.equal(findTools(undefined, ['make test']), [{ command: 'make test' }]);
    assert.equal(await endTools([{ command: 'make test' }]), { killed: [], leftRunning: [{ command: 'make test' }] });
    assert.equal(findTools(process.pid, []), []);
  });
}

test.run();
