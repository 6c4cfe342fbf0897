// A settled outcome told plainly, for an orchestrating model (the MCP tools) and a person (the
// console) alike: one sentence that says what happened and what to do next, the stream facts in
// snake case, and whether it is an error (a refusal by the relay or the roster, with its `code`,
// or the adapter's rejection).
import type { Paint } from '../audit/paint.js';
import type { CancelOutcome, EditOutcome, InstructOutcome, RespondOutcome, WithdrawOutcome } from './send.js';

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

const why = (code: string): string => {
  switch (code) {
    case 'no-route':
      return 'Call list_sessions to see which sessions are live.';
    case 'adapter-offline':
      return 'Nothing was sent: the session waits for its adapter to connect again.';
    case 'vendor-mismatch':
      return "Send it again without a vendor, or with the session's own.";
    case 'ambiguous':
      return 'More than one adapter claims the session; stop the extra adapter.';
    case 'unsupported':
      return 'This session does not take that command; list_sessions shows what each one declares.';
    case 'unauthorized':
      return 'The relay token this server uses may not send that command; ask for a token that may.';
    case 'store-unavailable':
      return 'The relay cannot write its store right now; send the same command again in a few seconds.';
    default:
      return 'See the detail.';
  }
};

/**
 * D31, D32: what a sender does next after the adapter refused a delivery or a withdraw, by the
 * rule it named (the `code` attribute of `control.rejected`); undefined for a rule with no advice of its own.
 * `session-idle` is the adapter's own detail: only the adapter knows which deliveries that session takes.
 */
export function adviceFor(code: string | undefined, detail?: string): string | undefined {
  switch (code) {
    case 'session-idle':
      return detail ?? 'no turn is running: send it while the agent works';
    case 'delivery-unsupported':
      return "this session's agent cannot take that delivery: send it with one the detail names";
    case 'delivery-invalid':
      return 'the delivery must be moment, steer or queue';
    case 'already-delivered':
      return 'the agent has it already: send a new instruction that corrects it';
    case 'not-waiting':
      return 'it no longer waits (withdrawn, expired, or its turn or session ended): nothing was changed';
    case 'unknown-instruction':
      return 'the session has no instruction with that id: `aep-steer queue --session <id>` lists what waits';
    case 'not-sender':
      return 'only its sender may take it back; ask them, or send a new instruction';
    default:
      return undefined;
  }
}

/** The ids every outcome may carry: the command's, and its ack's. */
function idFacts(o: { command?: string; ack?: string }, f: Record<string, unknown>): Record<string, unknown> {
  if (o.command !== undefined) f['command_id'] = o.command;
  if (o.ack !== undefined) f['ack_id'] = o.ack;
  return f;
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
      if (o.at !== undefined) f['delivered_at'] = o.at;
      break;
    case 'dropped':
      f['dropped_id'] = o.dropped;
      if (o.reason !== undefined) f['reason'] = o.reason;
      if (o.at !== undefined) f['dropped_at'] = o.at;
      break;
    case 'rejected':
      f['reason'] = o.reason;
      if (o.code !== undefined) f['code'] = o.code;
      if (o.detail !== undefined) f['detail'] = o.detail;
      break;
    case 'refused':
      f['code'] = o.code;
      f['by'] = o.by;
      if (o.detail !== undefined) f['detail'] = o.detail;
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
export function explainSteer(o: InstructOutcome, opts: { key?: string; waitMs: number; noun: string }): Explained {
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
            `Still queued after ${opts.waitMs} ms: session ${o.session} accepted the ${opts.noun} and will receive it at its next eligible moment (its next tool call or prompt).${again}`,
            facts,
          );
    case 'rejected': {
      const advice = adviceFor(o.code, o.detail);
      if (advice !== undefined)
        return result(`Rejected by the adapter (${o.code}): ${advice}. Nothing was queued.`, facts, true);
      return result(
        `Rejected by the adapter (${o.reason}): ${o.detail ?? 'no detail'}. Fix the ${opts.noun} and send it again.`,
        facts,
        true,
      );
    }
    case 'refused':
      return result(`Refused (${o.code}): ${o.detail ?? 'no detail'}. ${why(o.code)}`, facts, true);
    case 'unreachable':
      return result(
        `Relay unreachable: ${o.detail}. Start it with \`aep-steer relay\` or check the server's --relay URL.`,
        facts,
        true,
      );
  }
}

/** The settled outcome of a withdraw (D32) as a tool result: the same codes as the adapter's. */
export function explainWithdraw(o: WithdrawOutcome): Explained {
  const facts = idFacts(o as { command?: string; ack?: string }, {
    outcome: o.outcome,
    session: o.session,
    instruction: o.instruction,
  });
  switch (o.outcome) {
    case 'withdrawn':
      facts['dropped_id'] = o.dropped;
      return result(`Withdrawn: instruction ${o.instruction} will never reach session ${o.session}.`, facts);
    case 'rejected':
      facts['reason'] = o.reason;
      if (o.code !== undefined) facts['code'] = o.code;
      if (o.detail !== undefined) facts['detail'] = o.detail;
      return result(
        `Not withdrawn (${o.code ?? o.reason}): ${adviceFor(o.code) ?? o.detail ?? 'no detail'}.`,
        facts,
        true,
      );
    case 'refused':
      facts['code'] = o.code;
      if (o.detail !== undefined) facts['detail'] = o.detail;
      return result(`Refused (${o.code}): ${o.detail ?? 'no detail'}. ${why(o.code)}`, facts, true);
    case 'timeout':
      facts['stage'] = o.stage;
      return result(
        `No answer in time from session ${o.session}; call again with the same idempotency_key to learn how it ended.`,
        facts,
        true,
      );
    case 'unreachable':
      facts['detail'] = o.detail;
      return result(`Relay unreachable: ${o.detail}.`, facts, true);
  }
}

/** D33: a cancel settles on the agent's `run.cancelled`; a rejection says the turn was not stopped. */
export function explainCancel(o: CancelOutcome): Explained {
  const facts = idFacts(o as { command?: string; ack?: string }, { outcome: o.outcome, session: o.session });
  if ('vendor' in o && o.vendor !== undefined) facts['vendor'] = o.vendor;
  switch (o.outcome) {
    case 'cancelled':
      facts['cancelled_id'] = o.cancelled;
      return result(`Cancelled: session ${o.session} stopped its running turn (run.cancelled ${o.cancelled}).`, facts);
    case 'rejected':
      facts['reason'] = o.reason;
      if (o.code !== undefined) facts['code'] = o.code;
      if (o.detail !== undefined) facts['detail'] = o.detail;
      return result(
        `Not cancelled (${o.code ?? o.reason}): ${o.detail ?? 'no detail'}. The turn goes on; session_events shows where it stands.`,
        facts,
        true,
      );
    case 'refused':
      facts['code'] = o.code;
      facts['by'] = o.by;
      if (o.detail !== undefined) facts['detail'] = o.detail;
      return result(`Refused (${o.code}): ${o.detail ?? 'no detail'}. ${why(o.code)}`, facts, true);
    case 'timeout':
      facts['stage'] = o.stage;
      return o.stage === 'ack'
        ? result(
            `No acknowledgement in time: the adapter for session ${o.session} did not answer; nothing says the turn stopped.`,
            facts,
            true,
          )
        : result(
            `Accepted, but session ${o.session} has not reported the turn stopped yet; session_events shows whether run.cancelled came.`,
            facts,
            true,
          );
    case 'unreachable':
      facts['detail'] = o.detail;
      return result(`Relay unreachable: ${o.detail}.`, facts, true);
  }
}

export function explainRespond(o: RespondOutcome): Explained {
  const facts = idFacts(o as { command?: string; ack?: string }, {
    outcome: o.outcome,
    session: o.session,
    request: o.request,
  });
  switch (o.outcome) {
    case 'answered':
      facts['answered_id'] = o.answered;
      if (o.answer !== undefined) facts['answer'] = o.answer;
      return result(
        `Answered: request ${o.request} of session ${o.session} is released with ${JSON.stringify(o.answer ?? {})}.`,
        facts,
      );
    case 'rejected':
      facts['reason'] = o.reason;
      if (o.code !== undefined) facts['code'] = o.code;
      if (o.detail !== undefined) facts['detail'] = o.detail;
      // D34: a request that ended already is no error to fix: the agent went on without this answer.
      if (o.code === 'not-pending')
        return result(
          `Not pending: ${o.detail ?? 'the request ended'}. Nothing was sent to the agent; pending_requests shows what still waits.`,
          facts,
          true,
        );
      return result(
        `Rejected by the adapter (${o.reason}): ${o.detail ?? 'no detail'}. pending_requests shows what is still open and what it accepts.`,
        facts,
        true,
      );
    case 'refused':
      facts['code'] = o.code;
      if (o.detail !== undefined) facts['detail'] = o.detail;
      return result(`Refused (${o.code}): ${o.detail ?? 'no detail'}. ${why(o.code)}`, facts, true);
    case 'timeout':
      facts['stage'] = o.stage;
      return result(
        `No ${o.stage === 'ack' ? 'acknowledgement' : 'answer event'} in time for request ${o.request}; pending_requests shows whether it is still open.`,
        facts,
        true,
      );
    case 'unreachable':
      facts['detail'] = o.detail;
      return result(`Relay unreachable: ${o.detail}.`, facts, true);
  }
}

/** An edit (withdraw + send): a lost race says the old text was delivered and that nothing new was sent. */
export function explainEdit(o: EditOutcome, waitMs: number): Explained {
  if (o.sent === undefined) {
    const w = explainWithdraw(o.withdraw);
    const lost = o.withdraw.outcome === 'rejected' && o.withdraw.code === 'already-delivered';
    const text = lost
      ? 'It was delivered before the edit: the agent has the old text, and the new one was not sent.'
      : `${w.text} The new text was not sent.`;
    return result(text, { ...w.facts, sent: false }, true);
  }
  const s = explainSteer(o.sent, { waitMs, noun: 'instruction' });
  return result(
    `Edited: the old text was withdrawn. ${s.text}`,
    { ...s.facts, withdrawn: o.withdraw.instruction, sent: true },
    s.isError,
  );
}

/** The line printed while waiting: where the instruction stands and when it will arrive (D27). */
export function waitingLine(info: { ahead?: number; ended?: boolean; delivery?: string }, p: Paint): string {
  const ahead = info.ahead === undefined ? 'queued' : `queued (${info.ahead} ahead)`;
  const when = info.ended
    ? 'the session has ended; delivered when a resumed run of it starts (its resume window)'
    : info.delivery === 'queue'
      ? "delivered when the agent's next turn starts"
      : info.delivery === 'steer'
        ? "delivered at the running turn's next tool call, or dropped if the turn ends first"
        : "delivered at the agent's next prompt or tool call";
  return `${p.dim('…')} ${ahead}; ${when}`;
}

/** An instruct outcome as one painted line, for the CLI and the demo. */
export function describeOutcome(o: InstructOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'delivered':
      return `${p.green('✓')} delivered${o.delivery !== undefined && o.delivery !== 'moment' ? ` (${o.delivery})` : ''}${o.moment !== undefined ? ` at ${o.moment}` : ''}${o.queuedMs !== undefined ? ` after ${o.queuedMs} ms` : ''} (event ${o.delivered})`;
    case 'accepted':
      return `${p.green('✓')} accepted and queued; not waiting for delivery (--no-wait; aep-steer watch --session ${o.session} follows it)`;
    case 'dropped':
      return `${p.red('✗')} dropped: ${o.reason ?? 'no reason given'} (event ${o.dropped})`;
    case 'rejected':
      return adviceFor(o.code, o.detail) !== undefined
        ? `${p.red('✗')} rejected by the adapter (${o.code}): ${adviceFor(o.code, o.detail)}; nothing was queued`
        : `${p.red('✗')} rejected by the adapter: ${o.reason}${o.detail ? `: ${o.detail}` : ''}${o.code ? ` [${o.code}]` : ''}`;
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
