// `aep-steer instruct`: sends one instruction through the relay and settles it on the stream
// (design record, "Consumer behavior"): the ack, then delivered or dropped, all cause-linked to
// the command id. Nothing is inferred from local state.
import type { Command } from 'commander';
import type { AepEvent } from '../protocol/envelope.js';
import { command as buildCommand } from '../protocol/build.js';
import { SteeringError } from '../protocol/errors.js';
import { instructType } from '../protocol/types.js';
import { RelayConsumer, type RosterEntry } from '../relay/consumer.js';
import { paintFor, type Paint } from '../audit/paint.js';

export const DEFAULT_RELAY = 'ws://127.0.0.1:8787/socket';
/** The sender identity on commands (`agent` of the command, AEP-0004 §2) unless --sender names another. */
export const DEFAULT_SENDER = 'aep-steer';

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

export interface RelayFlags {
  relay: string;
  token?: string;
  sender: string;
}

/** Flags every consumer command shares; environment values are read when the command is registered. */
export function addRelayOptions(cmd: Command, env: NodeJS.ProcessEnv = process.env): Command {
  return cmd
    .option('--relay <url>', 'relay WebSocket URL (AEP_RELAY)', env['AEP_RELAY'] ?? DEFAULT_RELAY)
    .option('--token <token>', 'bearer token for the relay (AEP_TOKEN); commands need one', env['AEP_TOKEN'])
    .option('--sender <name>', 'sender identity carried as the command\'s agent', DEFAULT_SENDER);
}

export async function connectConsumer(f: RelayFlags): Promise<RelayConsumer> {
  return RelayConsumer.connect({ url: f.relay, agent: f.sender, ...(f.token ? { token: f.token } : {}) });
}

/** The one claimant of a session, or a refusal that says why a command could not be routed (AEP-0004 §4.4). */
export function claimantOf(roster: RosterEntry[], session: string): { entry: RosterEntry } | { code: 'no-route' | 'ambiguous'; detail: string } {
  const entries = roster.filter((r) => r.session === session);
  if (entries.length === 0) return { code: 'no-route', detail: `session ${session} has no live claimant on the relay` };
  if (entries.length > 1) return { code: 'ambiguous', detail: `session ${session} is claimed by ${entries.length} connections` };
  return { entry: entries[0]! };
}

export const acceptsOf = (entry: RosterEntry): string[] | undefined => {
  const accepts = (entry.control as { accepts?: unknown } | undefined)?.accepts;
  return Array.isArray(accepts) ? accepts.filter((t): t is string => typeof t === 'string') : undefined;
};

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
  const cmd = buildCommand({ agent: f.sender }, session, { type, data: { text: req.text }, capture: 'redacted' });
  let terminal: AepEvent | undefined;
  let wake: (() => void) | undefined;
  const watch = await consumer.subscribe({ filter: { session, cause: cmd.id } }, {
    onEvent: (e) => {
      if (e.cause !== cmd.id || terminal) return;
      if (/\.instruction\.(delivered|dropped)$/.test(e.type)) {
        terminal = e;
        wake?.();
      }
    },
  });
  const started = Date.now();
  try {
    const windowMs = Math.max(1, Math.min(req.ackWindowMs ?? 10_000, req.timeoutMs));
    const retries = Math.max(0, Math.min(req.retries ?? 2, Math.floor(req.timeoutMs / windowMs) - 1));
    req.onSending?.({ command: cmd.id, type, vendor });
    const settled = await consumer.send(cmd, { timeoutMs: windowMs, retries });
    const base = { command: cmd.id, session, vendor };
    switch (settled.outcome) {
      case 'timeout':
        return { ...base, outcome: 'timeout', stage: 'ack', sent: retries + 1 };
      case 'refused':
        return { ...base, outcome: 'refused', code: settled.code, by: 'relay', ...(settled.detail ? { detail: settled.detail } : {}) };
      case 'rejected':
        return { ...base, outcome: 'rejected', ack: settled.ack.id, reason: settled.reason, ...(settled.detail ? { detail: settled.detail } : {}) };
      case 'accepted':
        break;
    }
    const ack = settled.ack.id;
    req.onAccepted?.({ command: cmd.id, ack: settled.ack });
    if (req.noWait) return { ...base, outcome: 'accepted', ack };
    const left = req.timeoutMs - (Date.now() - started);
    if (!terminal && left > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, left);
      });
      clearTimeout(timer);
    }
    const t = terminal as AepEvent | undefined;
    if (!t) return { ...base, outcome: 'timeout', stage: 'delivery', ack, sent: 1 };
    const data = t.data ?? {};
    if (t.type.endsWith('.delivered')) {
      return { ...base, outcome: 'delivered', ack, delivered: t.id, ...(typeof data['queued_ms'] === 'number' ? { queuedMs: data['queued_ms'] } : {}) };
    }
    return { ...base, outcome: 'dropped', ack, dropped: t.id, ...(typeof data['reason'] === 'string' ? { reason: data['reason'] } : {}) };
  } finally {
    watch.close();
  }
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

export function parseMs(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new SteeringError('CONFIG_INVALID', `${name} must be a whole number of milliseconds >= 1, got "${v}"`);
  return n;
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
  const p = f.json ? paintFor({}) : paintFor(io.out);
  let consumer: RelayConsumer;
  try {
    consumer = await connectConsumer(f);
  } catch (err) {
    const o: InstructOutcome = { outcome: 'unreachable', session: f.session, detail: (err as Error).message };
    io.out.write(f.json ? `${JSON.stringify(o)}\n` : `${describeOutcome(o, p)}\n`);
    return INSTRUCT_EXIT.unreachable;
  }
  try {
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
    io.out.write(f.json ? `${JSON.stringify(o)}\n` : `${describeOutcome(o, p)}\n`);
    return INSTRUCT_EXIT[o.outcome];
  } catch (err) {
    const o: InstructOutcome = { outcome: 'unreachable', session: f.session, detail: (err as Error).message };
    io.out.write(f.json ? `${JSON.stringify(o)}\n` : `${describeOutcome(o, p)}\n`);
    return INSTRUCT_EXIT.unreachable;
  } finally {
    await consumer.close();
  }
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
