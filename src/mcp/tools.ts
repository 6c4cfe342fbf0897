// The steering tools an orchestrating agent calls (issue: MCP server). Each tool reads the live
// board (the relay stream folded as the audit folds it, plus the roster) or sends through the one
// consumer core; nothing here talks to an adapter directly, and the server never sees more than
// its relay token allows (D19–D20). Each tool lives in tools/; this list fixes their order in
// tools/list.
import type { McpServer } from '@modelcontextprotocol/server';
import { toolKit, type RegisterTool, type ToolContext } from './tool-kit.js';
import { listSessions } from './tools/sessions.js';
import { instruct, sendInput } from './tools/steer.js';
import { withdraw } from './tools/withdraw.js';
import { queueTools } from './tools/queue.js';
import { cancel } from './tools/cancel.js';
import { pendingRequests, respond } from './tools/requests.js';
import { sessionEvents } from './tools/events.js';
import { readTool, waitTool } from './tools/turns.js';
import { spawnTool } from './tools/spawn.js';
import { stopTool } from './tools/stop.js';

const TOOLS: readonly RegisterTool[] = [
  listSessions,
  instruct,
  withdraw,
  queueTools,
  cancel,
  sendInput,
  pendingRequests,
  respond,
  sessionEvents,
  spawnTool,
  waitTool,
  readTool,
  stopTool,
];

export function registerSteeringTools(server: McpServer, ctx: ToolContext): void {
  const kit = toolKit(ctx);
  for (const register of TOOLS) register(server, kit);
}
