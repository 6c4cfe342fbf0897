// instruct → ack through the relay to the real Claude Code adapter (relay link, fsynced log):
// a consumer sends one instruct at a time and times it until the adapter's control.accepted comes
// back. The floor, measured in the same run: the same round trip through a bare ws forwarder to
// an acking socket, plus one small append made durable as the log makes it (fdatasync; an ack
// waits for its record, D4).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { interleave, median } from './lib/stats.js';
import { runLoad, tsNode, withChildren } from './lib/proc.js';
import { post } from './load/http.js';
import { figure, QUICK, ROUNDS, type BenchFigure } from './types.js';

const N = QUICK ? 100 : 300;
const TOKEN = 'bench-token';

export default async function instructAck(): Promise<BenchFigure[]> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-instruct-'));
  try {
    return await withChildren(
      [
        () => tsNode('servers/relay.ts', { store: join(dir, 'relay.db'), token: TOKEN }),
        () => tsNode('servers/ws-broadcast.ts', {}),
      ],
      async ([relay, bare]) => {
        const relayUrl = relay!.ready.socketUrl as string;
        return withChildren(
          [
            () =>
              tsNode('servers/adapter.ts', {
                surface: 'claude-code',
                fsync: true,
                relay: { url: relayUrl, token: TOKEN },
              }),
          ],
          async ([adapter]) => {
            const type = adapter!.ready.steeringType as string;
            let k = 0;
            const viaAdapter = async () => {
              // A session the adapter claims with its first hook; commands route to it (D17).
              const session = `bench-instruct-${k++}`;
              const hook = (e: string) =>
                JSON.stringify({
                  session_id: session,
                  hook_event_name: e,
                  cwd: '/tmp',
                  transcript_path: '/tmp/t.jsonl',
                  prompt: 'go on',
                  source: 'startup',
                });
              await post(adapter!.ready.url as string, hook('SessionStart'));
              const r = await runLoad<{ ms: number[] }>('load/ws-command.ts', {
                url: relayUrl,
                token: TOKEN,
                n: N,
                warmup: 30,
                target: 'external',
                type,
                session,
                drain: { url: adapter!.ready.url, body: hook('UserPromptSubmit'), every: 10 },
              });
              return median(r.ms);
            };
            const floor = async () => {
              const r = await runLoad<{ ms: number[]; fsyncMs: number[] }>('load/ws-command.ts', {
                url: bare!.ready.socketUrl,
                token: TOKEN,
                n: N,
                warmup: 30,
                target: 'self',
                type,
                session: 'bench-floor',
                bare: true,
                fsyncs: 200,
              });
              return { ws: median(r.ms), fsync: median(r.fsyncMs) };
            };
            const runs = await interleave(ROUNDS, { floor, adapter: viaAdapter });
            const floors = runs.floor.map((f) => f.ws + f.fsync);
            return [
              figure({
                name: 'instruct-ack-p50',
                what: `instruct → control.accepted through the relay (SQLite store) to the real claude-code adapter, median of ${N}`,
                unit: 'ms',
                value: median(runs.adapter),
                baseline: median(floors),
                baselineWhat: `relay forward floor (bare ws forward to an acking socket, ${median(runs.floor.map((f) => f.ws)).toFixed(3)} ms) + one durable append (fdatasync, ${median(runs.floor.map((f) => f.fsync)).toFixed(3)} ms)`,
                ratios: runs.adapter.map((v, i) => v / floors[i]!),
                goal: '<= 1.3',
              }),
            ];
          },
        );
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
