// The CLI on the steering path, each against a baseline interleaved in the same run (medians):
// 1. `aep-steer instruct --no-wait` through a real relay to a real adapter's ack vs `node -e ''`;
// 2. the `aep-steer hook` Node fallback vs the shell shim, both posting a PreToolUse to the adapter;
// 3. the cost of the silent wiring (every Claude Code hook runs the shim, which says nothing while
//    the adapter is stopped): the shim vs a direct HTTP POST, as an HTTP hook makes it.
// The relay and adapter run in this process; every measured side is its own process.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shimPath } from '../src/adapters/install.js';
import { scriptedSession } from '../src/demo/scripted-session.js';
import { startStack } from '../src/demo/stack.js';
import { interleave, median } from './lib/stats.js';
import { projectDir } from './lib/proc.js';
import { figure, QUICK, type BenchFigure } from './types.js';

const BIN = join(projectDir, 'bin', 'aep-steer.js');
const N = QUICK ? 5 : 15;

function timed(cmd: string, args: string[], stdin?: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: [stdin === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'] });
    let err = '';
    p.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    p.on('error', reject);
    p.on('close', (code) =>
      code === 0
        ? resolve(Number(process.hrtime.bigint() - t0) / 1e6)
        : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}: ${err}`)),
    );
    if (stdin !== undefined) p.stdin!.end(stdin);
  });
}

function post(url: string, body: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const ratiosOf = (a: number[], b: number[]) => a.map((v, i) => v / b[i]!);

export default async function cli(): Promise<BenchFigure[]> {
  const node = process.execPath;
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-cli-'));
  const stack = await startStack({ dir, relayPort: 0, hookPort: 0, memory: true });
  try {
    const s = scriptedSession();
    for (const h of s.opening) await stack.postHook(h);
    const pre = s.toolCall[0]!;
    const body = JSON.stringify(pre);
    const instruct = [
      BIN,
      'instruct',
      '--no-wait',
      '--relay',
      stack.relayUrl,
      '--token',
      stack.token,
      '--session',
      s.session,
      'keep the diff small',
    ];
    // Each instruction is delivered right after it is timed, so the queue never fills (D3).
    const noWait = async () => {
      const ms = await timed(node, instruct);
      await stack.postHook(pre);
      return ms;
    };
    await noWait();
    const runs = await interleave(N, {
      node: () => timed(node, ['-e', '']),
      noWait,
      shim: () => timed(shimPath(), [stack.hookUrl, '{}'], body),
      fallback: () => timed(node, [BIN, 'hook', 'claude-code', '--url', stack.hookUrl], body),
      http: () => post(stack.hookUrl, body),
    });
    return [
      figure({
        name: 'cli-instruct-no-wait',
        what: `\`aep-steer instruct --no-wait\` through the relay to the adapter's ack, median of ${N}`,
        unit: 'ms',
        value: median(runs.noWait),
        baseline: median(runs.node),
        baselineWhat: "`node -e ''`, interleaved",
        ratios: ratiosOf(runs.noWait, runs.node),
      }),
      figure({
        name: 'hook-node-fallback',
        what: `\`aep-steer hook\` (the Node fallback) posting a PreToolUse to the adapter, median of ${N}`,
        unit: 'ms',
        value: median(runs.fallback),
        baseline: median(runs.shim),
        baselineWhat: 'the shell shim (sh + curl), same hook, interleaved',
        ratios: ratiosOf(runs.fallback, runs.shim),
      }),
      figure({
        name: 'hook-silent-wiring',
        what: `the shim per Claude Code hook (silent while the adapter is stopped), median of ${N}`,
        unit: 'ms',
        value: median(runs.shim),
        baseline: median(runs.http),
        baselineWhat: 'a direct HTTP POST, as an HTTP hook makes it, interleaved',
        ratios: ratiosOf(runs.shim, runs.http),
      }),
    ];
  } finally {
    await stack.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
