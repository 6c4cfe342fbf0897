// What a vendor's MCP row holds (`<vendor>/mcp.ts`): where an orchestrating agent keeps its MCP
// servers and in which format, so `aep-steer install mcp <vendor>` (mcp/install.ts) writes the
// `aep-steer mcp` entry there. A vendor without one cannot orchestrate.

/** Where the entry goes: a project (`--project DIR`) or the user's own config (`--user`, the default). */
export interface McpScope {
  project?: string;
  user?: boolean;
}

export interface McpConfig {
  /** The config file for this scope. */
  file(scope: McpScope, env: NodeJS.ProcessEnv): string;
  /** `mcp-json`: an `mcpServers` object in JSON; `codex-toml`: an `[mcp_servers.<name>]` table. */
  format: 'mcp-json' | 'codex-toml';
  /** Where the evidence for the format is. */
  evidence: string;
  /** Said after an install. */
  notes: string[];
  /**
   * A project server the vendor asks about before it starts one: the settings file (in the
   * project) and the list in it that approves the entry by name, written beside the entry.
   */
  approves?: { file(project: string): string; key: string };
}

/** instruct waits up to its wait_ms; an agent must wait longer than that for the tool result. */
export const MCP_TOOL_TIMEOUT_S = 660;
