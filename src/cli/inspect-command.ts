// `aep-steer inspect`: a local web page showing each session's state and queue, live, folded from
// the relay stream the way the audit folds a log.
import type { Command } from 'commander';
import { SteeringError } from '../protocol/errors.js';
import { Board } from '../consumer/board.js';
import { followRelay, type Follower } from '../consumer/follow.js';
import { DEFAULT_INSPECT_PORT, startInspectServer, type InspectServer } from '../inspect/server.js';
import { DEFAULT_RELAY } from '../consumer/connect.js';
import { tokenFor } from '../relay/local-token.js';
import { exitOnSignal } from './exit-on-signal.js';

export interface InspectHandle {
  url: string;
  server: InspectServer;
  follower: Follower;
  close(): Promise<void>;
}

/** Starts the page server and follows the relay; resolves once the page is being served. */
export async function startInspect(opts: {
  relay: string;
  token?: string;
  port: number;
  host?: string;
}): Promise<InspectHandle> {
  const board = new Board(opts.relay);
  const server = await startInspectServer(board, { port: opts.port, ...(opts.host ? { host: opts.host } : {}) });
  const follower = followRelay(board, {
    url: opts.relay,
    ...(opts.token ? { token: opts.token } : {}),
    onChange: () => server.changed(),
  });
  return {
    url: server.url,
    server,
    follower,
    async close() {
      await follower.close();
      await server.close();
    },
  };
}

export function registerInspect(program: Command): void {
  const env = process.env;
  program
    .command('inspect')
    .description("serve a live page (127.0.0.1) with each session's machine state and instruction queue")
    .option('--port <n>', 'page port on 127.0.0.1', String(DEFAULT_INSPECT_PORT))
    .option('--relay <url>', 'relay WebSocket URL (AEP_RELAY)', env['AEP_RELAY'] ?? DEFAULT_RELAY)
    .option('--token <token>', 'bearer token for the relay (AEP_TOKEN)', env['AEP_TOKEN'])
    .action(async (f: { port: string; relay: string; token?: string }) => {
      const port = Number(f.port);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        process.stderr.write(`inspect: --port must be 0-65535, got "${f.port}"\n`);
        process.exitCode = 2;
        return;
      }
      let handle: InspectHandle;
      try {
        const token = tokenFor(f.relay, f.token);
        handle = await startInspect({ relay: f.relay, port, ...(token ? { token } : {}) });
      } catch (err) {
        process.stderr.write(`inspect: ${err instanceof SteeringError ? err.message : String(err)}\n`);
        process.exitCode = err instanceof SteeringError && err.code === 'PORT_IN_USE' ? 4 : 1;
        return;
      }
      process.stderr.write(`aep-steer inspect: ${handle.url} (relay ${f.relay})\n`);
      handle.follower.ready.catch((err: Error) => process.stderr.write(`inspect: ${err.message}; retrying\n`));
      exitOnSignal(() => handle.close());
    });
}
