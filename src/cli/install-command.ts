// `aep-steer install <vendor>` / `aep-steer uninstall <vendor>`: wire a vendor's hooks to its
// adapter (D15) and take them out again. Parses flags and prints what changed; the work is in
// adapters/installers/.
import type { Command } from 'commander';
import { tableFor, vendorTokens } from '../adapters/registry.js';
import { ensureSecret, secretPath } from '../adapters/install.js';
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
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new SteeringError('CONFIG_INVALID', `port must be an integer 1-65535, got "${value}"`);
  return n;
}

function print(verb: 'install' | 'uninstall', token: string, r: InstallReport): void {
  if (!r.changed) {
    console.log(`${token}: ${r.file} already ${verb === 'install' ? 'has the adapter hooks' : 'holds no adapter hooks'}; nothing changed`);
    return;
  }
  if (verb === 'install') {
    console.log(`${token}: wrote ${r.file}`);
    console.log(r.added.length > 0 ? `  added hooks for ${r.added.length} events: ${r.added.join(', ')}` : '  updated the adapter hooks');
  } else {
    console.log(`${token}: wrote ${r.file}`);
    console.log(`  removed the adapter hooks from ${r.removed.length} events: ${r.removed.join(', ')}`);
  }
  for (const n of r.notes) console.log(`  ${n}`);
}

interface InstallFlags { project?: string; user?: boolean; port?: string; secret?: string }

export function registerInstall(program: Command): void {
  program
    .command('install')
    .description('add the steering adapter hooks to a vendor\'s settings (keeps every other hook)')
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')})`)
    .option('--project <dir>', 'install into this project\'s settings')
    .option('--user', 'install into the user\'s settings (default)')
    .option('--port <n>', 'adapter hook port (default: AEP_HOOK_PORT or the vendor default)')
    .option('--secret <s>', 'hook URL secret to use and store (default: the stored one, generated once)')
    .action((token: string, flags: InstallFlags) => {
      const { table, installer } = installable(token);
      const port = parsePort(flags.port ?? process.env.AEP_HOOK_PORT ?? String(table.port));
      const { secret, created } = ensureSecret(flags.secret);
      if (created) console.log(`stored the hook secret in ${secretPath()}`);
      const report = installer.install({
        project: flags.project, user: flags.user, port, secret,
        neutral: table.replies.neutral, attentionTimeoutMs: table.attentionTimeoutMs,
      });
      print('install', token, report);
    });

  program
    .command('uninstall')
    .description('remove the steering adapter hooks from a vendor\'s settings (and nothing else)')
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')})`)
    .option('--project <dir>', 'remove from this project\'s settings')
    .option('--user', 'remove from the user\'s settings (default)')
    .action((token: string, flags: InstallFlags) => {
      const { installer } = installable(token);
      print('uninstall', token, installer.uninstall({ project: flags.project, user: flags.user }));
    });
}
