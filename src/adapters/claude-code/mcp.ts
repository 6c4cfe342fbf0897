// Claude Code as an orchestrating agent: where it keeps its MCP servers (D21: the entry names a
// token file, never the token; `.mcp.json` is often committed).
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { settingsFile } from '../install.js';
import type { McpConfig } from '../mcp-config.js';

const configDir = (env: NodeJS.ProcessEnv): string => env['CLAUDE_CONFIG_DIR'] || env['HOME'] || homedir();

export const claudeCodeMcp: McpConfig = {
  // Project scope: `.mcp.json` at the project root; user scope: `mcpServers` in ~/.claude.json.
  file: (o, env) =>
    o.project !== undefined ? settingsFile(o, '', '.mcp.json', '') : join(configDir(env), '.claude.json'),
  format: 'mcp-json',
  evidence:
    'Claude Code 2.1.332 loads `mcpServers` from .mcp.json (approved via enabledMcpjsonServers) and lists mcp__aep-steer__* tools (test/e2e/mcp-orchestrator.e2e.ts)',
  notes: [
    'Claude Code asks once before it starts a project .mcp.json server; the installer approves it in .claude/settings.local.json (enabledMcpjsonServers)',
  ],
  approves: {
    file: (project) => join(resolve(project), '.claude', 'settings.local.json'),
    key: 'enabledMcpjsonServers',
  },
};
