// Restart cost (D24) and claim traffic (D23, D24).
// - Start to answering hooks: an adapter log of 10k, 100k and 1M records (hooks of 200
//   sessions with an instruction now and then, written through the real pipeline with its
//   default 16 MiB segments, so the longer histories were snapshotted and rotated as they grew),
//   then a fresh adapter is started on it and timed until its first hook reply. Baseline in the
//   same run: a JSON.parse-only pass over every line of that same history. Flat start times
//   with a growing baseline are the point: the start reads a snapshot and one segment.
// - Claim frames per new session: frames a relay receives from an adapter while 200 new
//   sessions start, against the events the adapter logged for them (1 per session here).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { command } from '../src/protocol/index.js';
import { startRelay } from '../src/relay/server.js';
import { connectRelay } from '../src/relay/ws-connection.js';
import type { HookArrival } from '../src/streams/hook-endpoint.js';
import { readEventLog } from '../src/streams/log.js';
import { startAdapter } from '../src/streams/run.js';
import { figure, QUICK, type BenchFigure } from './types.js';
import { benchSurface } from './lib/surface.js';

const SESSIONS = 200;
const SECRET = 'bench-secret-0123456789';

const surface = benchSurface({
  holds: false,
  observations: (input) =>
    input.hook_event_name === 'SessionStart'
      ? [{ type: 'session.started', data: {} }]
      : [{ type: 'progress.status', data: { phase: 'tool' } }],
});

const arrival = (body: Record<string, unknown>, n: number): HookArrival => ({
  id: `bench-hook-${n}`,
  at: Date.now(),
  body,
  respond: () => Promise.resolve(true),
  neutral: () => Promise.resolve(true),
  failOpen: () => Promise.resolve(true),
  hold: () => undefined,
  closed: Promise.resolve(),
});
const turn = () => new Promise((r) => setImmediate(r));

/** Writes a history of about `records` records through the real pipeline (no fsync: the bytes are the same). */
async function writeHistory(logPath: string, records: number): Promise<number> {
  const arrivals$ = new Subject<HookArrival>();
  const a = await startAdapter({
    surface,
    port: 0,
    secret: SECRET,
    logPath,
    instruct: true,
    host: 'bench',
    fsync: false,
    keepSegments: Infinity,
    arrivals$,
    onError: () => undefined,
  });
  let n = 0;
  for (let s = 0; s < SESSIONS; s += 1)
    arrivals$.next(arrival({ session_id: `s-${s}`, hook_event_name: 'SessionStart' }, n++));
  // About two records per hook (its observation and its input); an instruction every 50 hooks.
  for (let i = 0; n * 2 < records; i += 1) {
    const session = `s-${i % SESSIONS}`;
    if (i % 50 === 0)
      a.command(
        command({ agent: 'bench-sender', host: 'bench' }, session, {
          type: surface.steeringType,
          capture: 'redacted',
          data: { text: `instruction ${i}` },
        }),
      );
    arrivals$.next(
      arrival({ session_id: session, hook_event_name: i % 50 === 10 ? 'UserPromptSubmit' : 'PostToolUse' }, n++),
    );
    if (n % 5000 === 0) await turn();
  }
  await turn();
  await a.close();
  return n;
}

function historyFiles(logPath: string): string[] {
  const dir = join(logPath, '..');
  const segs = readdirSync(dir)
    .filter((f) => f.includes('.jsonl.seg-'))
    .sort()
    .map((f) => join(dir, f));
  return [...segs, logPath];
}

function parseOnlyMs(files: string[]): { ms: number; lines: number } {
  const t0 = performance.now();
  let lines = 0;
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      JSON.parse(line);
      lines += 1;
    }
  }
  return { ms: performance.now() - t0, lines };
}

async function startToAnswerMs(logPath: string): Promise<number> {
  const t0 = performance.now();
  const a = await startAdapter({
    surface,
    port: 0,
    secret: SECRET,
    logPath,
    instruct: true,
    host: 'bench',
    onError: () => undefined,
  });
  const res = await fetch(a.hookUrl, {
    method: 'POST',
    body: JSON.stringify({ session_id: 's-1', hook_event_name: 'PostToolUse' }),
  });
  await res.text();
  const ms = performance.now() - t0;
  await a.close();
  return ms;
}

async function claimFrames(): Promise<{ frames: number; events: number }> {
  const relay = await startRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const link = connectRelay({ url: relay.socketUrl, token: 'tok', agent: surface.token });
  const dir = mkdtempSync(join(tmpdir(), 'aep-bench-claims-'));
  const logPath = join(dir, 'events.jsonl');
  const a = await startAdapter({
    surface,
    port: 0,
    secret: SECRET,
    logPath,
    instruct: true,
    host: 'bench',
    fsync: false,
    relay: link,
    onError: () => undefined,
  });
  await link.ready();
  for (let s = 0; s < SESSIONS; s += 1)
    await fetch(a.hookUrl, {
      method: 'POST',
      body: JSON.stringify({ session_id: `claim-${s}`, hook_event_name: 'SessionStart' }),
    });
  for (let i = 0; i < 200 && relay.stats().ingested < SESSIONS; i += 1) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  const st = relay.stats();
  const events = readEventLog(logPath).records.filter((r) => r.k === 'ev' && r.e.seq !== undefined).length;
  await a.close();
  await relay.close();
  rmSync(dir, { recursive: true, force: true });
  return { frames: st.ingested + st.duplicates, events };
}

export default async function run(): Promise<BenchFigure[]> {
  const figures: BenchFigure[] = [];
  const sizes = [
    ['10k', 10_000],
    ['100k', 100_000],
    ['1M', 1_000_000],
  ] as const;
  // A quick run skips the 1M-record history (most of this module's time).
  for (const [label, records] of QUICK ? sizes.slice(0, 2) : sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'aep-bench-restart-'));
    const logPath = join(dir, 'events.jsonl');
    try {
      await writeHistory(logPath, records);
      const files = historyFiles(logPath);
      const base = parseOnlyMs(files);
      // Best of three starts, so one scheduling hiccup on a shared machine does not decide it.
      const starts: number[] = [];
      for (let i = 0; i < 3; i += 1) starts.push(await startToAnswerMs(logPath));
      figures.push(
        figure({
          name: `restart-${label}`,
          what: `start to first hook answered, log of ${base.lines} records in ${files.length} segment(s), snapshot + last segment read`,
          unit: 'ms',
          value: Math.min(...starts),
          baseline: base.ms,
          baselineWhat: `JSON.parse of every line of the same ${base.lines}-record history`,
        }),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const c = await claimFrames();
  figures.push(
    figure({
      name: 'claim-frames-per-new-session',
      what: `frames the relay received from the adapter while ${SESSIONS} new sessions started`,
      unit: 'frames/session',
      value: c.frames / SESSIONS,
      baseline: c.events / SESSIONS,
      goal: '<= 1',
      baselineWhat: 'events the adapter logged for those sessions (each must go once)',
    }),
  );
  return figures;
}
