// `aep-steer demo`: the whole loop on the embedded default in under a minute (see src/demo/demo.ts).
// Exit 0 when the instruction was delivered and the audit is clean; 1 otherwise; 2 usage; 3 a port is taken.
import type { Command } from 'commander';
import { SteeringError } from '../protocol/errors.js';
import { paintFor } from '../audit/paint.js';
import { DEFAULT_DEMO_TEXT, runDemo } from '../demo/demo.js';

export const DEMO_EXIT = { ok: 0, failed: 1, usage: 2, portInUse: 3 } as const;
export const DEMO_RELAY_PORT = 8787;
export const DEMO_HOOK_PORT = 8377; // D15

interface DemoFlags {
  port: string;
  relayPort: string;
  text: string;
  scripted?: boolean;
  claude?: string;
  keep?: boolean;
}

const portOf = (v: string): number | undefined => {
  const n = Number(v);
  return Number.isInteger(n) && n >= 0 && n <= 65535 ? n : undefined;
};

export async function runDemoCommand(
  f: DemoFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream },
): Promise<number> {
  const hookPort = portOf(f.port);
  const relayPort = portOf(f.relayPort);
  if (hookPort === undefined || relayPort === undefined) {
    io.err.write('demo: --port and --relay-port take a port number 0-65535 (0 picks a free one)\n');
    return DEMO_EXIT.usage;
  }
  try {
    const r = await runDemo({
      hookPort,
      relayPort,
      text: f.text,
      ...(f.scripted ? { scripted: true } : {}),
      ...(f.claude ? { claude: f.claude } : {}),
      ...(f.keep ? { keep: true } : {}),
      say: (line) => io.out.write(`${line}\n`),
      paint: paintFor(io.out),
    });
    return r.outcome.outcome === 'delivered' && r.audit.violations.length === 0 ? DEMO_EXIT.ok : DEMO_EXIT.failed;
  } catch (err) {
    if (err instanceof SteeringError && err.code === 'PORT_IN_USE') {
      io.err.write(`demo: ${err.message} (0 picks a free port)\n`);
      return DEMO_EXIT.portInUse;
    }
    io.err.write(`demo: ${(err as Error).message}\n`);
    return DEMO_EXIT.failed;
  }
}

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the whole loop locally: relay, Claude Code adapter, a session, one instruction, the audit')
    .option('--port <n>', 'hook port of the Claude Code adapter on 127.0.0.1', String(DEMO_HOOK_PORT))
    .option('--relay-port <n>', 'relay port on 127.0.0.1', String(DEMO_RELAY_PORT))
    .option('--text <instruction>', 'the instruction to send', DEFAULT_DEMO_TEXT)
    .option('--scripted', 'use the scripted session even when the Claude Code CLI is installed')
    .option(
      '--claude <path>',
      'the claude binary (default: .vendor-clis/claude-code, from scripts/install-vendor-cli.sh)',
    )
    .option('--keep', 'keep the working directory (relay store, adapter log, relay export)')
    .addHelpText('after', '\nExit codes: 0 delivered and the audit is clean, 1 otherwise, 2 usage, 3 a port is taken.')
    .action(async (f: DemoFlags) => {
      process.exitCode = await runDemoCommand(f, { out: process.stdout, err: process.stderr });
    });
}
