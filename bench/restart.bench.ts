// Restart cost (D24) and claim traffic (D23, D24).
// - Start to answering hooks: an adapter log of 10k, 100k and 1M records (hooks of 200
//   sessions with an instruction now and then, written through the real pipeline with its
//   default 16 MiB segments, so the longer histories were snapshotted and rotated as they grew),
//   then a fresh adapter is started on it and timed until its first hook reply. Baseline in the
//   same run: a JSON.parse-only pass over every line of that same history. Flat start times
//   with a growing baseline are the point: the start reads a snapshot and one segment.
//   With AEP_BENCH_BEFORE_DIR, the 10k start is also paired with that checkout's build in this
//   same process: each build starts on a history it wrote itself, the starts interleaved
//   (`restart-10k-vs-before`).
// - Claim frames per new session: frames a relay receives from an adapter while 200 new
//   sessions start, against the events the adapter logged for them (1 per session here).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Subject } from 'rxjs';
import { command } from '../src/protocol/index.js';
import { startRelay } from '../src/relay/server.js';
import { connectRelay } from '../src/relay/ws-connection.js';
import type { HookArrival } from '../src/streams/hook-endpoint.js';
import { readEventLog } from '../src/streams/log.js';
import { startAdapter } from '../src/streams/run.js';
import { figure, QUICK, type BenchFigure } from './types.js';
import { benchSurface } from './lib/surface.js';
import { beforeCommit, beforeDir } from './lib/before.js';
import { median } from './lib/stats.js';

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

/** What a history and a start need from one build of the adapter. */
interface Build {
  startAdapter: typeof startAdapter;
  command: typeof command;
  subject: () => Subject<HookArrival>;
}

const thisBuild: Build = { startAdapter, command, subject: () => new Subject<HookArrival>() };

/**
 * The build of the checkout AEP_BENCH_BEFORE_DIR names (bench/run.ts made its dist/), with its
 * own rxjs, so each side's streams are its own.
 */
async function beforeBuild(dir: string): Promise<Build> {
  const load = async <T>(rel: string): Promise<T> => {
    const file = join(dir, 'dist', rel);
    try {
      return (await import(pathToFileURL(file).href)) as T;
    } catch (err) {
      throw new Error(
        `AEP_BENCH_BEFORE_DIR (${dir}): cannot load ${file} (${String(err)}); build it there (npm run build)`,
      );
    }
  };
  const run = await load<{ startAdapter: typeof startAdapter }>('streams/run.js');
  const protocol = await load<{ command: typeof command }>('protocol/index.js');
  const rx = createRequire(join(dir, 'package.json'))('rxjs') as { Subject: typeof Subject };
  return { startAdapter: run.startAdapter, command: protocol.command, subject: () => new rx.Subject<HookArrival>() };
}

/** Writes a history of about `records` records through the real pipeline (no fsync: the bytes are the same). */
async function writeHistory(logPath: string, records: number, build: Build = thisBuild): Promise<number> {
  const arrivals$ = build.subject();
  const a = await build.startAdapter({
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
        build.command({ agent: 'bench-sender', host: 'bench' }, session, {
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

async function startToAnswerMs(logPath: string, build: Build = thisBuild): Promise<number> {
  const t0 = performance.now();
  const a = await build.startAdapter({
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

/**
 * The 10k start of this build and of the checkout before, interleaved in this process (the order
 * swapped each round), so both see the same machine: each on a history its own build wrote.
 */
async function versusBefore(dir: string): Promise<BenchFigure> {
  const before = await beforeBuild(dir);
  const rounds = QUICK ? 5 : 21;
  const sides = [thisBuild, before].map((build) => {
    const tmp = mkdtempSync(join(tmpdir(), 'aep-bench-restart-pair-'));
    return { build, tmp, logPath: join(tmp, 'events.jsonl'), ms: [] as number[] };
  });
  try {
    for (const s of sides) await writeHistory(s.logPath, 10_000, s.build);
    for (let i = 0; i < rounds + 2; i += 1)
      for (const s of i % 2 === 0 ? sides : [...sides].reverse()) {
        const ms = await startToAnswerMs(s.logPath, s.build);
        if (i >= 2) s.ms.push(ms); // two rounds of warm-up: both builds' modules loaded and compiled
      }
    const [mine, theirs] = sides as [(typeof sides)[0], (typeof sides)[0]];
    return figure({
      name: 'restart-10k-vs-before',
      what: 'start to first hook answered on a 10k-record history, this build against the checkout before, interleaved in one process',
      unit: 'ms',
      value: median(mine.ms),
      baseline: median(theirs.ms),
      baselineWhat: `the same start by the build of the checkout AEP_BENCH_BEFORE_DIR names (${beforeCommit()}), on a history it wrote`,
      ratios: mine.ms.map((v, i) => v / theirs.ms[i]!),
    });
  } finally {
    for (const s of sides) rmSync(s.tmp, { recursive: true, force: true });
  }
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
  const dir = beforeDir();
  if (dir !== undefined) figures.push(await versusBefore(dir));
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
