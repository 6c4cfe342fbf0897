// The Codex app-server lane's connection to its server: one already answering on the socket is
// reused, else the lane starts one (server-process.ts); the JSON-RPC handshake, the loss of the
// connection or of the server, and the end, which stops only a server the lane started.
import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { connectRpc, type RpcClient, type ServerRequest } from './rpc.js';
import { appServerPid, spawnAppServer, stopAppServer } from './server-process.js';

export interface CodexLaneOptions {
  /** The `codex` binary. */
  bin: string;
  /** The private socket, in the adapter's state directory (dir 700, socket 600). */
  socketPath: string;
  /** The app-server's environment: the hooks it runs reach this adapter through it. */
  env?: NodeJS.ProcessEnv;
  /** How long `open` waits for a started server's socket. */
  startMs?: number;
  /**
   * Join a server someone else started (`aep-steer run codex`, with the person's environment):
   * `open` fails when none answers on the socket, and never starts or removes one.
   */
  attachOnly?: boolean;
}

/** What the connection tells the lane. */
export interface ConnectionEvents {
  onNotification: (method: string, params: Record<string, unknown>) => void;
  onRequest: (r: ServerRequest) => void;
  /** The handshake is done and `rpc` is this client. */
  connected: (c: RpcClient) => Promise<void>;
  /** The connection or the server this lane started is gone (`rpc` is undefined again). */
  lost: (why: string) => void;
}

export interface AppServerConnection {
  /** `unix://PATH`, where clients connect. */
  readonly address: string;
  /** The connection now, if any. */
  readonly rpc: RpcClient | undefined;
  /** The pid of the server this lane started, while it runs. */
  readonly ownPid: number | undefined;
  /** The server's pid, whoever started it. */
  serverPid(): number | undefined;
  /** The connection, made once (a server reused or started) and again after a failed try. */
  ready(): Promise<RpcClient>;
  /** Closes the connection; a server this lane started is stopped and its socket removed. */
  close(): Promise<void>;
}

export function appServerConnection(opts: CodexLaneOptions, events: ConnectionEvents): AppServerConnection {
  const address = `unix://${opts.socketPath}`;
  let rpc: RpcClient | undefined;
  let child: ChildProcess | undefined;
  let opening: Promise<RpcClient> | undefined;

  function lost(why: string): void {
    rpc = undefined;
    opening = undefined;
    events.lost(why);
  }

  async function connect(): Promise<RpcClient> {
    const c = await connectRpc(opts.socketPath, events.onNotification, events.onRequest);
    await c.call('initialize', { clientInfo: { name: 'aep-steer', version: '1' } });
    c.notify('initialized');
    rpc = c;
    void c.closed.then((why) => {
      if (rpc === c) lost(`the app-server connection closed: ${why}`);
    });
    await events.connected(c);
    return c;
  }

  async function start(): Promise<RpcClient> {
    // A server this adapter started before (or another run left) is reused when it answers.
    if (existsSync(opts.socketPath)) {
      try {
        return await connect();
      } catch (err) {
        if (opts.attachOnly === true) throw err;
        rmSync(opts.socketPath, { force: true });
      }
    }
    if (opts.attachOnly === true) throw new Error(`no Codex app-server listens on ${opts.socketPath}`);
    const s = spawnAppServer(opts);
    child = s.child;
    void s.exited.then((why) => {
      if (child === s.child) child = undefined;
      if (rpc !== undefined) lost(why);
    });
    await s.listening;
    return connect();
  }

  return {
    address,
    get rpc() {
      return rpc;
    },
    get ownPid() {
      return child?.pid;
    },
    serverPid: () => appServerPid(child, address),
    ready() {
      if (rpc !== undefined) return Promise.resolve(rpc);
      opening ??= start().catch((err: unknown) => {
        opening = undefined;
        throw err;
      });
      return opening;
    },
    async close() {
      rpc?.close();
      rpc = undefined;
      const c = child;
      child = undefined;
      // A server this adapter did not start (reused) is left running.
      if (c === undefined) return;
      await stopAppServer(c);
      rmSync(opts.socketPath, { force: true });
    },
  };
}
