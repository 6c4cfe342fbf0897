// accept→deliver throughput through one adapter process: the real hook endpoint on loopback,
// real session actors, a real (fsynced) event log. Each session repeatedly gets instructions
// injected as the relay would, posts one eligible hook, and waits for every delivered event
// (written reply, D9). With many sessions at once, steps of different sessions share log
// commits (D11 group commit); one session alone shows the per-step cost. The fsync figures count
// the log's syncs against its logged steps (each step synced alone before group commit).
// Baseline in the same run: a plain-object FIFO doing the same queue work (push, whole prefix
// within 10,000 chars, join) with no actor, log, HTTP or events.
import { fsync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, filter, take, toArray } from 'rxjs';
import { command } from '../src/protocol/index.js';
import { startAdapter } from '../src/streams/run.js';
import type { VendorSurface } from '../src/streams/surface.js';
import { figure, type BenchFigure } from './types.js';

const PER_HOOK = 4;
const CONCURRENT = 32;
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

interface Run {
  rate: number;
  /** fsyncs per delivered instruction. */
  syncs: number;
  /** Logged steps per delivered instruction (one fsync each without group commit). */
  steps: number;
}

/** `sessions` sessions at once, each doing `rounds` inject-and-deliver rounds. */
async function adapterRate(durable: boolean, sessions: number, rounds: number): Promise<Run> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-'));
  const logPath = join(dir, 'log.jsonl');
  let syncs = 0;
  const a = await startAdapter({
    surface, port: 0, secret: 'bench', logPath, instruct: true, host: 'bench', fsync: durable, onError: () => undefined,
    logSync: (fd, done) => {
      syncs += 1;
      fsync(fd, done);
    },
  });
  const post = (session: string, event: string) =>
    fetch(a.hookUrl, { method: 'POST', body: JSON.stringify({ session_id: session, hook_event_name: event }) }).then((r) => r.text());
  const names = Array.from({ length: sessions }, (_, i) => `bench-session-${i}`);
  await Promise.all(names.map((s) => post(s, 'SessionStart')));
  const sender = { agent: 'bench-sender', host: 'bench' };
  const deliveredType = 'x.bench-agent.instruction.delivered';
  async function drive(session: string): Promise<number> {
    let n = 0;
    for (let r = 0; r < rounds; r += 1) {
      const delivered = firstValueFrom(a.events$.pipe(filter((e) => e.type === deliveredType && e.session === session), take(PER_HOOK), toArray()));
      for (let i = 0; i < PER_HOOK; i += 1) {
        a.command(command(sender, session, { type: surface.steeringType, data: { text: TEXT }, capture: 'redacted' }));
      }
      await post(session, 'UserPromptSubmit');
      n += (await delivered).length;
    }
    return n;
  }
  const started = performance.now();
  const counts = await Promise.all(names.map(drive));
  const seconds = (performance.now() - started) / 1000;
  await a.close();
  const steps = readFileSync(logPath, 'utf8').split('\n').filter((l) => l.startsWith('{"k":"in"')).length;
  rmSync(dir, { recursive: true, force: true });
  const n = counts.reduce((x, y) => x + y, 0);
  if (n !== sessions * rounds * PER_HOOK) throw new Error(`expected ${sessions * rounds * PER_HOOK} deliveries, saw ${n}`);
  return { rate: n / seconds, syncs: syncs / n, steps: steps / n };
}

function baselineRate(): number {
  const queue: { id: number; text: string; at: number }[] = [];
  let delivered = 0;
  let sink = 0;
  const total = 400 * PER_HOOK * 50;
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
  const concurrent = await adapterRate(true, CONCURRENT, 40);
  const single = await adapterRate(true, 1, 200);
  const unsynced = await adapterRate(false, CONCURRENT, 40);
  const baseline = baselineRate();
  const baselineWhat = 'plain-object FIFO doing push, whole-prefix take and join, in the same run';
  return [
    figure({
      name: 'accept-deliver-throughput',
      what: `instructions accepted and delivered per second through one adapter: ${CONCURRENT} sessions at once over the real hook endpoint on loopback, log fsynced (the default), ${PER_HOOK} per hook`,
      unit: 'instr/s', value: concurrent.rate, baseline, baselineWhat,
    }),
    figure({
      name: 'accept-deliver-throughput-1-session',
      what: `the same with one session alone (each step waits for its own commit)`,
      unit: 'instr/s', value: single.rate, baseline, baselineWhat,
    }),
    figure({
      name: 'accept-deliver-throughput-nofsync',
      what: `${CONCURRENT} sessions with the log written but not fsynced (shows what durability costs)`,
      unit: 'instr/s', value: unsynced.rate, baseline, baselineWhat,
    }),
    figure({
      name: 'accept-deliver-fsyncs-per-instruction',
      what: `log fsyncs per delivered instruction with ${CONCURRENT} sessions at once (group commit: concurrent steps share one)`,
      unit: 'fsync/instr', value: concurrent.syncs, baseline: concurrent.steps,
      baselineWhat: 'logged steps per delivered instruction in the same run (one fsync each when every step syncs alone)',
    }),
    figure({
      name: 'accept-deliver-fsyncs-per-instruction-1-session',
      what: 'the same with one session alone',
      unit: 'fsync/instr', value: single.syncs, baseline: single.steps,
      baselineWhat: 'logged steps per delivered instruction, same run',
    }),
  ];
};
