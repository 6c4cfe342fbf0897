// Codex as an orchestrating agent: its MCP servers are tables of config.toml.
import { settingsFile } from '../install.js';
import { MCP_TOOL_TIMEOUT_S, type McpConfig } from '../mcp-config.js';
import { codexHomeOf } from './installer.js';

export const codexMcp: McpConfig = {
  file: (o, env) => settingsFile(o, '.codex', 'config.toml', codexHomeOf(env)),
  format: 'codex-toml',
  evidence: 'Codex 0.171.0 reads `[mcp_servers.<name>]` tables (command, args, tool_timeout_sec) from config.toml',
  notes: [`tool_timeout_sec = ${MCP_TOOL_TIMEOUT_S}, so Codex waits for instruct's held result`],
};
