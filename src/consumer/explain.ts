// A settled outcome told plainly, for an orchestrating model (the MCP tools) and a person (the
// console, the CLI) alike: one sentence that says what happened and what to do next, in the words
// of the consumer that shows it (its voice), the stream facts in snake case, and whether it is an
// error (a refusal by the relay or the roster, with its `code`, or the adapter's rejection).
import type { Paint } from '../audit/paint.js';
import { CLI_VOICE, refusalSentence, type RefusalContext, type Voice } from './next-step.js';
import type { CancelOutcome, ToolProcessSaid } from './cancel.js';
import type { InstructOutcome } from './verb.js';
import type { RespondOutcome } from './respond.js';
import type { WithdrawOutcome } from './withdraw.js';
import { pendingSecondSentence } from './explain-second.js';

export interface Explained {
  text: string;
  facts: Record<string, unknown>;
  isError: boolean;
}

export function result(text: string, facts: Record<string, unknown>, isError = false): Explained {
  return { text, facts, isError };
}

/** A refusal before anything was sent: a code and a sentence. */
export function refusal(code: string, sentence: string, facts: Record<string, unknown> = {}): Explained {
  return result(`Refused (${code}): ${sentence}`, { outcome: 'refused', code, detail: sentence, ...facts }, true);
}

/** "Refused (code): detail; next step." for a refusal by the relay or the roster. */
function refusedText(o: { code: string; detail?: string } & RefusalContext, voice: Voice): string {
  return `Refused (${o.code}): ${refusalSentence(o.code, voice, o)}.`;
}

/** The relay could not be reached, or refused the token: what happened and what to do. */
function unreachableText(detail: string, voice: Voice): string {
  return `Relay unreachable: ${detail}; ${voice.relayDown}.`;
}

/** The ids every outcome may carry: the command's, and its ack's. */
function idFacts(o: { command?: string; ack?: string }, f: Record<string, unknown>): Record<string, unknown> {
  if (o.command !== undefined) f['command_id'] = o.command;
  if (o.ack !== undefined) f['ack_id'] = o.ack;
  return f;
}

/** The facts a verb's outcome starts with: what it came to, its session, what it names, its ids. */
function outcomeFacts(o: { outcome: string; session: string }, named: Record<string, unknown> = {}) {
  return idFacts(o as { command?: string; ack?: string }, { outcome: o.outcome, session: o.session, ...named });
}

/** An adapter's rejection as facts: its reason, and its code and detail when it gave them. */
function rejectionFacts(f: Record<string, unknown>, o: { reason: string; code?: string; detail?: string }): void {
  f['reason'] = o.reason;
  if (o.code !== undefined) f['code'] = o.code;
  if (o.detail !== undefined) f['detail'] = o.detail;
}

/** A refusal by the relay or the roster as facts: its code, who refused where asked, its detail. */
function refusalFacts(f: Record<string, unknown>, o: { code: string; detail?: string }, by?: string): void {
  f['code'] = o.code;
  if (by !== undefined) f['by'] = by;
  if (o.detail !== undefined) f['detail'] = o.detail;
}

/** An adapter's rejection as an error result: `text` says what it means for the verb. */
function rejectedResult(
  o: { reason: string; code?: string; detail?: string },
  facts: Record<string, unknown>,
  text: string,
): Explained {
  rejectionFacts(facts, o);
  return result(text, facts, true);
}

/**
 * An outcome no session decided, as an error result: a refusal by the relay or the roster (`by`
 * among the facts where the verb names it), or a relay that could not be reached.
 */
export function undecided(
  o:
    | ({ outcome: 'refused'; code: string; detail?: string; by: string } & RefusalContext)
    | { outcome: 'unreachable'; detail: string },
  facts: Record<string, unknown>,
  voice: Voice,
  namesBy = false,
): Explained {
  if (o.outcome === 'unreachable') return unreachableResult(o, facts, voice);
  refusalFacts(facts, o, namesBy ? o.by : undefined);
  return result(refusedText(o, voice), facts, true);
}

/** A relay that could not be reached as an error result. */
function unreachableResult(o: { detail: string }, facts: Record<string, unknown>, voice: Voice): Explained {
  facts['detail'] = o.detail;
  return result(unreachableText(o.detail, voice), facts, true);
}

/** Snake-case facts of an instruct or send_input outcome, as the stream gave them. */
function steerFacts(o: InstructOutcome, key: string | undefined): Record<string, unknown> {
  const f: Record<string, unknown> = { outcome: o.outcome, session: o.session };
  if (key !== undefined) f['idempotency_key'] = key;
  idFacts(o as { command?: string; ack?: string }, f);
  if ('vendor' in o && o.vendor !== undefined) f['vendor'] = o.vendor;
  switch (o.outcome) {
    case 'delivered':
      f['delivered_id'] = o.delivered;
      if (o.queuedMs !== undefined) f['queued_ms'] = o.queuedMs;
      if (o.moment !== undefined) f['moment'] = o.moment;
      if (o.delivery !== undefined) f['delivery'] = o.delivery;
      if (o.started !== undefined) f['started'] = o.started;
      if (o.ref !== undefined) f['ref'] = o.ref;
      if (o.at !== undefined) f['delivered_at'] = o.at;
      break;
    case 'dropped':
      f['dropped_id'] = o.dropped;
      if (o.reason !== undefined) f['reason'] = o.reason;
      if (o.at !== undefined) f['dropped_at'] = o.at;
      break;
    case 'rejected':
      rejectionFacts(f, o);
      break;
    case 'refused':
      refusalFacts(f, o, o.by);
      break;
    case 'timeout':
      f['stage'] = o.stage;
      break;
    case 'unreachable':
      f['detail'] = o.detail;
      break;
    case 'accepted':
      break;
  }
  return f;
}

/** The settled outcome of `instruct` / `send_input` as a tool result. */
export function explainSteer(
  o: InstructOutcome,
  opts: { key?: string; waitMs: number; noun: string; voice: Voice },
): Explained {
  const voice = opts.voice;
  const facts = steerFacts(o, opts.key);
  const again =
    opts.key !== undefined ? ` Call again with the same idempotency_key to check on it without sending it twice.` : '';
  switch (o.outcome) {
    case 'delivered': {
      const after = o.queuedMs !== undefined ? ` after ${o.queuedMs} ms in the queue` : '';
      const at = o.moment !== undefined ? ` at its ${o.moment} moment` : '';
      const when = o.at !== undefined ? ` (${o.at})` : '';
      return result(
        `Delivered${after}${at}${when}: the ${opts.noun} reached session ${o.session}; the agent reads it on its next model request.`,
        facts,
      );
    }
    case 'dropped':
      return result(
        `Dropped (${o.reason ?? 'no reason given'}): the ${opts.noun} was accepted but never reached session ${o.session}. Decide whether to send it again.`,
        facts,
      );
    case 'accepted':
      return result(`Accepted by session ${o.session}; not waiting for delivery.`, facts);
    case 'timeout':
      return o.stage === 'ack'
        ? result(
            `No acknowledgement within ${opts.waitMs} ms: the adapter for session ${o.session} did not answer.${again}`,
            facts,
            true,
          )
        : result(
            `Still queued after ${opts.waitMs} ms: session ${o.session} accepted the ${opts.noun} and will receive it at its next eligible moment; ${voice.queue(o.session)}.${again}`,
            facts,
          );
    case 'rejected':
      return result(
        `Rejected by the adapter (${o.code ?? o.reason}): ${refusalSentence(o.code, voice, o)}. Nothing was queued.`,
        facts,
        true,
      );
    case 'refused':
      return result(refusedText(o, voice), facts, true);
    case 'unreachable':
      return unreachableResult(o, facts, voice);
  }
}

/** The settled outcome of a withdraw (D32) as a tool result: the same codes as the adapter's. */
export function explainWithdraw(o: WithdrawOutcome, voice: Voice): Explained {
  const facts = outcomeFacts(o, { instruction: o.instruction });
  switch (o.outcome) {
    case 'withdrawn':
      facts['dropped_id'] = o.dropped;
      return result(`Withdrawn: instruction ${o.instruction} will never reach session ${o.session}.`, facts);
    case 'rejected':
      return rejectedResult(
        o,
        facts,
        `Not withdrawn (${o.code ?? o.reason}): ${refusalSentence(o.code, voice, { session: o.session, vendor: o.vendor })}.`,
      );
    case 'timeout':
      facts['stage'] = o.stage;
      return result(`No answer in time from session ${o.session}; ${voice.queue(o.session)}.`, facts, true);
    default:
      return undecided(o, facts, voice);
  }
}

/** D33: a cancel settles on the agent's `run.cancelled`; a rejection says the turn was not stopped. */
/** Tool processes as a person reads them: `pid 41 \`sleep 30\``. */
export const toolList = (list: readonly ToolProcessSaid[]): string =>
  list
    .map((t) =>
      [t.pid === undefined ? '' : `pid ${t.pid}`, t.command === undefined ? '' : `\`${t.command}\``].join(' ').trim(),
    )
    .map((t) => t || 'a process')
    .join(', ');

export function explainCancel(o: CancelOutcome, voice: Voice): Explained {
  const facts = outcomeFacts(o);
  if ('vendor' in o && o.vendor !== undefined) facts['vendor'] = o.vendor;
  switch (o.outcome) {
    case 'cancelled': {
      facts['cancelled_id'] = o.cancelled;
      // D33: what the agent left running is said, never passed over as stopped.
      const lines = [`Cancelled: session ${o.session} stopped its running turn (run.cancelled ${o.cancelled}).`];
      if (o.killed !== undefined) {
        facts['killed'] = o.killed;
        lines.push(`The tool processes it left were ended: ${toolList(o.killed)}.`);
      }
      if (o.leftRunning !== undefined) {
        facts['left_running'] = o.leftRunning;
        lines.push(`The agent left these running: ${toolList(o.leftRunning)}; ${voice.killTools}.`);
      }
      return result(lines.join(' '), facts);
    }
    case 'rejected':
      return rejectedResult(
        o,
        facts,
        `Not cancelled (${o.code ?? o.reason}): ${refusalSentence(o.code, voice, o)}. The turn goes on.`,
      );
    case 'timeout':
      facts['stage'] = o.stage;
      return o.stage === 'ack'
        ? result(
            `No acknowledgement in time: the adapter for session ${o.session} did not answer; nothing says the turn stopped.`,
            facts,
            true,
          )
        : result(
            `Accepted, but session ${o.session} has not reported the turn stopped yet; ${voice.events(o.session)}.`,
            facts,
            true,
          );
    default:
      return undecided(o, facts, voice, true);
  }
}

export function explainRespond(o: RespondOutcome, voice: Voice): Explained {
  const facts = outcomeFacts(o, { request: o.request });
  switch (o.outcome) {
    case 'answered':
      facts['answered_id'] = o.answered;
      if (o.answer !== undefined) facts['answer'] = o.answer;
      return result(
        `Answered: request ${o.request} of session ${o.session} is released with ${JSON.stringify(o.answer ?? {})}.`,
        facts,
      );
    case 'rejected':
      // D34: a request that ended already is no error to fix: the agent went on without this answer.
      return rejectedResult(
        o,
        facts,
        o.code === 'not-pending'
          ? `Not pending: ${o.detail ?? 'the request ended'}; ${voice.pending(o.session)}. Nothing was sent to the agent.`
          : `Rejected by the adapter (${o.code ?? o.reason}): ${o.detail ?? 'no detail'}; ${voice.pending(o.session)} with what each one accepts.`,
      );
    case 'pending-second':
      facts['first_by'] = o.first;
      return result(pendingSecondSentence(o.request, o.first), facts);
    case 'timeout':
      facts['stage'] = o.stage;
      return result(
        `No ${o.stage === 'ack' ? 'acknowledgement' : 'answer event'} in time for request ${o.request}; ${voice.pending(o.session)}.`,
        facts,
        true,
      );
    default:
      return undecided(o, facts, voice);
  }
}

/** The line printed while waiting: where the instruction stands and when it will arrive (D27). */
export function waitingLine(info: { ahead?: number; ended?: boolean; delivery?: string }, p: Paint): string {
  const ahead = info.ahead === undefined ? 'queued' : `queued (${info.ahead} ahead)`;
  const when = info.ended
    ? 'the session has ended; delivered when a resumed run of it starts (its resume window)'
    : info.delivery === 'queue'
      ? "delivered when the agent's next turn starts"
      : info.delivery === 'steer'
        ? "delivered into the running turn, with the model's next request after the running tool's output; dropped if the turn ends first"
        : "delivered at the agent's next prompt or tool call";
  return `${p.dim('…')} ${ahead}; ${when}`;
}

/** An instruct outcome as one painted line, for the CLI and the demo. */
export function describeOutcome(o: InstructOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'delivered': {
      // D43: a start says whether it began the turn or went into one begun meanwhile.
      const start =
        o.started === true
          ? `: it started the agent's turn${o.ref === undefined ? '' : ` ${o.ref}`}`
          : o.started === false
            ? `: a turn had begun meanwhile, so it went into that turn as ${o.delivery ?? 'steer'} instead of starting one`
            : '';
      return `${p.green('✓')} delivered${o.delivery !== undefined && o.delivery !== 'moment' && o.started === undefined ? ` (${o.delivery})` : ''}${o.moment !== undefined ? ` at ${o.moment}` : ''}${o.queuedMs !== undefined ? ` after ${o.queuedMs} ms` : ''} (event ${o.delivered})${start}`;
    }
    case 'accepted':
      return `${p.green('✓')} accepted and queued; not waiting for delivery (--no-wait; aep-steer watch --session ${o.session} follows it)`;
    case 'dropped':
      return `${p.red('✗')} dropped: ${o.reason ?? 'no reason given'} (event ${o.dropped})`;
    case 'rejected':
      return `${p.red('✗')} rejected by the adapter (${o.code ?? o.reason}): ${refusalSentence(o.code, CLI_VOICE, o)}; nothing was queued`;
    case 'refused':
      return refusedLine(o, p);
    case 'timeout':
      return o.stage === 'ack'
        ? `${p.yellow('…')} timeout: no ack (sent ${o.sent} time${o.sent === 1 ? '' : 's'} with the same id ${o.command}); ${CLI_VOICE.events(o.session)}`
        : `${p.yellow('…')} timeout: accepted, but neither delivered nor dropped yet; the instruction stays queued: ${CLI_VOICE.queue(o.session)}, and \`aep-steer withdraw --session ${o.session} --instruction ${o.command}\` takes it back`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

/** A refusal by the relay or the roster as one CLI line: what happened, the detail, the next step. */
export function refusedLine(
  o: { by: 'relay' | 'roster'; code: string; detail?: string } & RefusalContext,
  p: Paint,
): string {
  return `${p.red('✗')} ${o.by === 'relay' ? 'the relay refused the command' : 'not sent'} (${o.code}): ${refusalSentence(o.code, CLI_VOICE, o)}`;
}
