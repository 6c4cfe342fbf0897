// `aep-steer respond`: answers a held permission or form request with control.attention.respond
// (AEP-0004 §4.2, D14) and settles on the stream: the ack, then attention.answered caused by it.
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import { refusedLine } from '../consumer/explain.js';
import { CLI_VOICE, refusalSentence } from '../consumer/next-step.js';
import { sendResponse, type Answer, type RespondOutcome } from '../consumer/respond.js';
import { withConsumer } from '../consumer/connect.js';
import { pendingRequests } from '../consumer/pending.js';
import { relayAction, outcomePrinter, timeoutFlag, unreachableExit, type RelayFlags } from './relay-options.js';
import { describePending } from './pending-command.js';
import { pendingSecondSentence } from '../consumer/explain-second.js';

/**
 * Exit codes of `respond`: 3 the adapter rejected it (an unknown request among others), 5 the
 * request is no longer pending (answered or dismissed at the agent, timed out: D34), 9 the answer
 * names an option the request does not have, 10 the request is risky and this allow was the first
 * of two (D48): it is still held until a second identity allows it.
 */
export const RESPOND_EXIT = {
  answered: 0,
  usage: 2,
  rejected: 3,
  refused: 4,
  notPending: 5,
  timeout: 6,
  unreachable: 7,
  unauthorized: 8,
  misfit: 9,
  /** D48: a risky request took this allow as the first of two; it is still held. */
  'pending-second': 10,
} as const;

/** The exit code of an outcome: a rejection by its code (D34), the rest by outcome. */
export function exitOf(o: RespondOutcome): number {
  if (o.outcome !== 'rejected') return RESPOND_EXIT[o.outcome];
  return o.code === 'not-pending'
    ? RESPOND_EXIT.notPending
    : o.code === 'answer-invalid'
      ? RESPOND_EXIT.misfit
      : RESPOND_EXIT.rejected;
}

/**
 * `allow` / `deny` are option words the adapter maps onto the request's own options (D34); any other word is free text
 * (D14).
 */
export function answerFrom(word: string | undefined, valuesJson: string | undefined): Answer | { error: string } {
  if (valuesJson !== undefined) {
    if (word !== undefined) return { error: 'give either an answer word or --values, not both' };
    let values: unknown;
    try {
      values = JSON.parse(valuesJson);
    } catch (err) {
      return { error: `--values is not JSON: ${(err as Error).message}` };
    }
    if (values === null || typeof values !== 'object' || Array.isArray(values))
      return { error: '--values must be a JSON object of field id to value' };
    return { values: values as Record<string, unknown> };
  }
  if (word === undefined || word.trim() === '')
    return { error: 'give an answer: allow, deny, free text, or --values JSON' };
  const w = word.trim().toLowerCase();
  return w === 'allow' || w === 'deny' ? { option: w } : { text: word };
}

export function describeResponse(o: RespondOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'answered':
      return `${p.green('✓')} answered: ${JSON.stringify(o.answer ?? {})} (event ${o.answered})`;
    case 'rejected':
      // D34: a request that ended already is told as such, never as an answer.
      if (o.code === 'not-pending')
        return `${p.red('✗')} not pending: ${o.detail ?? 'the request ended'}; ${CLI_VOICE.pending(o.session)}`;
      return `${p.red('✗')} rejected by the adapter (${o.code ?? o.reason}): ${refusalSentence(o.code, CLI_VOICE, o)}`;
    case 'refused':
      return refusedLine(o, p);
    case 'timeout':
      return o.stage === 'ack'
        ? `${p.yellow('…')} timeout: no ack for ${o.command}; ${CLI_VOICE.pending(o.session)}`
        : `${p.yellow('…')} timeout: accepted, but no attention.answered yet; ${CLI_VOICE.pending(o.session)}`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
    case 'pending-second':
      return `${p.yellow('…')} ${pendingSecondSentence(o.request, o.first)}`;
  }
}

interface RespondFlags extends RelayFlags {
  session: string;
  /** Absent: the session's only pending request. */
  request?: string;
  values?: string;
  timeout: string;
  json?: boolean;
}

export async function runRespond(
  word: string | undefined,
  f: RespondFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream },
): Promise<number> {
  const answer = answerFrom(word, f.values);
  if ('error' in answer) {
    io.err.write(`respond: ${answer.error}\n`);
    return RESPOND_EXIT.usage;
  }
  const timeoutMs = timeoutFlag('respond', f.timeout, io.err);
  if (timeoutMs === undefined) return RESPOND_EXIT.usage;
  const { print, paint } = outcomePrinter(f.json, io.out, describeResponse);
  const unreachable = unreachableExit(print, RESPOND_EXIT, (detail) => ({
    outcome: 'unreachable' as const,
    session: f.session,
    request: f.request ?? '',
    detail,
  }));
  return withConsumer(
    f,
    async (consumer) => {
      let request = f.request;
      if (request === undefined) {
        // No --request: the session's only held request, or the list to pick one from.
        const held = await pendingRequests(consumer, { session: f.session });
        if (held.length !== 1) {
          const why =
            held.length === 0
              ? `respond: no request is pending in session ${f.session}: it was answered or dismissed at the agent, or never raised`
              : `respond: session ${f.session} holds ${held.length} requests: name one with --request`;
          io.err.write(`${why}
`);
          if (held.length > 1)
            io.err.write(`${describePending(held, paint)}
`);
          return held.length === 0 ? RESPOND_EXIT.notPending : RESPOND_EXIT.usage;
        }
        request = held[0]!.request;
      }
      const o = await sendResponse(consumer, f, { session: f.session, request, answer, timeoutMs });
      print(o);
      return exitOf(o);
    },
    unreachable,
  );
}

export function registerRespond(program: Command): void {
  const cmd = program
    .command('respond')
    .description('answer a held permission or form request (control.attention.respond)')
    .argument('[answer]', 'allow, deny, or free text (free text on a permission is a deny with that message, D14)')
    .requiredOption('--session <id>', 'session holding the request')
    .option(
      '--request <id>',
      "the attention.requested event id (`aep-steer pending` lists them); absent: the session's only pending request",
    )
    .option('--values <json>', 'form answers: a JSON object of field id to value')
    .option('--timeout <ms>', 'give up waiting after this long', '30000')
    .option('--json', 'print the outcome as one JSON object');
  relayAction(
    cmd,
    '\nExit codes: 0 answered, 2 usage (several requests pending and no --request), 3 rejected by the adapter, 4 refused, ' +
      '5 not pending (already answered or dismissed at the agent, timed out), 6 timeout, 7 relay unreachable, 8 token refused, ' +
      '9 the answer does not fit the request (an option it does not have).',
    (word: string | undefined, f: RespondFlags) => runRespond(word, f, { out: process.stdout, err: process.stderr }),
  );
}
