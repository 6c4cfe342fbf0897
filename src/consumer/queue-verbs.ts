// The sender's queue verbs (D44): `x.{vendor}.control.edit|move|promote|hold`, each settled by the
// event its adapter emits once the change took effect (`instruction.edited|moved|promoted`,
// `queue.held`), never by the ack alone, so every consumer shows a change only once it is settled.
import { GRANT_ATTR, WITHDRAW_GRANT, queueVerbType } from '../protocol/types.js';
import type { QueueVerb } from '../machines/command-inputs.js';
import type { RelayConsumer } from './connection.js';
import { result, undecided, type Explained } from './explain.js';
import { refusalSentence, type Voice } from './next-step.js';
import { steer } from './steer.js';
import { deliveryTimeout, surfaceData, verbRequest, type Sender, type Unsettled } from './verb.js';

export type QueueVerbOutcome =
  /** The change took effect: `event` is its settling event, `data` what it settled (version, position, paused). */
  | {
      outcome: 'changed';
      verb: QueueVerb;
      command: string;
      session: string;
      vendor: string;
      ack: string;
      event: string;
      data: Record<string, unknown>;
      instruction?: string;
    }
  | (Unsettled & { verb: QueueVerb; instruction?: string });

export interface QueueVerbRequest {
  session: string;
  verb: QueueVerb;
  /** The verb's payload: `instruction` and `text` (edit), `before` or `to` (move), `idle` (promote), `paused` (hold). */
  data: Record<string, unknown>;
  vendor?: string;
  /** A caller-chosen command id: a second send is a retry of the same verb (D4). */
  id?: string;
  /** Change another sender's instruction on this token's withdraw grant (D32). */
  granted?: boolean;
  timeoutMs: number;
  ackWindowMs?: number;
}

const SETTLES = /\.(?:instruction\.(?:edited|moved|promoted)|queue\.held)$/;

/** D44: sends one queue verb and follows it to the event that settles it. */
export async function sendQueueVerb(
  consumer: RelayConsumer,
  f: Sender,
  req: QueueVerbRequest,
): Promise<QueueVerbOutcome> {
  const o = await steer(consumer, f, verbRequest(req), {
    type: (vendor) => queueVerbType(vendor, req.verb),
    hint: 'the queue verbs come with instruct, and its adapter runs with steering off',
    steering: true,
    // D46: the surface the sender's software names (the console, MCP) goes with the verb, as withdraw's does.
    data: { ...req.data, ...surfaceData(f) },
    ...(req.granted ? { extensions: { [GRANT_ATTR]: WITHDRAW_GRANT } } : {}),
    settles: SETTLES,
    success: SETTLES,
    // Only an edit carries instruction text.
    capture: req.verb === 'edit' ? 'redacted' : 'metadata',
    read: (data) => ({ data }),
  });
  const named = typeof req.data['instruction'] === 'string' ? { instruction: req.data['instruction'] } : {};
  switch (o.outcome) {
    case 'delivered':
      return {
        outcome: 'changed',
        verb: req.verb,
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        ack: o.ack,
        event: o.delivered,
        data: (o as { data?: Record<string, unknown> }).data ?? {},
        ...named,
      };
    case 'dropped':
    case 'accepted':
      return { ...deliveryTimeout(o, named), verb: req.verb };
    default:
      return { ...o, verb: req.verb, ...named };
  }
}

/** What a settled change means, said plainly. */
function changedText(o: Extract<QueueVerbOutcome, { outcome: 'changed' }>): string {
  const it = `instruction ${o.instruction ?? ''}`;
  switch (o.verb) {
    case 'edit':
      return `Edited in place: ${it} now waits with text version ${String(o.data['version'])}, in the same place.`;
    case 'move':
      return `Moved: ${it} is now number ${String(o.data['position'])} in session ${o.session}'s queue.`;
    case 'promote':
      return typeof o.data['lane'] === 'string'
        ? `Promoted: ${it} was handed to the ${o.data['lane']} lane as a steer.`
        : `Promoted: ${it} goes in as a steer at the running turn's next moment.`;
    case 'hold':
      return o.data['paused'] === true
        ? `Paused: nothing from session ${o.session}'s queue is delivered until it is resumed (a steer still is).`
        : `Resumed: session ${o.session}'s queue is delivered again, in its order, from the next turn.`;
  }
}

/** D44: a queue verb's outcome, one sentence in the consumer's voice, with the stream facts. */
export function explainQueueVerb(o: QueueVerbOutcome, voice: Voice): Explained {
  const facts: Record<string, unknown> = { outcome: o.outcome, verb: o.verb, session: o.session };
  if (o.instruction !== undefined) facts['instruction'] = o.instruction;
  if ('command' in o && o.command !== undefined) facts['command_id'] = o.command;
  if ('ack' in o && o.ack !== undefined) facts['ack_id'] = o.ack;
  switch (o.outcome) {
    case 'changed':
      facts['event_id'] = o.event;
      Object.assign(facts, o.data);
      return result(changedText(o), facts);
    case 'rejected': {
      facts['reason'] = o.reason;
      if (o.code !== undefined) facts['code'] = o.code;
      if (o.detail !== undefined) facts['detail'] = o.detail;
      const ctx = { session: o.session, vendor: o.vendor, ...(o.detail === undefined ? {} : { detail: o.detail }) };
      return result(`Not changed (${o.code ?? o.reason}): ${refusalSentence(o.code, voice, ctx)}.`, facts, true);
    }
    case 'timeout':
      facts['stage'] = o.stage;
      return result(`No answer in time from session ${o.session}; ${voice.queue(o.session)}.`, facts, true);
    default:
      return undecided(o, facts, voice);
  }
}
