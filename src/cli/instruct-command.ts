// `aep-steer instruct`: sends one instruction through the relay and settles it on the stream
// (design record, "Consumer behavior"): the ack, then delivered or dropped, all cause-linked to
// the command id. Nothing is inferred from local state.
import type { Command } from 'commander';
import { describeOutcome, waitingLine } from '../consumer/explain.js';
import { DELIVERIES, IDLE } from '../protocol/payloads.js';
import { relayAction, outcomePrinter, parseMs, unreachableExit, type RelayFlags } from './relay-options.js';

/** Exit codes of `instruct`, one per outcome; success is 0 whether it waited for delivery or not. */
export const INSTRUCT_EXIT = {
  delivered: 0,
  accepted: 0,
  usage: 2,
  rejected: 3,
  refused: 4,
  dropped: 5,
  timeout: 6,
  unreachable: 7,
  unauthorized: 8,
} as const;

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

interface InstructFlags extends RelayFlags {
  vendor?: string;
  session: string;
  wait: boolean;
  json?: boolean;
  timeout: string;
  ackWindow: string;
  delivery?: string;
  idle?: string;
  start?: boolean;
}

export async function runInstruct(
  textArg: string | undefined,
  f: InstructFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream; stdin?: () => Promise<string> },
): Promise<number> {
  let timeoutMs: number;
  let ackWindowMs: number;
  try {
    timeoutMs = parseMs('--timeout', f.timeout);
    ackWindowMs = parseMs('--ack-window', f.ackWindow);
    if (f.delivery !== undefined && !(DELIVERIES as readonly string[]).includes(f.delivery)) {
      throw new Error(`--delivery must be one of ${DELIVERIES.join(', ')}, not "${f.delivery}"`);
    }
    if (f.idle !== undefined && !(IDLE as readonly string[]).includes(f.idle)) {
      throw new Error(`--idle must be one of ${IDLE.join(', ')}, not "${f.idle}"`);
    }
    if (f.start === true && f.idle !== undefined && f.idle !== 'start') {
      throw new Error(`--start is --idle start: give one of them, not --start with --idle ${f.idle}`);
    }
  } catch (err) {
    io.err.write(`instruct: ${(err as Error).message}\n`);
    return INSTRUCT_EXIT.usage;
  }
  let text = textArg;
  if (text === undefined || text === '-') {
    if (!io.stdin && process.stdin.isTTY) {
      io.err.write('instruct: give the instruction text as an argument, or pipe it on stdin\n');
      return INSTRUCT_EXIT.usage;
    }
    text = (await (io.stdin ?? readStdin)()).replace(/\r?\n$/, '');
    if (text === '') {
      io.err.write('instruct: no instruction text on stdin\n');
      return INSTRUCT_EXIT.usage;
    }
  }
  const { paint: p, print } = outcomePrinter(f.json, io.out, describeOutcome);
  const unreachable = unreachableExit(print, INSTRUCT_EXIT, (detail) => ({
    outcome: 'unreachable' as const,
    session: f.session,
    detail,
  }));
  // Loaded only once the arguments are good: a usage error starts no socket client or builder.
  const [{ withConsumer }, { sendInstruction }] = await Promise.all([
    import('../consumer/connect.js'),
    import('../consumer/instruct.js'),
  ]);
  return withConsumer(
    f,
    async (consumer) => {
      const o = await sendInstruction(consumer, f, {
        session: f.session,
        text,
        timeoutMs,
        ackWindowMs,
        noWait: !f.wait,
        ...(f.vendor ? { vendor: f.vendor } : {}),
        ...(f.delivery ? { delivery: f.delivery } : {}),
        ...(f.start === true ? { idle: 'start' } : f.idle ? { idle: f.idle } : {}),
        onSending: ({ command, type }) => {
          if (!f.json) io.out.write(`${p.dim('→')} ${type} ${command} to session ${f.session}\n`);
        },
        onAccepted: ({ ack, ahead, ended }) => {
          if (f.json || !f.wait) return;
          io.out.write(`${p.green('✓')} accepted (ack ${ack.id})\n`);
          io.out.write(
            `${waitingLine({ ...(ahead === undefined ? {} : { ahead }), ...(ended ? { ended } : {}), ...(f.delivery ? { delivery: f.delivery } : {}) }, p)}\n`,
          );
        },
      });
      print(o);
      return INSTRUCT_EXIT[o.outcome];
    },
    unreachable,
  );
}

export function registerInstruct(program: Command): void {
  const cmd = program
    .command('instruct')
    .description('send an instruction to a live agent session through the relay and follow it to delivery')
    .argument('[text]', 'the instruction; "-" or nothing reads it from stdin')
    .requiredOption('--session <id>', 'target session (as listed by `aep-steer sessions`)')
    .option('--vendor <token>', "vendor token of the verb x.<vendor>.control.instruct (default: the claimant's agent)")
    .option(
      '--delivery <how>',
      'moment (the next eligible moment, the default), steer (into the running turn) or queue (the next turn)',
    )
    .option(
      '--idle <how>',
      'while no turn runs: refuse, wait (for the next turn someone starts) or start (a turn with this text); default refuse for steer, wait otherwise',
    )
    .option('--start', "start the agent's turn with it if the session is idle (--idle start)")
    .option('--no-wait', 'return once the adapter acknowledged (exit 0), without waiting for delivery')
    .option('--timeout <ms>', 'give up waiting after this long (ack and delivery together)', '120000')
    .option('--ack-window <ms>', 'wait this long for the ack before resending the same command (AEP-0004 §3)', '10000')
    .option('--json', 'print the outcome as one JSON object');
  relayAction(
    cmd,
    '\nExit codes: 0 delivered (or accepted, with --no-wait), 2 usage, 3 rejected by the adapter,\n4 refused (relay, or the claimant does not declare the verb), 5 dropped, 6 timeout, 7 relay unreachable,\n8 the relay refused the token.',
    (text: string | undefined, f: InstructFlags) => runInstruct(text, f, { out: process.stdout, err: process.stderr }),
  );
}
