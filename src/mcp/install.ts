// `aep-steer install mcp <vendor>`: adds the `aep-steer mcp` server to an orchestrating agent's
// MCP config, keeping every other server, and takes it out again. Vendor differences are data,
// each vendor's MCP row (adapters/<vendor>/mcp.ts): where the config lives, its format, and what
// the entry needs. The entry names a token file, never the token (D21): configs like `.mcp.json`
// are often committed.
import { existsSync, readFileSync, rmdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readJsonObject, writeJsonObject, writeTextFile, type InstallReport } from '../adapters/install.js';
import { MCP_TOOL_TIMEOUT_S, type McpConfig, type McpScope } from '../adapters/mcp-config.js';
import { tableFor, vendorTables } from '../adapters/registry.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';
import { isLoopbackUrl, localTokenPath } from '../relay/local-token.js';
import { SteeringError } from '../protocol/errors.js';

export const MCP_ENTRY = 'aep-steer';

interface McpServerEntry {
  command: string;
  args: string[];
}

export interface McpInstallOptions extends McpScope {
  relay: string;
  tokenFile?: string;
  sender?: string;
  env?: NodeJS.ProcessEnv;
}

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
function serverEntry(o: McpInstallOptions): McpServerEntry {
  const args = [join(packageRoot(), 'bin', 'aep-steer.js'), 'mcp', '--relay', o.relay];
  if (o.tokenFile !== undefined) args.push('--token-file', resolve(o.tokenFile));
  if (o.sender !== undefined) args.push('--sender', o.sender);
  return { command: process.execPath, args };
}

/** The vendors whose table says where their MCP servers go. */
export const mcpVendors = (): string[] =>
  [...vendorTables.values()].flatMap((t) => (t.mcp === undefined ? [] : [t.token]));

function vendorOf(token: string): McpConfig {
  const v = tableFor(token)?.mcp;
  if (v === undefined)
    throw new SteeringError('CONFIG_INVALID', `no MCP config writer for "${token}"; known: ${mcpVendors().join(', ')}`);
  return v;
}

// --- what an install added, so uninstall puts each file back as it was --------------------

/** Per config file: whether install created it, the top-level keys and the directories it added. */
interface Added {
  created: boolean;
  keys: string[];
  dirs: string[];
}

const addedPath = (env: NodeJS.ProcessEnv): string => join(stateDir(env), 'mcp-installed.json');

function readAdded(env: NodeJS.ProcessEnv): Record<string, Added> {
  try {
    return JSON.parse(readFileSync(addedPath(env), 'utf8')) as Record<string, Added>;
  } catch {
    return {};
  }
}

function writeAdded(all: Record<string, Added>, env: NodeJS.ProcessEnv): void {
  if (Object.keys(all).length === 0) rmSync(addedPath(env), { force: true });
  else writePrivateFile(addedPath(env), `${JSON.stringify(all, null, 2)}\n`);
}

/** Notes, before the first write to `file`, what is not there yet; a later install keeps the first note. */
function noteBefore(file: string, keys: string[], env: NodeJS.ProcessEnv): void {
  const all = readAdded(env);
  if (all[file] !== undefined) return;
  const dirs: string[] = [];
  for (let d = dirname(file); !existsSync(d); d = dirname(d)) dirs.push(d);
  const created = !existsSync(file);
  const config = created ? {} : readJsonOrEmpty(file);
  all[file] = { created, keys: keys.filter((k) => !(k in config)), dirs };
  writeAdded(all, env);
}

const readJsonOrEmpty = (file: string): Record<string, unknown> => (file.endsWith('.toml') ? {} : readJsonObject(file));

/** What install noted for `file` (taken out of the record); without a note, what an emptied file suggests. */
function takeAdded(file: string, env: NodeJS.ProcessEnv): Added | undefined {
  const all = readAdded(env);
  const a = all[file];
  if (a === undefined) return undefined;
  delete all[file];
  writeAdded(all, env);
  return a;
}

/**
 * Writes `config` back without our entries: keys install added go once empty, a file it created once nothing is left.
 */
function restoreJson(
  file: string,
  config: Record<string, unknown>,
  added: Added | undefined,
  containers: string[],
): void {
  const next = { ...config };
  for (const k of containers) {
    const v = next[k];
    const empty = Array.isArray(v)
      ? v.length === 0
      : v !== null && typeof v === 'object' && Object.keys(v).length === 0;
    if (empty && (added === undefined || added.keys.includes(k))) delete next[k];
  }
  if (Object.keys(next).length === 0 && (added === undefined || added.created)) removeCreated(file, added);
  else writeJsonObject(file, next);
}

function removeCreated(file: string, added: Added | undefined): void {
  rmSync(file, { force: true });
  for (const d of added?.dirs ?? []) {
    try {
      rmdirSync(d); // only when empty: anything else put there stays
    } catch {
      break;
    }
  }
}

// --- .mcp.json / ~/.claude.json -------------------------------------------------------------

function installJson(file: string, entry: McpServerEntry, env: NodeJS.ProcessEnv): boolean {
  const config = readJsonObject(file);
  const servers = (config['mcpServers'] ?? {}) as Record<string, unknown>;
  if (typeof servers !== 'object' || Array.isArray(servers))
    throw new SteeringError('CONFIG_INVALID', `${file}: mcpServers is not an object; nothing was changed`);
  const next = { type: 'stdio', ...entry };
  if (JSON.stringify(servers[MCP_ENTRY]) === JSON.stringify(next)) return false;
  noteBefore(file, ['mcpServers'], env);
  writeJsonObject(file, { ...config, mcpServers: { ...servers, [MCP_ENTRY]: next } });
  return true;
}

function uninstallJson(file: string, env: NodeJS.ProcessEnv): boolean {
  if (!existsSync(file)) return false;
  const config = readJsonObject(file);
  const servers = config['mcpServers'] as Record<string, unknown> | undefined;
  if (servers === undefined || !(MCP_ENTRY in servers)) return false;
  const { [MCP_ENTRY]: _ours, ...rest } = servers;
  restoreJson(file, { ...config, mcpServers: rest }, takeAdded(file, env), ['mcpServers']);
  return true;
}

type Approval = NonNullable<McpConfig['approves']>;

/** Approves the project server where the vendor asks first, so a headless run starts it without asking. */
function approveProjectServer(a: Approval, project: string, env: NodeJS.ProcessEnv): string {
  const file = a.file(project);
  const settings = readJsonObject(file);
  const enabled = Array.isArray(settings[a.key]) ? (settings[a.key] as unknown[]) : [];
  if (!enabled.includes(MCP_ENTRY)) {
    noteBefore(file, [a.key], env);
    writeJsonObject(file, { ...settings, [a.key]: [...enabled, MCP_ENTRY] });
  }
  return file;
}

/** Takes our approval out again; true when there was one. */
function withdrawApproval(a: Approval, project: string, env: NodeJS.ProcessEnv): boolean {
  const file = a.file(project);
  if (!existsSync(file)) return false;
  const settings = readJsonObject(file);
  const enabled = settings[a.key];
  if (!Array.isArray(enabled) || !enabled.includes(MCP_ENTRY)) return false;
  restoreJson(file, { ...settings, [a.key]: enabled.filter((e) => e !== MCP_ENTRY) }, takeAdded(file, env), [a.key]);
  return true;
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
  [
    TOML_HEADER,
    `command = ${JSON.stringify(entry.command)}`,
    `args = [${entry.args.map((a) => JSON.stringify(a)).join(', ')}]`,
    `tool_timeout_sec = ${MCP_TOOL_TIMEOUT_S}`,
  ].join('\n');

function installToml(file: string, entry: McpServerEntry, env: NodeJS.ProcessEnv): boolean {
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const kept = withoutTomlTable(before).trimEnd();
  const after = `${kept === '' ? '' : `${kept}\n\n`}${tomlTable(entry)}\n`;
  if (after === before) return false;
  noteBefore(file, [], env);
  writeTextFile(file, after);
  return true;
}

function uninstallToml(file: string, env: NodeJS.ProcessEnv): boolean {
  if (!existsSync(file)) return false;
  const before = readFileSync(file, 'utf8');
  const after = withoutTomlTable(before);
  if (after === before) return false;
  const added = takeAdded(file, env);
  if (after.trim() === '' && (added === undefined || added.created)) removeCreated(file, added);
  else writeTextFile(file, after.trimEnd() === '' ? '' : `${after.trimEnd()}\n`);
  return true;
}

// --- entry points ---------------------------------------------------------------------------

/**
 * The auth the server will really use, as `aep-steer mcp` resolves it: the token file when the
 * entry names one; else AEP_TOKEN from the agent's environment, and for a loopback relay without
 * it the local token.
 */
function authStatement(o: McpInstallOptions, env: NodeJS.ProcessEnv = o.env ?? process.env): string {
  if (o.tokenFile !== undefined)
    return `auth: the relay token in ${resolve(o.tokenFile)} (read at each start; it must stay mode 600)`;
  if (isLoopbackUrl(o.relay)) {
    const local = localTokenPath(env);
    const made = existsSync(local) ? '' : ' (not there yet: the relay creates it on its first start)';
    return `auth: the local token in ${local}${made}, or AEP_TOKEN when the agent's environment sets it; --token-file names another`;
  }
  return `auth: AEP_TOKEN from the agent's environment; without it ${o.relay} refuses every command (the local token goes only to a loopback relay); --token-file names a token file instead`;
}

export function installMcp(token: string, o: McpInstallOptions): InstallReport {
  const v = vendorOf(token);
  const env = o.env ?? process.env;
  const file = v.file(o, env);
  const entry = serverEntry(o);
  const changed = v.format === 'mcp-json' ? installJson(file, entry, env) : installToml(file, entry, env);
  const notes = [...v.notes];
  if (v.approves !== undefined && o.project !== undefined)
    notes.push(`approved in ${approveProjectServer(v.approves, o.project, env)}`);
  notes.push(authStatement(o, env));
  return { file, changed, added: changed ? [MCP_ENTRY] : [], removed: [], notes };
}

/** Takes out our server (and, for a project, our approval); each file is left as it was before install. */
export function uninstallMcp(token: string, o: Pick<McpInstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const v = vendorOf(token);
  const env = o.env ?? process.env;
  const file = v.file(o, env);
  const changed = v.format === 'mcp-json' ? uninstallJson(file, env) : uninstallToml(file, env);
  const notes: string[] = [];
  if (v.approves !== undefined && o.project !== undefined && withdrawApproval(v.approves, o.project, env))
    notes.push(`withdrew the approval in ${v.approves.file(o.project)}`);
  return { file, changed, added: [], removed: changed ? [MCP_ENTRY] : [], notes };
}
