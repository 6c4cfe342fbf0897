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
import { beforeCommit, beforeDir, startBefore } from './lib/before.js';
import { runLoad, tsNode, withChildren, type Child } from './lib/proc.js';
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

type Ready = { url: string; injectUrl: string; statsUrl: string };
type Pass = { p50: number; p99: number };
const ADAPTER_ARG = { surface: 'qwen-code', fsync: true, timed: true };

/** Both sessions known through their first hook, and the daemon's session in a turn for the whole bench. */
async function prepare(daemon: Child, a: Ready): Promise<void> {
  for (const s of [SERVE, HOOK]) await post(a.url, sessionStart(s));
  await post(`${daemon.ready.url as string}/bench/turn?session=${SERVE}`, '{}');
}

/** One round of `n` instructions on one lane of one adapter, timed inside it. */
const passOf = (a: Ready, lane: 'serve' | 'hook', session: string) => async (): Promise<Pass> => {
  const r = await runLoad<{ ms: number[] }>('load/lane-steer.ts', {
    lane,
    hookUrl: a.url,
    injectUrl: a.injectUrl,
    settledUrl: a.statsUrl.replace(/\/stats$/, '/settled'),
    session,
    n: N,
    warmup: WARMUP,
  });
  return { p50: quantile(r.ms, 0.5), p99: quantile(r.ms, 0.99) };
};

/**
 * With AEP_BENCH_BEFORE_DIR set, the same adapter server of that checkout on its own stand-in
 * daemon, interleaved with this tree's: the steer's before-and-after pair in one run.
 */
async function withBefore<T>(body: (before: Ready | undefined) => Promise<T>): Promise<T> {
  if (beforeDir() === undefined) return body(undefined);
  return withChildren([() => tsNode('servers/qwen-serve.ts', { sessions: [SERVE] })], ([daemon]) =>
    withChildren(
      [() => startBefore('adapter.ts', { ...ADAPTER_ARG, serve: daemon!.ready.url }, ['url', 'injectUrl', 'statsUrl'])],
      async ([adapter]) => {
        const a = adapter!.ready as Ready;
        await prepare(daemon!, a);
        return body(a);
      },
    ),
  );
}

export default async function nativeLane(): Promise<BenchFigure[]> {
  return withChildren([() => tsNode('servers/qwen-serve.ts', { sessions: [SERVE] })], ([daemon]) =>
    withChildren([() => tsNode('servers/adapter.ts', { ...ADAPTER_ARG, serve: daemon!.ready.url })], ([adapter]) =>
      withBefore(async (before) => {
        const a = adapter!.ready as Ready;
        await prepare(daemon!, a);
        // One unmeasured pass each: the lane attaches (the steer is retried until it has) and
        // both paths are warm.
        await passOf(a, 'serve', SERVE)();
        await passOf(a, 'hook', HOOK)();
        if (before !== undefined) await passOf(before, 'serve', SERVE)();
        const runs = await interleave(ROUNDS, {
          serve: passOf(a, 'serve', SERVE),
          hook: passOf(a, 'hook', HOOK),
          ...(before !== undefined ? { before: passOf(before, 'serve', SERVE) } : {}),
        } as Record<'serve' | 'hook' | 'before', () => Promise<Pass>>);
        const steer =
          `a steer through the qwen-code serve lane (stand-in qwen serve daemon, receipt at once), ` +
          `instruct's injection → instruction.delivered, log fsynced`;
        return (['p50', 'p99'] as const).flatMap((q) => [
          figure({
            name: `native-lane-steer-${q}`,
            what: `${steer}, ${q} of ${N} per round`,
            unit: 'ms',
            value: median(runs.serve.map((r) => r[q])),
            baseline: median(runs.hook.map((r) => r[q])),
            baselineWhat:
              'a moment instruction through the hook lane of the same adapter, an eligible PostToolUse ' +
              'posted at once, injection → instruction.delivered',
            ratios: runs.serve.map((r, i) => r[q] / runs.hook[i]![q]),
          }),
          ...(before === undefined
            ? []
            : [
                figure({
                  name: `native-lane-steer-vs-before-${q}`,
                  what: `${steer}, against the same through the adapter of the checkout before, ${q} of ${N} per round`,
                  unit: 'ms',
                  value: median(runs.serve.map((r) => r[q])),
                  baseline: median(runs.before.map((r) => r[q])),
                  baselineWhat: `the same steers through the adapter of the checkout AEP_BENCH_BEFORE_DIR names (${beforeCommit()})`,
                  ratios: runs.serve.map((r, i) => r[q] / runs.before[i]![q]),
                }),
              ]),
        ]);
      }),
    ),
  );
}
