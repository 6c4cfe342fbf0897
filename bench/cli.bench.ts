// The CLI as a user runs it, each against a baseline in the same run:
// 1. `aep-steer --version` (compiled dist/, nothing heavy loaded) vs `node -e ''`;
// 2. `aep-steer instruct --no-wait` through a real relay to a real adapter vs `node -e ''`;
// 3. the `aep-steer hook` Node fallback vs the shell shim, both posting a PreToolUse to the adapter;
// 4. the cost of the silent wiring (D27/issue: every Claude Code hook runs the shim, which says
//    nothing while the adapter is stopped): the shim vs a direct HTTP POST, as an HTTP hook would.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shimPath } from '../src/adapters/install.js';
import { scriptedSession } from '../src/demo/scripted-session.js';
import { startStack } from '../src/demo/stack.js';
import { interleave } from './lib/stats.js';
import { figure, type BenchFigure } from './types.js';

const root = join(import.meta.dirname ?? new URL('.', import.meta.url).pathname, '..');
const BIN = join(root, 'bin', 'aep-steer.js');
const N = 15;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timed(cmd: string, args: string[], stdin?: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: [stdin === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'] });
    let err = '';
    p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`))));
    if (stdin !== undefined) p.stdin!.end(stdin);
  });
}

function post(url: string, body: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function sample(n: number, once: () => Promise<number>, between?: () => Promise<unknown>): Promise<number[]> {
  await once();
  await between?.();
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    out.push(await once());
    await between?.();
  }
  return out;
}

export default async function cli(): Promise<BenchFigure[]> {
  // The CLI runs compiled JavaScript: build it from the sources of this run.
  const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('build failed');
  const node = process.execPath;
  // Interleaved, so load from elsewhere on the machine hits both alike.
  await timed(node, [BIN, '--version']);
  const runs = await interleave(N, { bare: () => timed(node, ['-e', '']), version: () => timed(node, [BIN, '--version']), help: () => timed(node, [BIN, '--help']) });
  const { bare, version } = runs;
  const figures: BenchFigure[] = [figure({
    name: 'cli-version', what: `aep-steer --version (compiled), median of ${N}`, unit: 'ms',
    value: median(version), baseline: median(bare), baselineWhat: "node -e '' (process start), interleaved",
    ratios: version.map((v, i) => v / bare[i]!), goal: '<= 1.5',
  }), figure({
    name: 'cli-help', what: `aep-steer --help (compiled), median of ${N}`, unit: 'ms',
    value: median(runs.help), baseline: median(bare), baselineWhat: "node -e '' (process start), interleaved",
    ratios: runs.help.map((v, i) => v / bare[i]!),
  })];

  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-cli-'));
  const stack = await startStack({ dir, relayPort: 0, hookPort: 0, memory: true });
  try {
    const s = scriptedSession();
    for (const h of s.opening) await stack.postHook(h);
    const pre = s.toolCall[0]!;
    await new Promise((r) => setTimeout(r, 200));
    const args = [BIN, 'instruct', '--no-wait', '--relay', stack.relayUrl, '--token', stack.token, '--session', s.session, 'keep the diff small'];
    // Each instruction is delivered between samples, so the queue never fills (D3).
    const noWait = await sample(N, () => timed(node, args), () => stack.postHook(pre));
    figures.push(figure({
      name: 'cli-instruct-no-wait', what: `aep-steer instruct --no-wait through the relay to the adapter's ack, median of ${N}`, unit: 'ms',
      value: median(noWait), baseline: median(bare), baselineWhat: "node -e '' (process start)",
    }));

    const body = JSON.stringify(pre);
    const viaShim = await sample(N, () => timed(shimPath(), [stack.hookUrl, '{}'], body));
    const viaNode = await sample(N, () => timed(node, [BIN, 'hook', 'claude-code', '--url', stack.hookUrl], body));
    figures.push(figure({
      name: 'hook-node-fallback', what: `aep-steer hook (Node fallback) posting a PreToolUse to the adapter, median of ${N}`, unit: 'ms',
      value: median(viaNode), baseline: median(viaShim), baselineWhat: 'the shell shim (sh + curl), same hook',
    }));
    const direct = await sample(N * 4, () => post(stack.hookUrl, body));
    figures.push(figure({
      name: 'hook-silent-wiring', what: `the shim per Claude Code hook (silent while the adapter is stopped), median of ${N}`, unit: 'ms',
      value: median(viaShim), baseline: median(direct), baselineWhat: 'a direct HTTP POST, as an HTTP hook makes it',
    }));
  } finally {
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
