// `aep-steer run claude -p [claude args…]`: a headless Claude Code session for an orchestrator.
// The CLI runs with stream-json on its stdio; the prompt (`-p "…"`, or the caller's stdin) is its
// first user message; everything it prints goes to the caller's stdout and to the adapter's
// stream-json lane (over the socket `open` named), whose lines go to the CLI's stdin. Its input
// ends once the caller's input is over and no turn runs or waits: the CLI then exits, and so does
// this run, with its code. A lost adapter leaves the session running unsteered (fail open).
import { randomUUID } from 'node:crypto';
import { spawn } from 'node:child_process';
import { joinLane, readAll } from '../../run-socket.js';
import { lineReader, userLine, type Line } from './stream.js';

/** The flags the lane needs, added where the caller did not give them. */
const STREAM_FLAGS: readonly (readonly string[])[] = [
  ['--input-format', 'stream-json'],
  ['--output-format', 'stream-json'],
  ['--verbose'],
  ['--replay-user-messages'],
];

/**
 * The CLI's arguments and the prompt: the value after `-p`/`--print` when one follows (else the
 * prompt comes from stdin), and the stream-json flags. A different input or output format is refused.
 */
export function headlessArgs(args: readonly string[]): { args: string[]; prompt?: string } | { error: string } {
  const out: string[] = [];
  let prompt: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '-p' || a === '--print') {
      const next = args[i + 1];
      if (next !== undefined && !next.startsWith('-')) {
        prompt = next;
        i++;
      }
      continue;
    }
    for (const [flag] of STREAM_FLAGS.filter((f) => f.length === 2)) {
      const value = a === flag ? args[i + 1] : a.startsWith(`${flag}=`) ? a.slice(flag!.length + 1) : undefined;
      if (value !== undefined && value !== 'stream-json')
        return { error: `${flag} ${value}: the headless session speaks stream-json; leave ${flag} out` };
    }
    out.push(a);
  }
  const given = new Set(out.flatMap((a) => a.split('=')[0]!));
  const flags = STREAM_FLAGS.filter(([flag]) => !given.has(flag!)).flat();
  return { args: ['-p', ...flags, ...out], ...(prompt === undefined ? {} : { prompt }) };
}

export interface HeadlessIo {
  in: NodeJS.ReadableStream;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

export async function runHeadless(
  bin: string,
  given: readonly string[],
  socketPath: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  io: HeadlessIo,
): Promise<number> {
  const parsed = headlessArgs(given);
  if ('error' in parsed) {
    io.err.write(`run: ${parsed.error}\n`);
    return 2;
  }
  // With `-p "…"` the caller's stdin holds the session open for steering until it ends.
  const inputOver = parsed.prompt === undefined ? Promise.resolve() : readAll(io.in).then(() => undefined);
  const prompt = parsed.prompt ?? (await readAll(io.in)).trim();
  if (prompt === '') {
    io.err.write('run: no prompt: give `-p "…"` or write it on stdin\n');
    return 2;
  }
  const lane = await joinLane(socketPath);
  if (typeof lane === 'string') {
    io.err.write(`run: cannot join the adapter's stream-json lane at ${socketPath}: ${lane}\n`);
    return 4;
  }
  const child = spawn(bin, parsed.args, { cwd, env, stdio: ['pipe', 'pipe', 'inherit'] });
  let ended = false;
  let callerDone = false;
  let turnOpen = true;
  const waiting = new Set<string>();
  const toCli = (l: Line): void => {
    if (!ended && child.stdin.writable) child.stdin.write(`${JSON.stringify(l)}\n`);
  };
  const maybeEnd = (): void => {
    if (ended || !callerDone || turnOpen || waiting.size > 0) return;
    ended = true;
    child.stdin.end();
    lane.end();
  };
  let laneSaid = false;
  lane.on('error', () => undefined);
  lane.on('close', () => {
    if (ended || laneSaid) return;
    laneSaid = true;
    io.err.write('run: the adapter is gone: the session goes on without steering\n');
  });
  lane.on('data', lineReader(toCli));
  child.stdin.on('error', () => undefined);
  child.stdout.on('data', (d: Buffer) => {
    io.out.write(d);
    if (!lane.destroyed) lane.write(d);
  });
  // What decides when the input may end: a turn running, or a message the CLI holds for later.
  child.stdout.on(
    'data',
    lineReader((l) => {
      if (l.type === 'system' && l.subtype === 'init') turnOpen = true;
      if (l.type === 'result') turnOpen = false;
      if (l.type === 'command_lifecycle' && typeof l.command_uuid === 'string') {
        if (l.state === 'queued' || l.state === 'started') waiting.add(l.command_uuid);
        else waiting.delete(l.command_uuid);
      }
      maybeEnd();
    }),
  );
  toCli(userLine(randomUUID(), prompt));
  void inputOver.then(() => {
    callerDone = true;
    maybeEnd();
  });
  const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
  const onInt = forward('SIGINT');
  const onTerm = forward('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return new Promise((resolve) => {
    child.on('error', (err) => {
      io.err.write(`run: cannot start ${bin}: ${err.message} (set AEP_CLAUDE_BIN)\n`);
      lane.destroy();
      resolve(4);
    });
    child.on('exit', (code, signal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      ended = true;
      lane.destroy();
      // The caller's stdin, still read while it held the session open, no longer keeps this process up.
      (io.in as Partial<NodeJS.ReadStream>).destroy?.();
      resolve(code ?? (signal === null ? 1 : 128));
    });
  });
}
