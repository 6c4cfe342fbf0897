// `aep-steer run copilot [-p "…"] [--provider-file F]`: a GitHub Copilot CLI session hosted on its
// headless JSON-RPC server (`copilot --headless --stdio`), with the caller's environment and in the
// caller's directory. The session is created with the provider (provider.ts) and asks its client
// for every permission; the prompt (`-p`, or the caller's stdin) opens its first turn. Each session
// event is printed as a JSON line and passed to the adapter's server lane over the socket `open`
// named; the lane's calls come back the same way (wire.ts). The caller's stdin holds the session
// open for steering until it ends and no turn runs. A lost adapter leaves the session running
// unsteered (fail open): a permission asked meanwhile is answered "user not available".
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { joinLane, readAll } from '../../run-socket.js';
import { SteeringError } from '../../../protocol/errors.js';
import { copilotRpc, type CopilotRpc } from './rpc.js';
import { sessionProvider } from './provider.js';
import { LANE_METHODS, wireReader, writeWire, type CopilotEvent } from './wire.js';

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

/** Creates the session on a connected server; its id. */
async function createSession(rpc: CopilotRpc, env: NodeJS.ProcessEnv, cwd: string, file?: string): Promise<string> {
  const { provider, model } = sessionProvider(env, file);
  await rpc.call('connect', {});
  const r = (await rpc.call('session.create', {
    model,
    provider,
    clientName: 'aep-steer',
    workingDirectory: cwd,
    requestPermission: true,
    envValueMode: 'direct',
  })) as { sessionId?: unknown };
  if (typeof r.sessionId !== 'string') throw new Error('session.create answered no sessionId');
  return r.sessionId;
}

/** The server's exit code (0 once the run ended it), or 4 where it did not start. */
function exitOf(child: ChildProcess, bin: string, io: RunIo, ended: () => boolean): Promise<number> {
  return new Promise<number>((resolve) => {
    child.on('error', (err) => {
      io.err.write(`run: cannot start ${bin}: ${err.message} (set AEP_COPILOT_BIN)\n`);
      resolve(4);
    });
    child.on('exit', (code, signal) => resolve(ended() ? 0 : (code ?? (signal === null ? 1 : 128))));
  });
}

/** The lane's calls, made on the server for the run's own session, and only the lane's methods. */
function relayCalls(lane: Socket, rpc: CopilotRpc, session: () => string | undefined): (chunk: Buffer) => void {
  return wireReader((l) => {
    if (l.type !== 'call') return;
    const id = session();
    if (!LANE_METHODS.has(l.method) || id === undefined) {
      writeWire(lane, { type: 'answer', id: l.id, error: `${l.method} is not passed on by the run` });
      return;
    }
    rpc.call(l.method, { ...l.params, sessionId: id }).then(
      (result) => writeWire(lane, { type: 'answer', id: l.id, result }),
      (err: unknown) => writeWire(lane, { type: 'answer', id: l.id, error: String((err as Error).message ?? err) }),
    );
  });
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
  const lane = await joinLane(socketPath);
  if (typeof lane === 'string') {
    io.err.write(`run: cannot join the adapter's Copilot server lane at ${socketPath}: ${lane}\n`);
    return 4;
  }
  const child = spawn(bin, ['--headless', '--stdio', '--no-auto-update', '--no-auto-login', ...args.rest], {
    cwd,
    env: { ...env, COPILOT_AUTO_UPDATE: 'false' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let session: string | undefined;
  let laneUp = true;
  let idle = false;
  let callerDone = false;
  let ending = false;
  const endSession = (): void => {
    if (ending) return;
    ending = true;
    lane.end();
    child.stdin.end();
    child.kill('SIGTERM');
  };
  const rpc = copilotRpc(
    child.stdout,
    child.stdin,
    (method, params) => {
      if (method !== 'session.event' || params.sessionId !== session) return;
      const event = params.event as CopilotEvent;
      io.out.write(`${JSON.stringify(event)}\n`);
      if (laneUp) writeWire(lane, { type: 'event', event });
      if (event.type === 'user.message') idle = false;
      if (event.type === 'session.idle') {
        idle = true;
        if (callerDone) void maybeEnd();
      }
      if (event.type === 'permission.requested' && !laneUp) void unattended(event);
    },
    async (method) => {
      throw new Error(`${method} is not offered by this client`);
    },
  );
  /** The adapter is gone: nobody can answer, as Copilot's own words say. */
  const unattended = async (event: CopilotEvent): Promise<void> => {
    const requestId = event.data?.requestId;
    if (typeof requestId !== 'string' || event.data?.resolvedByHook === true) return;
    await rpc
      .call('session.permissions.handlePendingPermissionRequest', {
        sessionId: session,
        requestId,
        result: { kind: 'user-not-available' },
      })
      .catch(() => undefined);
  };
  /** The caller is done: the session ends once no turn runs and nothing waits in its queue. */
  const maybeEnd = async (): Promise<void> => {
    if (!idle || session === undefined || ending) return;
    const r = (await rpc.call('session.queue.hasPending', { sessionId: session }).catch(() => ({}))) as {
      hasPending?: unknown;
    };
    if (r.hasPending !== true && idle) endSession();
  };
  lane.on('error', () => undefined);
  lane.on('close', () => {
    if (!laneUp || ending) return;
    laneUp = false;
    io.err.write('run: the adapter is gone: the session goes on without steering\n');
  });
  lane.on(
    'data',
    relayCalls(lane, rpc, () => session),
  );
  const exited = exitOf(child, bin, io, () => ending);
  try {
    session = await createSession(rpc, env, cwd, args.providerFile);
    writeWire(lane, { type: 'session', sessionId: session });
    await rpc.call('session.send', { sessionId: session, prompt });
  } catch (e) {
    io.err.write(`run: the Copilot server did not open a session: ${(e as Error).message}\n`);
    endSession();
    await exited;
    return 4;
  }
  void inputOver.then(() => {
    callerDone = true;
    void maybeEnd();
  });
  const onSignal = (): void => endSession();
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  const code = await exited;
  process.off('SIGINT', onSignal);
  process.off('SIGTERM', onSignal);
  lane.destroy();
  (io.in as Partial<NodeJS.ReadStream>).destroy?.();
  if (!ending) io.err.write(`run: the Copilot server exited (${code}) before the session ended\n`);
  return code;
}
