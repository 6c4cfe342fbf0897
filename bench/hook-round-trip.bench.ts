// Hook round trip, each against a baseline interleaved in the same run:
// 1. an empty-queue PreToolUse POST through the Claude Code adapter's hook endpoint (classify,
//    session step, log, reply), with the log fsynced (the default) and without, vs the same POST
//    to a bare Node HTTP server that reads the body and replies `{}`. Adapter and echo server
//    each run in their own process; the load generator (`http.request`, one keep-alive socket)
//    in a third.
//    With AEP_BENCH_BEFORE_DIR naming another checkout (the commit before the delivery choice,
//    withdrawal and native lanes), that checkout's own adapter server runs interleaved too, and
//    the same POST through it is the baseline of the `hook-round-trip-vs-before-*` rows.
// 2. the command-hook shim (sh + curl, fail-open wrapper) vs a bare `curl` POST, both to the echo
//    server, so the figure is the shim's own overhead per hook.
import { spawn } from 'node:child_process';
import { shimPath } from '../src/adapters/install.js';
import { beforeAbsent, beforeCommit, beforeDir, startBefore } from './lib/before.js';
import { interleave, median, quantile } from './lib/stats.js';
import { runLoad, tsNode, withChildren, type Child } from './lib/proc.js';
import { figure, QUICK, ROUNDS, type BenchFigure } from './types.js';

const HTTP_N = QUICK ? 300 : 1000;
const HTTP_WARMUP = QUICK ? 100 : 200;
const SPAWN_N = QUICK ? 10 : 30;

const hook = (session: string, event: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    session_id: session,
    transcript_path: `/home/dev/.claude/projects/p/${session}.jsonl`,
    cwd: '/home/dev/project',
    hook_event_name: event,
    prompt_id: 'c2f7fdd2-d420-4cd5-84e2-1e82a076a51c',
    permission_mode: 'bypassPermissions',
    ...extra,
  });

function timedSpawn(cmd: string, args: string[], stdin: string): Promise<number> {
  const t0 = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'ignore'] });
    p.on('error', reject);
    p.on('close', (code) =>
      code === 0 ? resolve(Number(process.hrtime.bigint() - t0) / 1e6) : reject(new Error(`${cmd} exited ${code}`)),
    );
    p.stdin.end(stdin);
  });
}

const BEFORE = 'the same POSTs through the adapter of the checkout AEP_BENCH_BEFORE_DIR names';

export default async function hookRoundTrip(): Promise<BenchFigure[]> {
  const figures: BenchFigure[] = [];
  const syncedArg = { surface: 'claude-code', fsync: true } as const;
  const starts: (() => Promise<Child>)[] = [
    () => tsNode('servers/http-echo.ts', {}),
    () => tsNode('servers/adapter.ts', syncedArg),
    () => tsNode('servers/adapter.ts', { surface: 'claude-code', fsync: false }),
  ];
  // The other checkout's server takes the same argument and answers the same ready line.
  if (beforeDir() !== undefined) starts.push(() => startBefore('adapter.ts', syncedArg, ['url', 'statsUrl']));
  await withChildren(starts, async ([echo, synced, unsynced, before]) => {
    let round = 0;
    const cpuOf = async (statsUrl: string): Promise<number> =>
      ((await (await fetch(statsUrl)).json()) as { cpuMs: number }).cpuMs;
    const pass = (server: Record<string, unknown>) => async () => {
      const url = server.url as string;
      const statsUrl = server.statsUrl as string;
      // A fresh session per pass, so every pass starts from the same empty queue.
      const session = `bench-session-${round++}`;
      const pre = hook(session, 'PreToolUse', {
        tool_name: 'Bash',
        tool_input: { command: 'echo hi', description: 'Print hi' },
        tool_use_id: 'toolu_1',
      });
      const cpu0 = await cpuOf(statsUrl);
      const r = await runLoad<{ ms: number[] }>('load/http.ts', {
        url,
        bodies: [pre],
        n: HTTP_N,
        warmup: HTTP_WARMUP,
        first: [hook(session, 'SessionStart', { source: 'startup' })],
      });
      // The server's own CPU per hook over the pass (warm-up and first hook included): far less
      // moved by other work on the machine than the round trip's latency.
      const cpuUs = ((await cpuOf(statsUrl)) - cpu0) * (1000 / (HTTP_N + HTTP_WARMUP + 1));
      return { p50: quantile(r.ms, 0.5), p99: quantile(r.ms, 0.99), cpuUs };
    };
    const runs = await interleave(ROUNDS, {
      echo: pass(echo!.ready),
      synced: pass(synced!.ready),
      unsynced: pass(unsynced!.ready),
      ...(before === undefined ? {} : { before: pass(before.ready) }),
    });
    const baselineWhat = 'same POST to a bare Node HTTP server that reads the body and replies {}';
    for (const q of ['p50', 'p99'] as const) {
      const ratios = runs.synced.map((r, i) => r[q] / runs.echo[i]![q]);
      figures.push(
        figure({
          name: `hook-round-trip-${q}`,
          what: `empty-queue PreToolUse POST through the claude-code adapter, log fsynced, ${q} of ${HTTP_N} per round`,
          unit: 'ms',
          value: median(runs.synced.map((r) => r[q])),
          baseline: median(runs.echo.map((r) => r[q])),
          baselineWhat,
          ratios,
          ...(q === 'p50' ? { goal: '<= 1.3' } : {}),
        }),
      );
    }
    figures.push(
      figure({
        name: 'hook-round-trip-nofsync-p50',
        what: `the same with the log written but not fsynced, p50`,
        unit: 'ms',
        value: median(runs.unsynced.map((r) => r.p50)),
        baseline: median(runs.echo.map((r) => r.p50)),
        baselineWhat,
        ratios: runs.unsynced.map((r, i) => r.p50 / runs.echo[i]!.p50),
      }),
    );

    const vsBefore = [
      { q: 'p50', unit: 'ms', what: `the same empty-queue PreToolUse POST, log fsynced, p50 of ${HTTP_N} per round` },
      { q: 'p99', unit: 'ms', what: `the same empty-queue PreToolUse POST, log fsynced, p99 of ${HTTP_N} per round` },
      { q: 'cpuUs', unit: 'µs CPU', what: 'the adapter process CPU per empty-queue hook over each round' },
    ] as const;
    for (const { q, unit, what } of vsBefore) {
      const row = {
        name: `hook-round-trip-vs-before-${q === 'cpuUs' ? 'cpu' : q}`,
        what: `hook round trip, this tree against the checkout before the delivery choice and the lanes: ${what}`,
        unit,
      };
      const then = runs.before;
      if (then === undefined) {
        figures.push(
          figure({ ...row, value: NaN, baseline: NaN, baselineWhat: `${BEFORE} (absent)`, note: beforeAbsent }),
        );
        continue;
      }
      const ratios = runs.synced.map((r, i) => r[q] / then[i]![q]);
      figures.push(
        figure({
          ...row,
          value: median(runs.synced.map((r) => r[q])),
          baseline: median(then.map((r) => r[q])),
          baselineWhat: BEFORE,
          ratios,
          note: `before: ${beforeCommit()}; ratio per round ${ratios.map((r) => r.toFixed(2)).join(', ')}`,
        }),
      );
    }

    const echoUrl = echo!.ready.url as string;
    const body = hook('bench-shim', 'PreToolUse', {
      tool_name: 'Bash',
      tool_input: { command: 'echo hi' },
      tool_use_id: 'toolu_1',
    });
    const shim = shimPath();
    const spawnRuns = await interleave(SPAWN_N, {
      shim: () => timedSpawn(shim, [echoUrl, '{}'], body),
      curl: () =>
        timedSpawn('curl', ['-s', '-H', 'content-type: application/json', '--data-binary', '@-', echoUrl], body),
    });
    figures.push(
      figure({
        name: 'hook-shim-p50',
        what: `command-hook shim (sh + curl, fail-open) posting to the echo server, p50 of ${SPAWN_N}`,
        unit: 'ms',
        value: median(spawnRuns.shim),
        baseline: median(spawnRuns.curl),
        baselineWhat: 'bare curl POST to the same echo server, interleaved',
      }),
    );
  });
  return figures;
}
