// `aep-steer cancel`: stops the turn a session is running (D33, `control.cancel {scope:"run"}`)
// where its lane can (Cline's hub, Codex's app-server), settled on the agent's `run.cancelled`.
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import { refusedLine } from '../consumer/explain.js';
import { CLI_VOICE, refusalSentence } from '../consumer/next-step.js';
import type { CancelOutcome } from '../consumer/send.js';
import { addRelayOptions, outcomePrinter, timeoutFlag, unreachableExit, type RelayFlags } from './relay-options.js';

export const CANCEL_EXIT = {
  cancelled: 0,
  usage: 2,
  rejected: 3,
  refused: 4,
  timeout: 6,
  unreachable: 7,
  unauthorized: 8,
} as const;

export function describeCancel(o: CancelOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'cancelled':
      return `${p.green('✓')} the running turn was stopped (event ${o.cancelled})`;
    case 'rejected':
      return `${p.red('✗')} not stopped (${o.code ?? o.reason}): ${refusalSentence(o.code, CLI_VOICE, o)}; the turn goes on`;
    case 'refused':
      return refusedLine(o, p);
    case 'timeout':
      return o.stage === 'ack'
        ? `${p.yellow('…')} timeout: no ack from the session; nothing says the turn stopped: ${CLI_VOICE.events(o.session)}`
        : `${p.yellow('…')} accepted, but the agent has not reported the turn stopped yet; \`aep-steer watch --session ${o.session}\` follows it`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

interface CancelFlags extends RelayFlags {
  session: string;
  run?: string;
  json?: boolean;
  timeout: string;
}

export async function runCancel(
  f: CancelFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream },
): Promise<number> {
  const timeoutMs = timeoutFlag('cancel', f.timeout, io.err);
  if (timeoutMs === undefined) return CANCEL_EXIT.usage;
  const { print } = outcomePrinter(f.json, io.out, describeCancel);
  const [{ withConsumer }, { sendCancel }] = await Promise.all([
    import('../consumer/connect.js'),
    import('../consumer/send.js'),
  ]);
  return withConsumer(
    f,
    async (consumer) => {
      const o = await sendCancel(consumer, f, { session: f.session, timeoutMs, ...(f.run ? { run: f.run } : {}) });
      print(o);
      return CANCEL_EXIT[o.outcome];
    },
    unreachableExit(print, CANCEL_EXIT, (detail) => ({ outcome: 'unreachable' as const, session: f.session, detail })),
  );
}

export function registerCancel(program: Command): void {
  const cmd = program
    .command('cancel')
    .description("stop the turn a session is running, where its agent's lane can (control.cancel, scope run)")
    .requiredOption('--session <id>', 'the session')
    .option('--run <id>', "the run to stop; the session's running one when absent")
    .option('--timeout <ms>', 'give up waiting for the agent to report the turn stopped after this long', '30000')
    .option('--json', 'print the outcome as one JSON object');
  addRelayOptions(cmd)
    .addHelpText(
      'after',
      '\nExit codes: 0 stopped, 2 usage, 3 rejected (no turn running, a cancel under way), 4 refused (the session takes no\ncancel), 6 timeout, 7 relay unreachable, 8 the relay refused the token.',
    )
    .action(async (f: CancelFlags) => {
      process.exitCode = await runCancel(f, { out: process.stdout, err: process.stderr });
    });
}
