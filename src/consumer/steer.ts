// Sending one steering verb and settling it on the stream (design record, "Consumer behavior"):
// routing is checked on the roster first, nothing is inferred from local state; then the command
// is sent, resent inside its ack window, and followed to the event that settles it. The CLI, the
// demo, the MCP server and the console all send through here, one verb module each.
import { command as buildCommand } from '../protocol/build.js';
import { acceptsType } from '../relay/routing.js';
import type { RelayConsumer } from './connection.js';
import { senderOf } from './connect.js';
import { acceptsOf, routeOf } from './roster.js';
import { sendAndFollow, type Followed } from './settle.js';
import {
  ackRejected,
  relayRefused,
  type InstructOutcome,
  type InstructRequest,
  type Sender,
  type Verb,
} from './verb.js';

/** Sends `verb` to the session `req` names and settles it: the outcome any verb's own send maps from. */
export async function steer(
  consumer: RelayConsumer,
  f: Sender,
  req: InstructRequest,
  verb: Verb,
): Promise<InstructOutcome> {
  const session = req.session;
  const found = await routeOf(consumer, session, req.vendor);
  if ('code' in found)
    return {
      outcome: 'refused',
      session,
      code: found.code,
      detail: found.detail,
      by: 'roster',
      ...(req.vendor || found.vendor ? { vendor: req.vendor ?? found.vendor } : {}),
    };
  const vendor = req.vendor ?? found.entry.agent;
  if (vendor === undefined)
    return {
      outcome: 'refused',
      session,
      code: 'unsupported',
      detail: 'the claimant names no agent; give --vendor',
      by: 'roster',
    };
  const type = verb.type(vendor);
  const accepts = acceptsOf(found.entry);
  if (accepts === undefined || !acceptsType(accepts, type)) {
    const who = `${found.entry.agent ?? 'the claimant'}${found.entry.instance ? ` (${found.entry.instance})` : ''}`;
    return {
      outcome: 'refused',
      session,
      vendor,
      code: 'unsupported',
      by: 'roster',
      detail: `${who} does not declare ${type}: ${verb.hint}`,
      ...(verb.steering ? { steeringOff: true } : {}),
    };
  }

  // Instruction text is redacted-class: the command says so (design record; aep-wire §2.2).
  const cmd = buildCommand({ agent: senderOf(consumer, f) }, session, {
    type,
    data: verb.data,
    capture: verb.capture ?? 'redacted',
    ...(req.id ? { id: req.id } : {}),
    ...(verb.run ? { run: verb.run } : {}),
    ...(verb.extensions ? { extensions: verb.extensions } : {}),
  });
  const followed = await sendAndFollow(consumer, cmd, {
    filter: verb.endTypes ? { session, type: verb.endTypes(vendor) } : { session, cause: cmd.id },
    // A caller-chosen id may have settled before: read the session's history for it too.
    ...(req.id ? { from: [{ session }] } : {}),
    settles: (e) => verb.settles.test(e.type),
    timeoutMs: req.timeoutMs,
    ackWindowMs: req.ackWindowMs,
    retries: req.retries,
    beforeSend: () => req.onSending?.({ command: cmd.id, type, vendor }),
    afterAck: (ack) => {
      const { queued, state } = found.entry;
      req.onAccepted?.({
        command: cmd.id,
        ack,
        ...(typeof queued === 'number' ? { ahead: queued } : {}),
        ...(state === 'ended' ? { ended: true } : {}),
      });
      return !req.noWait;
    },
  });
  return outcomeOf({ command: cmd.id, session, vendor }, followed, req, verb);
}

/** The outcome of a sent verb: its ack's decision, then the event that settled it (or none in time). */
function outcomeOf(
  base: { command: string; session: string; vendor: string },
  { settlement, retries, terminal: t }: Followed,
  req: InstructRequest,
  verb: Verb,
): InstructOutcome {
  switch (settlement.outcome) {
    case 'timeout':
      return { ...base, outcome: 'timeout', stage: 'ack', sent: retries + 1 };
    case 'refused':
      return { ...base, ...relayRefused(settlement) };
    case 'rejected':
      return { ...base, ...ackRejected(settlement) };
    case 'accepted':
      break;
  }
  const ack = settlement.ack.id;
  if (req.noWait) return { ...base, outcome: 'accepted', ack };
  if (!t) return { ...base, outcome: 'timeout', stage: 'delivery', ack, sent: 1 };
  const data = t.data ?? {};
  if (verb.success.test(t.type)) {
    return {
      ...base,
      outcome: 'delivered',
      ack,
      delivered: t.id,
      at: t.time,
      ...(typeof data['queued_ms'] === 'number' ? { queuedMs: data['queued_ms'] } : {}),
      ...(typeof data['moment'] === 'string' ? { moment: data['moment'] } : {}),
      ...(typeof data['delivery'] === 'string' ? { delivery: data['delivery'] } : {}),
      ...(typeof data['started'] === 'boolean' ? { started: data['started'] } : {}),
      ...(typeof data['ref'] === 'string' ? { ref: data['ref'] } : {}),
      ...verb.read?.(data),
    };
  }
  return {
    ...base,
    outcome: 'dropped',
    ack,
    dropped: t.id,
    at: t.time,
    ...(typeof data['reason'] === 'string' ? { reason: data['reason'] } : {}),
  };
}
