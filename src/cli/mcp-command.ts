// `aep-steer mcp`: the steering tools for an orchestrating agent, as a stdio MCP server. The
// agent's MCP config starts it (`aep-steer install mcp <vendor>` writes that entry).
import type { Command } from 'commander';
import { readTokenFile } from '../consumer/connect.js';
import { DEFAULT_MCP_SENDER, DEFAULT_WAIT_MS, MAX_WAIT_MS, serveMcpStdio } from '../mcp/server.js';
import { mcpParent } from '../mcp/mcp-parent.js';
import { addRelayOptions, parseMs, type RelayFlags } from './relay-options.js';

interface McpFlags extends RelayFlags {
  tokenFile?: string;
  waitMs: string;
  parentSession?: string;
}

export function registerMcp(program: Command, env: NodeJS.ProcessEnv = process.env): void {
  const cmd = program
    .command('mcp')
    .description(
      'serve the steering tools (list_sessions, instruct, send_input, pending_requests, respond, session_events) over stdio MCP',
    )
    .option(
      '--token-file <path>',
      'read the relay token from this file, mode 600 (AEP_TOKEN_FILE)',
      env['AEP_TOKEN_FILE'] || undefined,
    )
    .option(
      '--wait-ms <ms>',
      `default wait of instruct and send_input for the delivery (at most ${MAX_WAIT_MS})`,
      String(DEFAULT_WAIT_MS),
    )
    .option(
      '--parent-session <id>',
      "the orchestrator's own session, named as the parent of its spawns (AEP_PARENT_SESSION; else Claude Code's CLAUDE_CODE_SESSION_ID while the relay lists it)",
      env['AEP_PARENT_SESSION'] || undefined,
    );
  // Its own sender name by default, so the audit tells these commands from a person's CLI.
  addRelayOptions(cmd, env, DEFAULT_MCP_SENDER);
  cmd.action(async (f: McpFlags) => {
    const waitMs = parseMs('--wait-ms', f.waitMs);
    const token = f.tokenFile !== undefined ? readTokenFile(f.tokenFile) : f.token;
    const parent = mcpParent(f.parentSession, env);
    await serveMcpStdio({
      relay: f.relay,
      sender: f.sender,
      waitMs,
      ...(token ? { token } : {}),
      ...(parent === undefined ? {} : { parent }),
    });
  });
}
