// `aep-steer respond`: answers a held permission or form request with control.attention.respond
// (AEP-0004 §4.2, D14) and settles on the stream: the ack, then attention.answered caused by it.
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import { sendResponse, type Answer, type RespondOutcome } from '../consumer/send.js';
import { withConsumer } from '../consumer/connect.js';
import { addRelayOptions, outcomePrinter, parseMs, type RelayFlags } from './relay-options.js';

/** Exit codes of `respond`. */
export const RESPOND_EXIT = { answered: 0, usage: 2, rejected: 3, refused: 4, timeout: 6, unreachable: 7, unauthorized: 8 } as const;

/** `allow` / `deny` are option ids; any other word is free text (the adapter applies D14's rule). */
export function answerFrom(word: string | undefined, valuesJson: string | undefined): Answer | { error: string } {
  if (valuesJson !== undefined) {
    if (word !== undefined) return { error: 'give either an answer word or --values, not both' };
    let values: unknown;
    try {
      values = JSON.parse(valuesJson);
    } catch (err) {
      return { error: `--values is not JSON: ${(err as Error).message}` };
    }
    if (values === null || typeof values !== 'object' || Array.isArray(values)) return { error: '--values must be a JSON object of field id to value' };
    return { values: values as Record<string, unknown> };
  }
  if (word === undefined || word.trim() === '') return { error: 'give an answer: allow, deny, free text, or --values JSON' };
  const w = word.trim().toLowerCase();
  return w === 'allow' || w === 'deny' ? { option: w } : { text: word };
}

export function describeResponse(o: RespondOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'answered':
      return `${p.green('✓')} answered: ${JSON.stringify(o.answer ?? {})} (event ${o.answered})`;
    case 'rejected':
      return `${p.red('✗')} rejected by the adapter: ${o.reason}${o.detail ? `: ${o.detail}` : ''}`;
    case 'refused':
      return `${p.red('✗')} ${o.by === 'relay' ? 'relay refused the command' : 'not sent'}: ${o.code}${o.detail ? `: ${o.detail}` : ''}`;
    case 'timeout':
      return o.stage === 'ack' ? `${p.yellow('…')} timeout: no ack for ${o.command}` : `${p.yellow('…')} timeout: accepted, but no attention.answered yet`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

interface RespondFlags extends RelayFlags {
  session: string;
  request: string;
  values?: string;
  timeout: string;
  json?: boolean;
}

export async function runRespond(word: string | undefined, f: RespondFlags, io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream }): Promise<number> {
  const answer = answerFrom(word, f.values);
  if ('error' in answer) {
    io.err.write(`respond: ${answer.error}\n`);
    return RESPOND_EXIT.usage;
  }
  let timeoutMs: number;
  try {
    timeoutMs = parseMs('--timeout', f.timeout);
  } catch (err) {
    io.err.write(`respond: ${(err as Error).message}\n`);
    return RESPOND_EXIT.usage;
  }
  const { print } = outcomePrinter(f.json, io.out, describeResponse);
  const unreachable = (detail: string, code?: string): number => {
    print({ outcome: 'unreachable', session: f.session, request: f.request, detail });
    return code === 'RELAY_UNAUTHORIZED' ? RESPOND_EXIT.unauthorized : RESPOND_EXIT.unreachable;
  };
  return withConsumer(f, async (consumer) => {
    const o = await sendResponse(consumer, f, { session: f.session, request: f.request, answer, timeoutMs });
    print(o);
    return RESPOND_EXIT[o.outcome];
  }, unreachable);
}

export function registerRespond(program: Command): void {
  const cmd = program
    .command('respond')
    .description('answer a held permission or form request (control.attention.respond)')
    .argument('[answer]', 'allow, deny, or free text (free text on a permission is a deny with that message, D14)')
    .requiredOption('--session <id>', 'session holding the request')
    .requiredOption('--request <id>', 'the attention.requested event id')
    .option('--values <json>', 'form answers: a JSON object of field id to value')
    .option('--timeout <ms>', 'give up waiting after this long', '30000')
    .option('--json', 'print the outcome as one JSON object');
  addRelayOptions(cmd)
    .addHelpText('after', '\nExit codes: 0 answered, 2 usage, 3 rejected by the adapter, 4 refused, 6 timeout, 7 relay unreachable, 8 token refused.')
    .action(async (word: string | undefined, f: RespondFlags) => {
      process.exitCode = await runRespond(word, f, { out: process.stdout, err: process.stderr });
    });
}
