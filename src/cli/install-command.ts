// `aep-steer install <vendor>` / `aep-steer uninstall <vendor>`: wire a vendor's hooks to its
// adapter (D15) and take them out again. Parses flags and prints what changed; the work is in
// each vendor folder (adapters/<vendor>/installer.ts).
import type { Command } from 'commander';
import { tableFor, vendorTokens } from '../adapters/registry.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ensureSecret, secretPath } from '../adapters/install.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';
import { DEFAULT_RELAY } from '../consumer/connect.js';
import { MCP_ENTRY, installMcp, mcpVendors, uninstallMcp } from '../mcp/install.js';
import type { InstallReport } from '../adapters/install.js';
import type { Installer, VendorTable } from '../adapters/table.js';
import { SteeringError } from '../protocol/errors.js';

function installable(token: string): { table: VendorTable; installer: Installer } {
  const table = tableFor(token);
  if (table?.installer === undefined) {
    const known = vendorTokens().filter((t) => tableFor(t)?.installer !== undefined);
    throw new SteeringError('CONFIG_INVALID', `no installer for "${token}"; known: ${known.join(', ')}`);
  }
  return { table, installer: table.installer };
}

export function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65535)
    throw new SteeringError('CONFIG_INVALID', `port must be an integer 1-65535, got "${value}"`);
  return n;
}

function print(verb: 'install' | 'uninstall', token: string, r: InstallReport): void {
  if (!r.changed) {
    console.log(
      `${token}: ${r.file} already ${verb === 'install' ? 'has the adapter hooks' : 'holds no adapter hooks'}; nothing changed`,
    );
    // Where the secret lives is worth saying every time (D21).
    if (verb === 'install') for (const n of r.notes) console.log(`  ${n}`);
    return;
  }
  if (verb === 'install') {
    console.log(`${token}: wrote ${r.file}`);
    console.log(
      r.added.length > 0
        ? `  added hooks for ${r.added.length} events: ${r.added.join(', ')}`
        : '  updated the adapter hooks',
    );
  } else {
    console.log(`${token}: wrote ${r.file}`);
    console.log(`  removed the adapter hooks from ${r.removed.length} events: ${r.removed.join(', ')}`);
  }
  for (const n of r.notes) console.log(`  ${n}`);
}

interface InstallFlags {
  project?: string;
  user?: boolean;
  port?: string;
  secret?: string;
  relay?: string;
  token?: string;
  tokenFile?: string;
  sender?: string;
}

/** `install mcp <vendor>`: the MCP server entry; a `--token` is kept in a private file the entry names. */
function installMcpServer(vendor: string | undefined, flags: InstallFlags): void {
  if (vendor === undefined)
    throw new SteeringError(
      'CONFIG_INVALID',
      `name the orchestrating agent: aep-steer install mcp <${mcpVendors().join('|')}>`,
    );
  let tokenFile = flags.tokenFile;
  if (flags.token !== undefined) {
    tokenFile = writePrivateFile(join(stateDir(), 'mcp-token'), `${flags.token}\n`);
    console.log(`stored the relay token in ${tokenFile} (mode 600)`);
  }
  const report = installMcp(vendor, {
    relay: flags.relay ?? process.env['AEP_RELAY'] ?? DEFAULT_RELAY,
    ...(flags.project !== undefined ? { project: flags.project } : {}),
    ...(flags.user ? { user: true } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
    ...(flags.sender !== undefined ? { sender: flags.sender } : {}),
  });
  if (!report.changed)
    console.log(`mcp ${vendor}: ${report.file} already has the ${MCP_ENTRY} server; nothing changed`);
  else console.log(`mcp ${vendor}: wrote ${report.file}\n  added the ${MCP_ENTRY} MCP server (aep-steer mcp)`);
  for (const n of report.notes) console.log(`  ${n}`);
}

export function registerInstall(program: Command): void {
  program
    .command('install')
    .description("add the steering adapter hooks to a vendor's settings (keeps every other hook)")
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')}), or "mcp"`)
    .argument(
      '[orchestrator]',
      `with "mcp": the agent whose MCP config gets the aep-steer server (${mcpVendors().join(', ')})`,
    )
    .option('--project <dir>', "install into this project's settings")
    .option('--user', "install into the user's settings (default)")
    .option('--port <n>', 'adapter hook port (default: AEP_HOOK_PORT or the vendor default)')
    .option('--secret <s>', 'hook URL secret to use and store (default: the stored one, generated once)')
    .option('--relay <url>', 'with "mcp": the relay the server connects to (AEP_RELAY)')
    .option('--token-file <path>', 'with "mcp": the file (mode 600) the server reads its relay token from')
    .option('--token <token>', 'with "mcp": store this relay token in $AEP_STATE_DIR/mcp-token and use that file')
    .option('--sender <name>', 'with "mcp": the sender name on the server\'s commands (default aep-steer-mcp)')
    .addHelpText(
      'after',
      '\nExamples:\n  aep-steer install claude-code --project .\n  aep-steer install mcp claude-code --project . --token-file ~/.aep-steering/mcp-token\n  aep-steer install mcp codex   # a loopback relay: the local token',
    )
    .action((token: string, orchestrator: string | undefined, flags: InstallFlags) => {
      if (token === 'mcp') {
        installMcpServer(orchestrator, flags);
        return;
      }
      if (orchestrator !== undefined)
        throw new SteeringError(
          'CONFIG_INVALID',
          `unexpected "${orchestrator}": only "install mcp <vendor>" takes a second name`,
        );
      const { table, installer } = installable(token);
      const port = parsePort(flags.port ?? process.env.AEP_HOOK_PORT ?? String(table.port));
      const { secret, created } = ensureSecret(flags.secret);
      if (created) console.log(`stored the hook secret in ${secretPath()}`);
      const report = installer.install({
        project: flags.project,
        user: flags.user,
        port,
        secret,
        neutral: table.replies.neutral,
        attentionTimeoutMs: table.attentionTimeoutMs,
      });
      print('install', token, report);
    });

  program
    .command('uninstall')
    .description("remove the steering adapter hooks from a vendor's settings (and nothing else)")
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')}), or "mcp"`)
    .argument('[orchestrator]', 'with "mcp": the agent whose MCP config loses the aep-steer server')
    .option('--project <dir>', "remove from this project's settings")
    .option('--user', "remove from the user's settings (default)")
    .action((token: string, orchestrator: string | undefined, flags: InstallFlags) => {
      if (token === 'mcp') {
        if (orchestrator === undefined)
          throw new SteeringError('CONFIG_INVALID', 'name the orchestrating agent: aep-steer uninstall mcp <vendor>');
        const r = uninstallMcp(orchestrator, {
          ...(flags.project !== undefined ? { project: flags.project } : {}),
          ...(flags.user ? { user: true } : {}),
        });
        console.log(
          r.changed
            ? `mcp ${orchestrator}: ${existsSync(r.file) ? 'wrote' : 'removed'} ${r.file}\n  removed the ${MCP_ENTRY} MCP server`
            : `mcp ${orchestrator}: ${r.file} holds no ${MCP_ENTRY} server; nothing changed`,
        );
        for (const n of r.notes) console.log(`  ${n}`);
        return;
      }
      const { installer } = installable(token);
      print('uninstall', token, installer.uninstall({ project: flags.project, user: flags.user }));
    });
}
