// `aep-steer doctor [vendor]`: runs the checks of src/doctor/checks.ts and prints each with its
// fix. Exit 0 only when every check holds.
import type { Command } from 'commander';
import { tableFor, vendorAliases, vendorTokens } from '../adapters/registry.js';
import { paintFor } from '../audit/paint.js';
import {
  adapterChecks,
  cliCheck,
  hookChecks,
  relayChecks,
  shimTraceChecks,
  stateChecks,
  type Check,
} from '../doctor/checks.js';
import { DEFAULT_RELAY } from '../consumer/connect.js';
import { USAGE_EXIT } from './usage.js';

export const DOCTOR_EXIT = { ok: 0, problems: 1, usage: USAGE_EXIT } as const;

export interface DoctorFlags {
  relay: string;
  token?: string;
  port?: string;
  project?: string;
  cli?: string;
  json?: boolean;
}

export async function runDoctor(
  vendor: string | undefined,
  f: DoctorFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream; env?: NodeJS.ProcessEnv },
): Promise<number> {
  const env = io.env ?? process.env;
  const table = vendor === undefined ? undefined : tableFor(vendor);
  if (vendor !== undefined && table === undefined) {
    io.err.write(`doctor: unknown vendor "${vendor}"; known: ${vendorTokens().join(', ')}\n`);
    return DOCTOR_EXIT.usage;
  }
  const port = Number(f.port || env.AEP_HOOK_PORT || table?.port || 0);
  if (table !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) {
    io.err.write(`doctor: --port takes a port number 1-65535, got "${f.port ?? env.AEP_HOOK_PORT}"\n`);
    return DOCTOR_EXIT.usage;
  }
  const checks: Check[] = [...(await relayChecks(f.relay, f.token, env)), ...stateChecks(env)];
  if (table !== undefined) {
    checks.push(...(await adapterChecks(table, port, env)));
    checks.push(...hookChecks(table, port, f.project === undefined ? {} : { project: f.project }, env));
    checks.push(...(table.installer?.checks?.(f.project === undefined ? {} : { project: f.project }, env) ?? []));
    checks.push(...shimTraceChecks(table, env));
    checks.push(cliCheck(table, f.cli, env));
  }
  const problems = checks.filter((c) => !c.ok);
  if (f.json) {
    io.out.write(`${JSON.stringify({ ok: problems.length === 0, checks }, null, 2)}\n`);
  } else {
    const p = paintFor(io.out);
    for (const c of checks) {
      io.out.write(`${c.ok ? p.green('✓') : p.red('✗')} ${p.bold(c.name)}: ${c.detail}\n`);
      if (c.fix !== undefined) io.out.write(`    fix: ${c.fix}\n`);
    }
    io.out.write(
      problems.length === 0
        ? `${p.green('all checks hold')}${table === undefined ? ' (name a vendor to check its adapter, hooks and CLI too)' : ''}\n`
        : `${p.red(`${problems.length} problem${problems.length === 1 ? '' : 's'}`)}: fix the first one first, then run aep-steer doctor${table ? ` ${table.token}` : ''} again\n`,
    );
  }
  return problems.length === 0 ? DOCTOR_EXIT.ok : DOCTOR_EXIT.problems;
}

export function registerDoctor(program: Command): void {
  const env = process.env;
  program
    .command('doctor')
    .description(
      'check the relay, the token, and with a vendor its adapter, hooks and CLI; print each problem with its fix',
    )
    .argument(
      '[vendor]',
      `vendor token (${vendorTokens().join(', ')}) or its CLI's name (${[...vendorAliases().keys()].join(', ')})`,
    )
    .option('--relay <url>', 'relay WebSocket URL (AEP_RELAY)', env.AEP_RELAY || DEFAULT_RELAY)
    .option('--token <token>', 'relay token (AEP_TOKEN; default for a loopback relay: the local token)', env.AEP_TOKEN)
    .option('--port <n>', "adapter hook port (AEP_HOOK_PORT; default: the vendor's)")
    .option('--project <dir>', "check the hooks of this project instead of the user's")
    .option(
      '--cli <path>',
      "the vendor CLI binary (default: its name on PATH, else the pinned one in the clone's .vendor-clis/)",
    )
    .option('--json', 'print the checks as JSON')
    .addHelpText(
      'after',
      '\nExit codes: 0 every check holds, 1 at least one problem (each printed with its fix), 2 usage.',
    )
    .action(async (vendor: string | undefined, f: DoctorFlags) => {
      process.exitCode = await runDoctor(vendor, f, { out: process.stdout, err: process.stderr });
    });
}
