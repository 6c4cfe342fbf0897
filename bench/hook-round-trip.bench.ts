// Hook round trip, two ways, each against a baseline measured in the same run:
// 1. a PreToolUse POST through the Claude Code adapter's hook endpoint (classify, session step,
//    log append, reply) vs the same POST to a bare Node HTTP echo server on loopback;
// 2. the command-hook shim (sh + curl, fail-open wrapper) vs a bare `curl` POST, both to the echo
//    server, so the figure is the shim's own overhead per hook.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shimPath } from '../src/adapters/install.js';
import { surfaceFor } from '../src/adapters/registry.js';
import { startAdapter } from '../src/streams/run.js';
import { figure, type BenchFigure } from './types.js';

const HTTP_N = 400;
const HTTP_WARMUP = 40;
const SPAWN_N = 40;
const SPAWN_WARMUP = 4;

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};

function post(agent: Agent, url: string, body: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(Number(process.hrtime.bigint() - t0) / 1e6));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function timedSpawn(cmd: string, args: string[], stdin: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'] });
    p.on('error', reject);
    p.on('close', (code) => (code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${cmd} exited ${code}`))));
    p.stdin.end(stdin);
  });
}

async function sample(n: number, warmup: number, once: () => Promise<number>): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await once();
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await once());
  return out;
}

const hook = (session: string, event: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    session_id: session, transcript_path: `/home/dev/.claude/projects/p/${session}.jsonl`, cwd: '/home/dev/project',
    hook_event_name: event, prompt_id: 'c2f7fdd2-d420-4cd5-84e2-1e82a076a51c', permission_mode: 'bypassPermissions', ...extra,
  });

export default async function hookRoundTrip(): Promise<BenchFigure[]> {
  const echo = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}'));
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', r));
  const echoUrl = `http://127.0.0.1:${(echo.address() as AddressInfo).port}/hook/bench-secret-0123456789`;

  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-hook-'));
  const adapter = await startAdapter({
    surface: surfaceFor('claude-code')!, port: 0, secret: 'bench-secret-0123456789', logPath: join(dir, 'adapter.jsonl'), instruct: true,
    onError: () => undefined,
  });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const figures: BenchFigure[] = [];
  try {
    const session = 'bench-session-1';
    await post(agent, adapter.hookUrl, hook(session, 'SessionStart', { source: 'startup' }));
    const pre = hook(session, 'PreToolUse', { tool_name: 'Bash', tool_input: { command: 'echo hi', description: 'Print hi' }, tool_use_id: 'toolu_1' });
    const viaAdapter = await sample(HTTP_N, HTTP_WARMUP, () => post(agent, adapter.hookUrl, pre));
    const viaEcho = await sample(HTTP_N, HTTP_WARMUP, () => post(agent, echoUrl, pre));
    for (const [q, label] of [[0.5, 'p50'], [0.99, 'p99']] as const) {
      figures.push(figure({
        name: `hook-round-trip-${label}`,
        what: `PreToolUse POST through the claude-code adapter endpoint, ${label} of ${HTTP_N}`,
        unit: 'ms', value: quantile(viaAdapter, q), baseline: quantile(viaEcho, q),
        baselineWhat: 'same POST to a bare Node HTTP echo server',
      }));
    }

    const shim = shimPath();
    const viaShim = await sample(SPAWN_N, SPAWN_WARMUP, () => timedSpawn(shim, [echoUrl, '{}'], pre));
    const viaCurl = await sample(SPAWN_N, SPAWN_WARMUP, () => timedSpawn('curl', ['-s', '-H', 'content-type: application/json', '--data-binary', '@-', echoUrl], pre));
    for (const [q, label] of [[0.5, 'p50'], [0.99, 'p99']] as const) {
      figures.push(figure({
        name: `hook-shim-${label}`,
        what: `command-hook shim (sh + curl, fail-open) posting to the echo server, ${label} of ${SPAWN_N}`,
        unit: 'ms', value: quantile(viaShim, q), baseline: quantile(viaCurl, q),
        baselineWhat: 'bare curl POST to the same echo server',
      }));
    }
  } finally {
    agent.destroy();
    await adapter.close();
    await new Promise<void>((r) => echo.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
