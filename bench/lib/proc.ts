// Child processes for the bench: every server under test, every baseline server and every load
// generator runs in its own Node process, so a load generator never shares the event loop (or
// the CPU profile) of the thing it measures. A child reports with one JSON line on stdout.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const benchDir = dirname(dirname(fileURLToPath(import.meta.url)));
export const projectDir = dirname(benchDir);

export interface Child<R = Record<string, unknown>> {
  proc: ChildProcess;
  /** The first JSON line the child printed (its ports, once it listens). */
  ready: R;
  /** Later JSON lines, in order. */
  next(): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

/**
 * With `AEP_BENCH_BUILT_ROOTS` set (bench/run.ts sets it once it has built them), a child loads
 * those checkouts' `src/` modules from their `dist/`: the build the CLI runs (lib/built-hooks.mjs).
 */
export const builtImport = (env: NodeJS.ProcessEnv = process.env): string[] =>
  env.AEP_BENCH_BUILT_ROOTS ? ['--import', join(benchDir, 'lib', 'built.mjs')] : [];

/** `node --import tsx <bench-relative file> <json arg>`; TypeScript children need tsx. */
export function tsNode(
  file: string,
  arg: unknown,
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Promise<Child> {
  // `BENCH_PROFILE=DIR`: every server child (bench/servers/) writes a V8 CPU profile there on exit.
  const profile = process.env.BENCH_PROFILE && file.startsWith('servers/') ? process.env.BENCH_PROFILE : undefined;
  return start(
    process.execPath,
    [
      ...(profile ? ['--cpu-prof', '--cpu-prof-dir', profile] : []),
      '--import',
      'tsx',
      ...builtImport(),
      join(benchDir, file),
      JSON.stringify(arg ?? {}),
    ],
    env,
    undefined,
    timeoutMs,
  );
}

export class LoadTimeout extends Error {}

/** Starts a process and waits for its first JSON stdout line; a child that dies first fails the bench. */
/** Past `timeoutMs` without a first line the child is killed and the promise rejects with LoadTimeout. */
/** `cwd` is this checkout unless another is named (the bench's before-and-after figures). */
export function start(
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
  readyLine?: (line: string) => Record<string, unknown> | undefined,
  timeoutMs = 120_000,
  cwd = projectDir,
): Promise<Child> {
  const proc = spawn(cmd, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: ((v: Record<string, unknown>) => void)[] = [];
  let stderr = '';
  proc.stderr!.on('data', (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const parse =
    readyLine ??
    ((line: string) => {
      if (!line.startsWith('{')) return undefined;
      try {
        return JSON.parse(line) as Record<string, unknown>;
      } catch {
        return undefined;
      }
    });
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    const v = parse(line);
    if (v === undefined) return;
    const w = waiters.shift();
    if (w) w(v);
    else lines.push(v);
  });
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const next = () =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const have = lines.shift();
      if (have) return resolve(have);
      waiters.push(resolve);
      void exited.then((code) =>
        reject(new Error(`${args.join(' ').slice(0, 160)} exited ${code} before answering:\n${stderr}`)),
      );
    });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(t);
    }
  };
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new LoadTimeout(`${args.slice(-2).join(' ').slice(0, 120)} gave no answer within ${timeoutMs / 1000} s`),
        ),
      timeoutMs,
    );
  });
  return Promise.race([next(), timedOut]).then(
    (ready) => {
      clearTimeout(timer);
      return { proc, ready, next, stop };
    },
    async (err: unknown) => {
      clearTimeout(timer);
      await stop();
      throw err;
    },
  );
}

/** Runs a load generator child to completion and returns its result line; past `timeoutMs` it is killed and LoadTimeout thrown. */
export async function runLoad<R>(file: string, arg: unknown, timeoutMs = 300_000): Promise<R> {
  const child = await tsNode(file, arg, {}, timeoutMs);
  try {
    return child.ready as R;
  } finally {
    await child.stop();
  }
}

/** Starts servers, runs `body`, and stops them whatever happens. */
export async function withChildren<T>(
  starts: (() => Promise<Child>)[],
  body: (children: Child[]) => Promise<T>,
): Promise<T> {
  const children: Child[] = [];
  try {
    for (const s of starts) children.push(await s());
    return await body(children);
  } finally {
    await Promise.all(children.map((c) => c.stop()));
  }
}

/**
 * CPU milliseconds a child process has used so far, all its threads together and its main
 * (event-loop) thread alone, read from Linux's /proc; undefined elsewhere. Read from outside, so
 * a server that has no stats endpoint of its own (the reference relay) is measured the same way.
 */
export function childCpuMs(pid: number): { all: number; main: number } | undefined {
  const ticks = (path: string): number => {
    const stat = readFileSync(path, 'utf8');
    // Fields after the command name: utime and stime are the 12th and 13th, in clock ticks (100 Hz).
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10;
  };
  try {
    return { all: ticks(`/proc/${pid}/stat`), main: ticks(`/proc/${pid}/task/${pid}/stat`) };
  } catch {
    return undefined;
  }
}

/** Prints the one JSON line a child answers with. */
export const answer = (v: unknown): void => {
  process.stdout.write(`${JSON.stringify(v)}\n`);
};

/** The JSON argument a child was started with. */
export const argOf = <T>(): T => JSON.parse(process.argv[2] ?? '{}') as T;

/** Keeps a server child alive until its parent stops it. */
export const serveUntilStopped = (close: () => Promise<void> | void): void => {
  const bye = () => void Promise.resolve(close()).finally(() => process.exit(0));
  process.once('SIGTERM', bye);
  process.once('SIGINT', bye);
};
