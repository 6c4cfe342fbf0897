// accept→deliver throughput through one adapter process: the real hook endpoint on loopback,
// the real session actor, a real (fsynced) event log. Each round injects instructions as the
// relay would, posts one eligible hook, and waits for every delivered event (written reply, D9).
// Baseline in the same run: a plain-object FIFO doing the same queue work (push, whole prefix
// within 10,000 chars, join) with no actor, log, HTTP or events.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { command } from '../src/protocol/index.js';
import { startAdapter } from '../src/streams/run.js';
import type { VendorSurface } from '../src/streams/surface.js';
import { figure, type BenchFigure } from './types.js';

const ROUNDS = 400;
const PER_HOOK = 4;
const TEXT = 'keep the change small and run the unit tests before committing';

const surface: VendorSurface = {
  token: 'bench-agent',
  steeringType: 'x.bench-agent.control.instruct',
  port: 0,
  attentionTimeoutMs: 55_000,
  classify: (input) => ({
    session: String(input.session_id), event: String(input.hook_event_name), observations: [],
    class: { kind: 'moment', eligible: input.hook_event_name === 'UserPromptSubmit' },
  }),
  contextReply: (hook, text) => ({ body: { hookSpecificOutput: { hookEventName: hook.event, additionalContext: text } } }),
  neutralReply: () => ({ body: {} }),
  decisionReply: () => ({ body: {} }),
};

async function adapterRate(fsync: boolean): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-'));
  const a = await startAdapter({ surface, port: 0, secret: 'bench', logPath: join(dir, 'log.jsonl'), instruct: true, host: 'bench', fsync, onError: () => undefined });
  const url = `${a.hookUrl}`;
  const post = (event: string) => fetch(url, { method: 'POST', body: JSON.stringify({ session_id: 'bench-session', hook_event_name: event }) }).then((r) => r.text());
  await post('SessionStart');
  let n = 0;
  const sender = { agent: 'bench-sender', host: 'bench' };
  const started = performance.now();
  for (let r = 0; r < ROUNDS; r += 1) {
    const delivered = firstValueFrom(a.events$.pipe(filter((e) => e.type === 'x.bench-agent.instruction.delivered'), take(PER_HOOK), toArray()));
    for (let i = 0; i < PER_HOOK; i += 1) {
      a.command(command(sender, 'bench-session', { type: surface.steeringType, data: { text: TEXT }, capture: 'redacted' }));
    }
    await post('UserPromptSubmit');
    n += (await delivered).length;
  }
  const seconds = (performance.now() - started) / 1000;
  await a.close();
  rmSync(dir, { recursive: true, force: true });
  return n / seconds;
}

function baselineRate(): number {
  const queue: { id: number; text: string; at: number }[] = [];
  let delivered = 0;
  let sink = 0;
  const total = ROUNDS * PER_HOOK * 50;
  const started = performance.now();
  for (let r = 0; r < total / PER_HOOK; r += 1) {
    for (let i = 0; i < PER_HOOK; i += 1) queue.push({ id: r * PER_HOOK + i, text: TEXT, at: r });
    let length = 0;
    let k = 0;
    while (k < queue.length && length + (k ? 2 : 0) + queue[k]!.text.length <= 10_000) length += (k ? 2 : 0) + queue[k++]!.text.length;
    const taken = queue.splice(0, k);
    sink += taken.map((q) => q.text).join('\n\n').length;
    delivered += taken.length;
  }
  const seconds = (performance.now() - started) / 1000;
  if (sink === 0) throw new Error('baseline did no work');
  return delivered / seconds;
}

export default async (): Promise<BenchFigure[]> => {
  const durable = await adapterRate(true);
  const unsynced = await adapterRate(false);
  const baseline = baselineRate();
  const baselineWhat = 'plain-object FIFO doing push, whole-prefix take and join, in the same run';
  return [
    figure({
      name: 'accept-deliver-throughput',
      what: `instructions accepted and delivered per second through one adapter: real hook endpoint on loopback, log fsynced per step (the default), ${PER_HOOK} per hook`,
      unit: 'instr/s', value: durable, baseline, baselineWhat,
    }),
    figure({
      name: 'accept-deliver-throughput-nofsync',
      what: `the same with the log written but not fsynced (shows what durability costs)`,
      unit: 'instr/s', value: unsynced, baseline, baselineWhat,
    }),
  ];
};
