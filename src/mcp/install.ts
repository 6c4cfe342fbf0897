// `aep-steer install mcp <vendor>`: adds the `aep-steer mcp` server to an orchestrating agent's
// MCP config, keeping every other server, and takes it out again. Vendor differences are data:
// where the config lives, its format, and what the entry needs. The entry names a token file,
// never the token (D21): configs like `.mcp.json` are often committed.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonObject, settingsFile, writeJsonObject, writeTextFile, type InstallReport } from '../adapters/install.js';
import { SteeringError } from '../protocol/errors.js';

export const MCP_ENTRY = 'aep-steer';

export interface McpServerEntry {
  command: string;
  args: string[];
}

export interface McpInstallOptions {
  project?: string;
  user?: boolean;
  relay: string;
  tokenFile?: string;
  sender?: string;
  env?: NodeJS.ProcessEnv;
}

interface McpVendor {
  /** The config file for a project (`--project DIR`) or for the user. */
  file(opts: McpInstallOptions, env: NodeJS.ProcessEnv): string;
  format: 'mcp-json' | 'codex-toml';
  /** Where the evidence for the format is. */
  evidence: string;
  notes: string[];
}

const claudeConfigDir = (env: NodeJS.ProcessEnv): string => env['CLAUDE_CONFIG_DIR'] || env['HOME'] || homedir();
const codexHome = (env: NodeJS.ProcessEnv): string => env['CODEX_HOME'] || join(env['HOME'] || homedir(), '.codex');

/** instruct waits up to its wait_ms; the host must wait longer than that for the tool result. */
const TOOL_TIMEOUT_S = 660;

export const MCP_VENDORS: Record<string, McpVendor> = {
  'claude-code': {
    // Project scope: `.mcp.json` at the project root; user scope: `mcpServers` in ~/.claude.json.
    file: (o, env) => (o.project !== undefined ? settingsFile(o, '', '.mcp.json', '') : join(claudeConfigDir(env), '.claude.json')),
    format: 'mcp-json',
    evidence: 'Claude Code 2.1.332 loads `mcpServers` from .mcp.json (approved via enabledMcpjsonServers) and lists mcp__aep-steer__* tools (test/e2e/mcp-orchestrator.e2e.ts)',
    notes: ['Claude Code asks once before it starts a project .mcp.json server; the installer approves it in .claude/settings.local.json (enabledMcpjsonServers)'],
  },
  codex: {
    file: (o, env) => settingsFile(o, '.codex', 'config.toml', codexHome(env)),
    format: 'codex-toml',
    evidence: 'Codex 0.171.0 reads `[mcp_servers.<name>]` tables (command, args, tool_timeout_sec) from config.toml',
    notes: [`tool_timeout_sec = ${TOOL_TIMEOUT_S}, so Codex waits for instruct's held result`],
  },
};

/** The project root: the nearest folder above this module with a package.json. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new SteeringError('CONFIG_INVALID', 'cannot find the aep-steering package root');
    dir = up;
  }
}

/** The command that starts the server: this Node and this package's bin, by absolute path. */
export function serverEntry(o: McpInstallOptions): McpServerEntry {
  const args = [join(packageRoot(), 'bin', 'aep-steer.js'), 'mcp', '--relay', o.relay];
  if (o.tokenFile !== undefined) args.push('--token-file', resolve(o.tokenFile));
  if (o.sender !== undefined) args.push('--sender', o.sender);
  return { command: process.execPath, args };
}

function vendorOf(token: string): McpVendor {
  const v = MCP_VENDORS[token];
  if (v === undefined) throw new SteeringError('CONFIG_INVALID', `no MCP config writer for "${token}"; known: ${Object.keys(MCP_VENDORS).join(', ')}`);
  return v;
}

// --- .mcp.json / ~/.claude.json -------------------------------------------------------------

function installJson(file: string, entry: McpServerEntry): boolean {
  const config = readJsonObject(file);
  const servers = (config['mcpServers'] ?? {}) as Record<string, unknown>;
  if (typeof servers !== 'object' || Array.isArray(servers)) throw new SteeringError('CONFIG_INVALID', `${file}: mcpServers is not an object; nothing was changed`);
  const next = { type: 'stdio', ...entry };
  if (JSON.stringify(servers[MCP_ENTRY]) === JSON.stringify(next)) return false;
  writeJsonObject(file, { ...config, mcpServers: { ...servers, [MCP_ENTRY]: next } });
  return true;
}

function uninstallJson(file: string): boolean {
  if (!existsSync(file)) return false;
  const config = readJsonObject(file);
  const servers = config['mcpServers'] as Record<string, unknown> | undefined;
  if (servers === undefined || !(MCP_ENTRY in servers)) return false;
  const { [MCP_ENTRY]: _ours, ...rest } = servers;
  writeJsonObject(file, { ...config, mcpServers: rest });
  return true;
}

/** Approves the project server for Claude Code, so a headless run starts it without asking. */
function approveProjectServer(project: string): string {
  const file = join(resolve(project), '.claude', 'settings.local.json');
  const settings = readJsonObject(file);
  const enabled = Array.isArray(settings['enabledMcpjsonServers']) ? (settings['enabledMcpjsonServers'] as unknown[]) : [];
  if (!enabled.includes(MCP_ENTRY)) writeJsonObject(file, { ...settings, enabledMcpjsonServers: [...enabled, MCP_ENTRY] });
  return file;
}

// --- Codex config.toml ----------------------------------------------------------------------

const TOML_HEADER = `[mcp_servers.${MCP_ENTRY}]`;

/** The config without our table (from its header to the next table header). */
function withoutTomlTable(toml: string): string {
  const out: string[] = [];
  let skipping = false;
  for (const line of toml.split('\n')) {
    if (/^\s*\[/.test(line)) skipping = line.trim() === TOML_HEADER;
    if (!skipping) out.push(line);
  }
  return out.join('\n').replace(/\n{3,}/g, '\n\n');
}

const tomlTable = (entry: McpServerEntry): string =>
  [TOML_HEADER, `command = ${JSON.stringify(entry.command)}`, `args = [${entry.args.map((a) => JSON.stringify(a)).join(', ')}]`, `tool_timeout_sec = ${TOOL_TIMEOUT_S}`].join('\n');

function installToml(file: string, entry: McpServerEntry): boolean {
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const kept = withoutTomlTable(before).trimEnd();
  const after = `${kept === '' ? '' : `${kept}\n\n`}${tomlTable(entry)}\n`;
  if (after === before) return false;
  writeTextFile(file, after);
  return true;
}

function uninstallToml(file: string): boolean {
  if (!existsSync(file)) return false;
  const before = readFileSync(file, 'utf8');
  const after = withoutTomlTable(before);
  if (after === before) return false;
  writeTextFile(file, after.trimEnd() === '' ? '' : `${after.trimEnd()}\n`);
  return true;
}

// --- entry points ---------------------------------------------------------------------------

export function installMcp(token: string, o: McpInstallOptions): InstallReport {
  const v = vendorOf(token);
  const env = o.env ?? process.env;
  const file = v.file(o, env);
  const entry = serverEntry(o);
  const changed = v.format === 'mcp-json' ? installJson(file, entry) : installToml(file, entry);
  const notes = [...v.notes];
  if (v.format === 'mcp-json' && o.project !== undefined) notes.push(`approved in ${approveProjectServer(o.project)}`);
  if (o.tokenFile === undefined) notes.push('no --token-file given: the server uses AEP_TOKEN from the agent\'s environment');
  return { file, changed, added: changed ? [MCP_ENTRY] : [], removed: [], notes };
}

export function uninstallMcp(token: string, o: Pick<McpInstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const v = vendorOf(token);
  const file = v.file({ ...o, relay: '' }, o.env ?? process.env);
  const changed = v.format === 'mcp-json' ? uninstallJson(file) : uninstallToml(file);
  return { file, changed, added: [], removed: changed ? [MCP_ENTRY] : [], notes: [] };
}
