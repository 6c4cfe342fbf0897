// `aep-steer mcp`: a stdio MCP server for orchestrating agents. One consumer connection to the
// relay, with its own token, follows the whole stream into a live board (state, queue, pending
// requests) and carries the commands the tools send; it reconnects by itself. stdout belongs to
// the MCP protocol, so everything else goes to stderr.
import { McpServer } from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { Board } from '../consumer/board.js';
import { followRelay, type Follower } from '../consumer/follow.js';
import type { McpParent } from './mcp-parent.js';
import { registerSteeringTools } from './tools.js';

const MCP_SERVER_NAME = 'aep-steer';
export const DEFAULT_MCP_SENDER = 'aep-steer-mcp';
export const DEFAULT_WAIT_MS = 60_000;
export const MAX_WAIT_MS = 600_000;

export interface McpOptions {
  relay: string;
  token?: string;
  sender: string;
  waitMs?: number;
  maxWaitMs?: number;
  log?: (line: string) => void;
  /** D45: the orchestrator's own session, named as the parent of its spawns (mcp-parent.ts). */
  parent?: McpParent;
}

const INSTRUCTIONS =
  'Steer other coding-agent sessions through an AEP relay. Start with list_sessions to find a session id; instruct sends it an instruction ' +
  'and returns once it was delivered to that agent (or dropped, refused, or still queued at wait_ms). Use the same idempotency_key to retry ' +
  'safely. pending_requests and respond answer the permission and form requests agents are waiting on; session_events reads what a ' +
  'session did.';

function createSteeringServer(opts: McpOptions, board: Board, follower: Follower): McpServer {
  const server = new McpServer(
    { name: MCP_SERVER_NAME, version: '0.1.0' },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  );
  registerSteeringTools(server, {
    board,
    consumer: () => follower.consumer(),
    sender: opts.sender,
    relayUrl: opts.relay,
    waitMs: opts.waitMs ?? DEFAULT_WAIT_MS,
    maxWaitMs: opts.maxWaitMs ?? MAX_WAIT_MS,
    ...(opts.parent === undefined ? {} : { parent: opts.parent }),
  });
  return server;
}

/** Serves the tools on this process's stdio until stdin closes; resolves then, after closing the relay link. */
export async function serveMcpStdio(opts: McpOptions): Promise<void> {
  const log = opts.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const board = new Board(opts.relay);
  const follower = followRelay(board, {
    url: opts.relay,
    agent: opts.sender,
    ...(opts.token ? { token: opts.token } : {}),
    onChange: () => {},
  });
  follower.ready.then(
    () => log(`aep-steer mcp: following ${opts.relay} as ${opts.sender}`),
    (err: Error) => log(`aep-steer mcp: ${err.message}; retrying in the background`),
  );
  // The first tool call should see the relay's history: wait briefly for the first connect.
  await Promise.race([follower.ready.catch(() => {}), new Promise((r) => setTimeout(r, 3000).unref())]);
  const server = createSteeringServer(opts, board, follower);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
  });
  await server.connect(transport);
  await closed;
  await follower.close();
}
