// D45: what spawning through the adapter costs an orchestrator, against starting the vendor by
// hand in the same run. One process (bench/servers/spawn-stack.ts) holds the mock model, a relay
// and the Codex adapter with `--spawn-root`; each round starts a worker through a relay spawn and,
// interleaved, `codex exec` by hand in the same folder and environment. Two figures, medians over
// rounds: spawn → the worker's first model request (a new app-server, thread and turn, against a
// new `codex exec`), and the turn's last model request → `wait` answering `turn-ended` (the
// adapter's hooks and lane, the relay and the consumer's follow, against the CLI's own
// `turn.completed` line). The stack's CPU per worker is beside them.
import { post } from './load/http.js';
import { tsNode, withChildren } from './lib/proc.js';
import { interleave, median } from './lib/stats.js';
import { figure, QUICK, ROUNDS, type BenchFigure } from './types.js';

type Times = { first: number; end: number };

async function timed(url: string, path: 'spawn' | 'hand', tag: string): Promise<Times & { cpuMs: number }> {
  const cpu = async () => (JSON.parse((await post(`${url}/stats`, '')).text) as { cpuMs: number }).cpuMs;
  const before = await cpu();
  const r = JSON.parse((await post(`${url}/${path}?tag=${tag}`, '')).text) as Times & { error?: string };
  if (r.error !== undefined) throw new Error(`${path}: ${r.error}`);
  return { ...r, cpuMs: (await cpu()) - before };
}

export default async function spawnBench(): Promise<BenchFigure[]> {
  return withChildren([() => tsNode('servers/spawn-stack.ts', {}, {}, 180_000)], async ([stack]) => {
    const url = stack!.ready.url as string;
    let n = 0;
    const side = (path: 'spawn' | 'hand') => () => {
      n += 1;
      return timed(url, path, `bench-${path}-${n}`);
    };
    // One unmeasured start each: the CLI's first start reads more from disk than the rest.
    await side('spawn')();
    await side('hand')();
    const runs = await interleave(QUICK ? 1 : ROUNDS, { spawn: side('spawn'), hand: side('hand') });
    const cpu = `stack CPU per worker ${median(runs.spawn.map((r) => r.cpuMs)).toFixed(0)} ms (by hand: ${median(
      runs.hand.map((r) => r.cpuMs),
    ).toFixed(0)} ms)`;
    const of = (k: keyof Times) => ({
      value: median(runs.spawn.map((r) => r[k])),
      baseline: median(runs.hand.map((r) => r[k])),
      ratios: runs.spawn.map((r, i) => r[k] / runs.hand[i]![k]),
    });
    return [
      figure({
        name: 'spawn-first-request',
        what: 'a Codex worker spawned through the relay and adapter: the spawn sent → its first model request',
        unit: 'ms',
        ...of('first'),
        baselineWhat: '`codex exec` started by hand in the same folder and environment → its first model request',
        note: cpu,
      }),
      figure({
        name: 'spawn-turn-end-wait',
        what: "the worker's last model request of the turn → `wait` answers turn-ended (hooks, lane, relay, follow)",
        unit: 'ms',
        ...of('end'),
        baselineWhat: 'the same for `codex exec` by hand → its own `turn.completed` line on stdout',
        note: 'the mock model, relay and adapter share one process; the mock answers at once',
      }),
    ];
  });
}
