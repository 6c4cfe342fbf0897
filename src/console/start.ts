// Starts the console: the page server on 127.0.0.1 under a secret path made anew at each start
// (like a notebook server's token URL), a live board fed by one relay connection, and the page's
// actions sent on that same connection.
import { newSecret } from '../protocol/secret.js';
import { Board } from '../consumer/board.js';
import { followRelay, type Follower } from '../consumer/follow.js';
import { startInspectServer, type InspectServer } from '../inspect/server.js';
import { consoleActions } from './actions.js';
import { CONSOLE_HTML } from './page.js';

export const DEFAULT_CONSOLE_PORT = 8791;
export const DEFAULT_CONSOLE_SENDER = 'aep-steer-console';

export interface ConsoleOptions {
  relay: string;
  token?: string;
  sender?: string;
  port: number;
  host?: string;
}

export interface ConsoleHandle {
  /** The page's URL, secret included: whoever has it may steer through this console. */
  url: string;
  server: InspectServer;
  follower: Follower;
  close(): Promise<void>;
}

export async function startConsole(opts: ConsoleOptions): Promise<ConsoleHandle> {
  const secret = newSecret(24);
  const sender = opts.sender ?? DEFAULT_CONSOLE_SENDER;
  const board = new Board(opts.relay);
  let follower: Follower | undefined;
  const server = await startInspectServer(board, {
    port: opts.port,
    ...(opts.host ? { host: opts.host } : {}),
    basePath: `/${secret}/`,
    page: CONSOLE_HTML,
    actions: consoleActions({ consumer: () => follower?.consumer(), sender, relayUrl: opts.relay }),
  });
  follower = followRelay(board, { url: opts.relay, agent: sender, ...(opts.token ? { token: opts.token } : {}), onChange: () => server.changed() });
  const f = follower;
  return {
    url: server.url,
    server,
    follower: f,
    async close() {
      await f.close();
      await server.close();
    },
  };
}
