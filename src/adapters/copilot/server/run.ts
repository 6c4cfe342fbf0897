// `aep-steer run copilot [-p "…"] [--provider-file F]`: a GitHub Copilot CLI session hosted on its
// headless JSON-RPC server (`copilot --headless --stdio`), with the caller's environment and in the
// caller's directory. The session is created with the provider (provider.ts) and asks its client
// for every permission; the prompt (`-p`, or the caller's stdin) opens its first turn. Each session
// event is printed as a JSON line and passed to the adapter's server lane over the socket `open`
// named; the lane's calls come back the same way (wire.ts). The caller's stdin holds the session
// open for steering until it ends and no turn runs. A lost adapter leaves the session running
// unsteered (fail open): a permission asked meanwhile is answered "user not available".
import { readAll } from '../../run-socket.js';
import { SteeringError } from '../../../protocol/errors.js';
import { hostCopilotSession } from './host.js';
import { sessionProvider } from './provider.js';
import { hostedStreamNotice } from './stream-notice.js';

export interface RunIo {
  in: NodeJS.ReadableStream;
  out: NodeJS.WritableStream;
  err: NodeJS.WritableStream;
}

/** `-p PROMPT` and `--provider-file PATH` out of the caller's arguments; the rest go to the server. */
export function runArgs(args: readonly string[]): { prompt?: string; providerFile?: string; rest: string[] } {
  const rest: string[] = [];
  let prompt: string | undefined;
  let providerFile: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if ((a === '-p' || a === '--prompt') && args[i + 1] !== undefined) prompt = args[++i];
    else if (a === '--provider-file' && args[i + 1] !== undefined) providerFile = args[++i];
    else rest.push(a);
  }
  return { ...(prompt === undefined ? {} : { prompt }), ...(providerFile === undefined ? {} : { providerFile }), rest };
}

export async function runCopilot(
  bin: string,
  given: readonly string[],
  socketPath: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  io: RunIo,
): Promise<number> {
  const args = runArgs(given);
  try {
    sessionProvider(env, args.providerFile);
  } catch (e) {
    io.err.write(`run: ${e instanceof SteeringError ? e.message : String(e)}\n`);
    return 2;
  }
  const inputOver = args.prompt === undefined ? Promise.resolve() : readAll(io.in).then(() => undefined);
  const prompt = args.prompt ?? (await readAll(io.in)).trim();
  if (prompt === '') {
    io.err.write('run: no prompt: give `-p "…"` or write it on stdin\n');
    return 2;
  }
  // Said before anything starts, so it is the first thing the person reads; the run goes on (fail open).
  const notice = hostedStreamNotice(cwd, env);
  if (notice !== undefined) io.err.write(`run: warning: ${notice}\n`);
  let idle = false;
  let callerDone = false;
  const hosted = await hostCopilotSession({
    bin,
    args: args.rest,
    socketPath,
    cwd,
    env,
    ...(args.providerFile === undefined ? {} : { providerFile: args.providerFile }),
    say: (line) => io.err.write(`run: ${line}\n`),
    onEvent: (event) => {
      io.out.write(`${JSON.stringify(event)}\n`);
      if (event.type === 'user.message') idle = false;
      if (event.type === 'session.idle') {
        idle = true;
        if (callerDone) void maybeEnd();
      }
    },
  });
  if (!('session' in hosted)) {
    io.err.write(`run: ${hosted.detail}\n`);
    return hosted.code;
  }
  const { session, rpc } = hosted;
  /** The caller is done: the session ends once no turn runs and nothing waits in its queue. */
  const maybeEnd = async (): Promise<void> => {
    if (!idle || hosted.ending()) return;
    const r = (await rpc.call('session.queue.hasPending', { sessionId: session }).catch(() => ({}))) as {
      hasPending?: unknown;
    };
    if (r.hasPending !== true && idle) hosted.end();
  };
  try {
    await rpc.call('session.send', { sessionId: session, prompt });
  } catch (e) {
    io.err.write(`run: the Copilot server did not open a session: ${(e as Error).message}\n`);
    hosted.end();
    await hosted.exited;
    return 4;
  }
  void inputOver.then(() => {
    callerDone = true;
    void maybeEnd();
  });
  const onSignal = (): void => hosted.end();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await hosted.exited;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  (io.in as Partial<NodeJS.ReadStream>).destroy?.();
  if (!hosted.ending()) io.err.write(`run: the Copilot server exited (${code}) before the session ended\n`);
  return code;
}
