// One Copilot session hosted on the CLI's headless JSON-RPC server (`copilot --headless --stdio`)
// and joined to the adapter's server lane over the lane's socket: what `aep-steer run copilot` and
// a spawned worker (D45) share. The session is created with the provider (provider.ts) in the given
// folder and asks its client for every permission; each session event goes to the lane (wire.ts)
// and the lane's calls come back the same way, only the lane's methods and only for this session.
// A lost adapter leaves the session running unsteered (fail open): a permission asked meanwhile is
// answered "user not available", as Copilot's own words say.
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { joinLane } from '../../run-socket.js';
import { copilotRpc, type CopilotRpc } from './rpc.js';
import { sessionProvider } from './provider.js';
import { LANE_METHODS, wireReader, writeWire, type CopilotEvent } from './wire.js';

export interface HostOptions {
  bin: string;
  /** The server's own further arguments. */
  args: readonly string[];
  /** The adapter's server lane socket. */
  socketPath: string;
  cwd: string;
  env: NodeJS.ProcessEnv;
  providerFile?: string;
  /** Where the host's own words go (one line each, without its newline). */
  say(line: string): void;
  /** Each event of the session, after the lane has it. */
  onEvent?(event: CopilotEvent): void;
}

export interface HostedSession {
  readonly session: string;
  readonly rpc: CopilotRpc;
  /** The server's exit code: 0 once `end` stopped it. */
  readonly exited: Promise<number>;
  /** Whether `end` was called. */
  ending(): boolean;
  /** Ends the session: leaves the lane and stops the server. */
  end(): void;
  /** Kills a server that does not stop. */
  kill(): void;
}

/** What did not start, with the exit code a run gives for it. */
export interface HostFailure {
  code: number;
  detail: string;
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

/** The server's exit code (0 once the host ended it), or 4 where it did not start. */
function exitOf(child: ChildProcess, o: HostOptions, ended: () => boolean): Promise<number> {
  return new Promise<number>((resolve) => {
    child.on('error', (err) => {
      o.say(`cannot start ${o.bin}: ${err.message} (set AEP_COPILOT_BIN)`);
      resolve(4);
    });
    child.on('exit', (code, signal) => resolve(ended() ? 0 : (code ?? (signal === null ? 1 : 128))));
  });
}

/** The lane's calls, made on the server for the host's own session, and only the lane's methods. */
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

/** Joins the lane, starts the server and creates the session; the session, or why not. */
export async function hostCopilotSession(o: HostOptions): Promise<HostedSession | HostFailure> {
  const lane = await joinLane(o.socketPath);
  if (typeof lane === 'string')
    return { code: 4, detail: `cannot join the adapter's Copilot server lane at ${o.socketPath}: ${lane}` };
  const child = spawn(o.bin, ['--headless', '--stdio', '--no-auto-update', '--no-auto-login', ...o.args], {
    cwd: o.cwd,
    env: { ...o.env, COPILOT_AUTO_UPDATE: 'false' },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let session: string | undefined;
  let laneUp = true;
  let ending = false;
  const end = (): void => {
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
      if (laneUp) writeWire(lane, { type: 'event', event });
      if (event.type === 'permission.requested' && !laneUp) void unattended(event);
      o.onEvent?.(event);
    },
    async (method) => {
      throw new Error(`${method} is not offered by this client`);
    },
  );
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
  lane.on('error', () => undefined);
  lane.on('close', () => {
    if (!laneUp || ending) return;
    laneUp = false;
    o.say('the adapter is gone: the session goes on without steering');
  });
  lane.on(
    'data',
    relayCalls(lane, rpc, () => session),
  );
  const exited = exitOf(child, o, () => ending);
  void exited.then(() => lane.destroy());
  try {
    session = await createSession(rpc, o.env, o.cwd, o.providerFile);
  } catch (e) {
    end();
    await exited;
    return { code: 4, detail: `the Copilot server did not open a session: ${(e as Error).message}` };
  }
  writeWire(lane, { type: 'session', sessionId: session });
  const kill = (): void => void child.kill('SIGKILL');
  return { session, rpc, exited, end, kill, ending: () => ending };
}
