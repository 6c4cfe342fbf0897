// A native-lane steer against a hook-lane delivery, through one real adapter process: the Qwen
// Code table with its `serve` lane attached to a stand-in `qwen serve` daemon
// (bench/servers/qwen-serve.ts, the edge of the world: it answers the mid-turn message as the
// daemon does and sends the `mid_turn_message_injected` receipt at once). Each instruction is
// timed inside the adapter from its injection (as the relay hands it over) to its
// `instruction.delivered`: `delivery: steer` to a daemon-hosted session in a running turn (the
// lane's POST, the daemon's answer and receipt, both steps logged and fsynced), against a
// `moment` instruction to a hook-only session followed at once by an eligible PostToolUse hook
// (whose reply carries it). Interleaved rounds, one instruction at a time, p50 and p99 per
// round; daemon, adapter and load generator each in their own process.
import { post } from './load/http.js';
import { runLoad, tsNode, withChildren } from './lib/proc.js';
import { interleave, median, quantile } from './lib/stats.js';
import { figure, QUICK, ROUNDS, type BenchFigure } from './types.js';

const N = QUICK ? 100 : 400;
const WARMUP = QUICK ? 20 : 50;
const SERVE = 'bench-serve-0';
const HOOK = 'bench-hook-0';

const sessionStart = (session: string) =>
  JSON.stringify({
    session_id: session,
    transcript_path: `/home/dev/.qwen/projects/-home-dev-project/chats/${session}.jsonl`,
    cwd: '/home/dev/project',
    hook_event_name: 'SessionStart',
    permission_mode: 'yolo',
    source: 'startup',
    model: 'mock-model',
  });

export default async function nativeLane(): Promise<BenchFigure[]> {
  return withChildren([() => tsNode('servers/qwen-serve.ts', { sessions: [SERVE] })], ([daemon]) =>
    withChildren(
      [
        () =>
          tsNode('servers/adapter.ts', { surface: 'qwen-code', fsync: true, serve: daemon!.ready.url, timed: true }),
      ],
      async ([adapter]) => {
        const a = adapter!.ready as { url: string; injectUrl: string; statsUrl: string };
        const settledUrl = a.statsUrl.replace(/\/stats$/, '/settled');
        // Both sessions are known through their first hook (a lane's reach waits for it); the
        // daemon's session then runs a turn for the whole bench.
        for (const s of [SERVE, HOOK]) await post(a.url, sessionStart(s));
        await post(`${daemon!.ready.url as string}/bench/turn?session=${SERVE}`, '{}');
        const pass = (lane: 'serve' | 'hook', session: string, warmup: number) => async () => {
          const r = await runLoad<{ ms: number[] }>('load/lane-steer.ts', {
            lane,
            hookUrl: a.url,
            injectUrl: a.injectUrl,
            settledUrl,
            session,
            n: N,
            warmup,
          });
          return { p50: quantile(r.ms, 0.5), p99: quantile(r.ms, 0.99) };
        };
        // One unmeasured pass each: the lane attaches (the steer is retried until it has) and
        // both paths are warm.
        await pass('serve', SERVE, WARMUP)();
        await pass('hook', HOOK, WARMUP)();
        const runs = await interleave(ROUNDS, {
          serve: pass('serve', SERVE, WARMUP),
          hook: pass('hook', HOOK, WARMUP),
        });
        return (['p50', 'p99'] as const).map((q) =>
          figure({
            name: `native-lane-steer-${q}`,
            what:
              `a steer through the qwen-code serve lane (stand-in qwen serve daemon, receipt at once), ` +
              `instruct's injection → instruction.delivered, log fsynced, ${q} of ${N} per round`,
            unit: 'ms',
            value: median(runs.serve.map((r) => r[q])),
            baseline: median(runs.hook.map((r) => r[q])),
            baselineWhat:
              'a moment instruction through the hook lane of the same adapter, an eligible PostToolUse ' +
              'posted at once, injection → instruction.delivered',
            ratios: runs.serve.map((r, i) => r[q] / runs.hook[i]![q]),
          }),
        );
      },
    ),
  );
}
