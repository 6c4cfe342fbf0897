// `aep-steer instruct`: sends one instruction through the relay and settles it on the stream
// (design record, "Consumer behavior"): the ack, then delivered or dropped, all cause-linked to
// the command id. Nothing is inferred from local state.
import type { Command } from 'commander';
import type { AepEvent } from '../protocol/envelope.js';
import { command as buildCommand } from '../protocol/build.js';
import { instructType } from '../protocol/types.js';
import type { RelayConsumer } from '../relay/consumer.js';
import type { Paint } from '../audit/paint.js';
import { acceptsOf, claimantOf, sendAndFollow } from './command-follow.js';
import { addRelayOptions, outcomePrinter, parseMs, senderOf, withConsumer, type RelayFlags } from './relay-options.js';

/** Exit codes of `instruct`, one per outcome. */
export const INSTRUCT_EXIT = {
  delivered: 0,
  usage: 2,
  rejected: 3,
  refused: 4,
  dropped: 5,
  timeout: 6,
  unreachable: 7,
  accepted: 10,
} as const;

export type InstructOutcome =
  | { outcome: 'delivered'; command: string; session: string; vendor: string; ack: string; delivered: string; queuedMs?: number }
  | { outcome: 'dropped'; command: string; session: string; vendor: string; ack: string; dropped: string; reason?: string }
  | { outcome: 'accepted'; command: string; session: string; vendor: string; ack: string }
  | { outcome: 'rejected'; command: string; session: string; vendor: string; ack: string; reason: string; detail?: string }
  | { outcome: 'refused'; command?: string; session: string; vendor?: string; code: string; detail?: string; by: 'relay' | 'roster' }
  | { outcome: 'timeout'; command: string; session: string; vendor: string; stage: 'ack' | 'delivery'; ack?: string; sent: number }
  | { outcome: 'unreachable'; session: string; detail: string };

export interface InstructRequest {
  session: string;
  text: string;
  vendor?: string;
  noWait?: boolean;
  /** Whole local wait, ack and delivery together. */
  timeoutMs: number;
  /** Ack window per attempt (AEP-0004 §3 default 10 s); a retry resends the same command. */
  ackWindowMs?: number;
  retries?: number;
  /** Called once the ack arrived, before waiting for the delivery. */
  onAccepted?: (info: { command: string; ack: AepEvent }) => void;
  /** Called with the command id just before it is sent. */
  onSending?: (info: { command: string; type: string; vendor: string }) => void;
}

/** Sends one instruction on an open consumer connection and settles it on the stream. */
export async function sendInstruction(consumer: RelayConsumer, f: Pick<RelayFlags, 'sender'>, req: InstructRequest): Promise<InstructOutcome> {
  const session = req.session;
  const found = claimantOf(await consumer.roster(), session);
  if ('code' in found) return { outcome: 'refused', session, code: found.code, detail: found.detail, by: 'roster', ...(req.vendor ? { vendor: req.vendor } : {}) };
  const vendor = req.vendor ?? found.entry.agent;
  if (vendor === undefined) return { outcome: 'refused', session, code: 'unsupported', detail: 'the claimant names no agent; give --vendor', by: 'roster' };
  const type = instructType(vendor);
  const accepts = acceptsOf(found.entry);
  if (!accepts?.includes(type)) {
    const who = `${found.entry.agent ?? 'the claimant'}${found.entry.instance ? ` (${found.entry.instance})` : ''}`;
    return {
      outcome: 'refused', session, vendor, code: 'unsupported', by: 'roster',
      detail: `${who} does not declare ${type}; steering is opt-in (the adapter runs with AEP_INSTRUCT=1 to accept it)`,
    };
  }

  // Instruction text is redacted-class: the command says so (design record; aep-wire §2.2).
  const cmd = buildCommand({ agent: senderOf(consumer, f) }, session, { type, data: { text: req.text }, capture: 'redacted' });
  const { settlement, retries, terminal: t } = await sendAndFollow(consumer, cmd, {
    filter: { session, cause: cmd.id },
    settles: (e) => /\.instruction\.(delivered|dropped)$/.test(e.type),
    timeoutMs: req.timeoutMs,
    ackWindowMs: req.ackWindowMs,
    retries: req.retries,
    beforeSend: () => req.onSending?.({ command: cmd.id, type, vendor }),
    afterAck: (ack) => {
      req.onAccepted?.({ command: cmd.id, ack });
      return !req.noWait;
    },
  });
  const base = { command: cmd.id, session, vendor };
  switch (settlement.outcome) {
    case 'timeout':
      return { ...base, outcome: 'timeout', stage: 'ack', sent: retries + 1 };
    case 'refused':
      return { ...base, outcome: 'refused', code: settlement.code, by: 'relay', ...(settlement.detail ? { detail: settlement.detail } : {}) };
    case 'rejected':
      return { ...base, outcome: 'rejected', ack: settlement.ack.id, reason: settlement.reason, ...(settlement.detail ? { detail: settlement.detail } : {}) };
    case 'accepted':
      break;
  }
  const ack = settlement.ack.id;
  if (req.noWait) return { ...base, outcome: 'accepted', ack };
  if (!t) return { ...base, outcome: 'timeout', stage: 'delivery', ack, sent: 1 };
  const data = t.data ?? {};
  if (t.type.endsWith('.delivered')) {
    return { ...base, outcome: 'delivered', ack, delivered: t.id, ...(typeof data['queued_ms'] === 'number' ? { queuedMs: data['queued_ms'] } : {}) };
  }
  return { ...base, outcome: 'dropped', ack, dropped: t.id, ...(typeof data['reason'] === 'string' ? { reason: data['reason'] } : {}) };
}

export function describeOutcome(o: InstructOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'delivered':
      return `${p.green('✓')} delivered${o.queuedMs !== undefined ? ` after ${o.queuedMs} ms` : ''} (event ${o.delivered})`;
    case 'accepted':
      return `${p.green('✓')} accepted and queued; not waiting for delivery (--no-wait)`;
    case 'dropped':
      return `${p.red('✗')} dropped: ${o.reason ?? 'no reason given'} (event ${o.dropped})`;
    case 'rejected':
      return `${p.red('✗')} rejected by the adapter: ${o.reason}${o.detail ? `: ${o.detail}` : ''}`;
    case 'refused':
      return `${p.red('✗')} ${o.by === 'relay' ? 'relay refused the command' : 'not sent'}: ${o.code}${o.detail ? `: ${o.detail}` : ''}`;
    case 'timeout':
      return o.stage === 'ack'
        ? `${p.yellow('…')} timeout: no ack (sent ${o.sent} time${o.sent === 1 ? '' : 's'} with the same id ${o.command})`
        : `${p.yellow('…')} timeout: accepted, but neither delivered nor dropped yet; the instruction stays queued`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

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
}

export async function runInstruct(textArg: string | undefined, f: InstructFlags, io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream; stdin?: () => Promise<string> }): Promise<number> {
  let timeoutMs: number;
  let ackWindowMs: number;
  try {
    timeoutMs = parseMs('--timeout', f.timeout);
    ackWindowMs = parseMs('--ack-window', f.ackWindow);
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
  const unreachable = (detail: string): number => {
    print({ outcome: 'unreachable', session: f.session, detail });
    return INSTRUCT_EXIT.unreachable;
  };
  return withConsumer(f, async (consumer) => {
    const o = await sendInstruction(consumer, f, {
      session: f.session,
      text,
      timeoutMs,
      ackWindowMs,
      noWait: !f.wait,
      ...(f.vendor ? { vendor: f.vendor } : {}),
      onSending: ({ command, type }) => {
        if (!f.json) io.out.write(`${p.dim('→')} ${type} ${command} to session ${f.session}\n`);
      },
      onAccepted: ({ ack }) => {
        if (!f.json && f.wait) io.out.write(`${p.green('✓')} accepted (ack ${ack.id})\n`);
      },
    });
    print(o);
    return INSTRUCT_EXIT[o.outcome];
  }, unreachable);
}

export function registerInstruct(program: Command): void {
  const cmd = program
    .command('instruct')
    .description('send an instruction to a live agent session through the relay and follow it to delivery')
    .argument('[text]', 'the instruction; "-" or nothing reads it from stdin')
    .requiredOption('--session <id>', 'target session (as listed by `aep-steer sessions`)')
    .option('--vendor <token>', 'vendor token of the verb x.<vendor>.control.instruct (default: the claimant\'s agent)')
    .option('--no-wait', 'return once the adapter acknowledged (exit 10), without waiting for delivery')
    .option('--timeout <ms>', 'give up waiting after this long (ack and delivery together)', '120000')
    .option('--ack-window <ms>', 'wait this long for the ack before resending the same command (AEP-0004 §3)', '10000')
    .option('--json', 'print the outcome as one JSON object');
  addRelayOptions(cmd)
    .addHelpText('after', '\nExit codes: 0 delivered, 10 accepted (--no-wait), 2 usage, 3 rejected by the adapter,\n4 refused (relay, or the claimant does not declare the verb), 5 dropped, 6 timeout, 7 relay unreachable.')
    .action(async (text: string | undefined, f: InstructFlags) => {
      process.exitCode = await runInstruct(text, f, { out: process.stdout, err: process.stderr });
    });
}
