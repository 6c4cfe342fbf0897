#!/usr/bin/env node
// Test runner: each uvu test file runs in its own Node process (through tsx), two at a time,
// with a per-file time limit, so one file's open socket or timer cannot hang or skew the others.
// Usage: node scripts/test.mjs <dir> <file-suffix> [--jobs N] [--timeout-ms N] [--verbose] [--no-build] [filter...]
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { RUN_MARK, endLeftovers, vendorLeftovers } from './leftover-processes.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  if (i < 0) return dflt;
  const v = args[i + 1];
  args.splice(i, 2);
  return v;
};
const jobs = Number(opt('--jobs', process.env.TEST_JOBS ?? '2'));
const timeoutMs = Number(opt('--timeout-ms', process.env.TEST_TIMEOUT_MS ?? '300000'));
const verbose = args.includes('--verbose');
if (verbose) args.splice(args.indexOf('--verbose'), 1);
const noBuild = args.includes('--no-build') || process.env.TEST_NO_BUILD === '1';
if (args.includes('--no-build')) args.splice(args.indexOf('--no-build'), 1);
const [dir = 'test', suffix = '.test.ts', ...filters] = args;

const walk = (d) =>
  readdirSync(d).flatMap((name) => {
    const p = join(d, name);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith(suffix) ? [p] : [];
  });
const files = walk(dir)
  .sort()
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (files.length === 0) {
  console.error(`no ${suffix} files under ${dir}${filters.length ? ` matching ${filters.join(', ')}` : ''}`);
  process.exit(1);
}

// Tests that run `bin/aep-steer.js` as a process run the compiled dist/: build it from the
// sources first, so no test runs yesterday's build.
if (!noBuild) {
  const built = spawnSync(process.execPath, [join('scripts', 'build.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) {
    console.error('build failed: fix the type errors above (or pass --no-build)');
    process.exit(1);
  }
}

const results = [];
// What the test files start carries this run's mark, so what they leave behind can be found.
const mark = randomUUID();
const runOne = (file) =>
  new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', [RUN_MARK]: mark },
    });
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
    });
    child.stderr.on('data', (b) => {
      out += b;
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const passed = /Passed:\s+(\d+)/.exec(out)?.[1];
      const total = /Total:\s+(\d+)/.exec(out)?.[1];
      const ok = code === 0 && !timedOut && passed !== undefined && passed === total;
      const secs = ((Date.now() - started) / 1000).toFixed(1);
      const why = timedOut ? `timed out after ${timeoutMs} ms` : ok ? '' : `exit ${code ?? signal}`;
      console.log(`${ok ? 'ok  ' : 'FAIL'} ${relative('.', file)}  ${passed ?? '?'}/${total ?? '?'}  ${secs}s ${why}`);
      if (!ok || verbose)
        console.log(
          out
            .split('\n')
            .map((l) => `     | ${l}`)
            .join('\n'),
        );
      results.push({ file, ok });
      resolve();
    });
  });

const queue = [...files];
await Promise.all(
  Array.from({ length: Math.max(1, jobs) }, async () => {
    while (queue.length) await runOne(queue.shift());
  }),
);
const failed = results.filter((r) => !r.ok);
console.log(`\n${results.length - failed.length}/${results.length} test files passed`);
// No test may leave a vendor CLI running (a daemon that outlived its TUI, a run never ended).
let leaked = [];
if (suffix === '.e2e.ts') {
  leaked = vendorLeftovers(mark);
  if (leaked.length > 0) {
    console.log(`FAIL ${leaked.length} vendor process(es) the tests left running (now ended):`);
    for (const p of leaked) console.log(`     | pid ${p.pid}: ${p.command}`);
    await endLeftovers(leaked);
  }
}
process.exit(failed.length || leaked.length ? 1 : 0);
