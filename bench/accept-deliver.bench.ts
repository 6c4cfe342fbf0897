// accept → deliver through one adapter process: 32 sessions at once, each handed 4 instructions
// (as the relay would) and then posting one eligible hook whose reply carries them, over the real
// hook endpoint with a real fsynced log. The baseline is the same HTTP round trips against the
// bare echo server, interleaved in the same run; CPU per instruction is the server process's
// own CPU time over the run. The load generator runs in its own process.
import { interleave, median } from './lib/stats.js';
import { runLoad, tsNode, withChildren } from './lib/proc.js';
import { figure, QUICK, ROUNDS, type BenchFigure } from './types.js';

const SESSIONS = 32;
const ROUNDS_PER_SESSION = QUICK ? 10 : 25;
const PER_HOOK = 4;

interface Run {
  seconds: number;
  delivered: number;
  cpuMs: number;
}

export default async function acceptDeliver(): Promise<BenchFigure[]> {
  return withChildren(
    [() => tsNode('servers/http-echo.ts', {}), () => tsNode('servers/adapter.ts', { surface: 'bench', fsync: true })],
    async ([echo, adapter]) => {
      const load = (server: Record<string, unknown>, count: boolean) => () =>
        runLoad<Run>('load/accept-deliver.ts', {
          url: server.url,
          injectUrl: server.injectUrl,
          statsUrl: server.statsUrl,
          sessions: SESSIONS,
          rounds: ROUNDS_PER_SESSION,
          perHook: PER_HOOK,
          count,
        });
      // One unmeasured pass warms both servers' JIT.
      await load(echo!.ready, false)();
      await load(adapter!.ready, true)();
      const runs = await interleave(ROUNDS, { echo: load(echo!.ready, false), adapter: load(adapter!.ready, true) });
      const expected = SESSIONS * ROUNDS_PER_SESSION * PER_HOOK;
      for (const r of runs.adapter)
        if (r.delivered !== expected)
          throw new Error(`accept-deliver: expected ${expected} deliveries, saw ${r.delivered}`);
      const rate = (r: Run) => r.delivered / r.seconds;
      const cpu = (r: Run) => r.cpuMs / r.delivered;
      const stats = (await (await fetch(`${adapter!.ready.statsUrl as string}?steps=1`)).json()) as {
        syncs: number;
        steps: number;
      };
      const what = `${SESSIONS} sessions at once, ${PER_HOOK} instructions per hook, log fsynced`;
      return [
        figure({
          name: 'accept-deliver-throughput',
          what: `instructions accepted and delivered per second through one adapter process; ${what}`,
          unit: 'instr/s',
          value: median(runs.adapter.map(rate)),
          baseline: median(runs.echo.map(rate)),
          baselineWhat: 'the same HTTP round trips (inject + hook) against the bare echo server',
          ratios: runs.adapter.map((r, i) => rate(r) / rate(runs.echo[i]!)),
          goal: '>= 0.8',
        }),
        figure({
          name: 'accept-deliver-cpu',
          what: `adapter process CPU per delivered instruction; ${what}`,
          unit: 'ms CPU',
          value: median(runs.adapter.map(cpu)),
          baseline: median(runs.echo.map(cpu)),
          baselineWhat: 'echo server CPU for the same round trips, per instruction',
          ratios: runs.adapter.map((r, i) => cpu(r) / cpu(runs.echo[i]!)),
        }),
        figure({
          name: 'accept-deliver-fsyncs-per-step',
          what: `log fsyncs per logged step over the whole run (group commit: concurrent steps share one)`,
          unit: 'fsync/step',
          value: stats.syncs / stats.steps,
          baseline: 1,
          baselineWhat: 'one fsync per logged step (every step synced alone)',
        }),
      ];
    },
  );
}
