// The respond verb (`control.attention.respond`): an answer to a held request, followed to the
// adapter's `attention.answered`.
import type { CaptureLevel } from '../protocol/envelope.js';
import { command as buildCommand } from '../protocol/build.js';
import type { RelayConsumer } from './connection.js';
import { senderOf } from './connect.js';
import { acceptsOf, routeOf } from './roster.js';
import { sendAndFollow } from './settle.js';
import { ackRejected, relayRefused, surfaceData, type Sender } from './verb.js';
import { readDecidedBy, type DecidedBy } from '../machines/decided-by.js';
import type { AepEvent } from '../protocol/envelope.js';

/** D48: the first approver an ack names when it took an allow as the first of two. */
export const firstOfTwo = (ack: AepEvent): DecidedBy | undefined =>
  ack.data?.['status'] === 'pending-second'
    ? readDecidedBy({ decided_by: ack.data['first_by'] } as Record<string, unknown>)
    : undefined;

const RESPOND_TYPE = 'control.attention.respond';

export interface Answer {
  option?: string;
  text?: string;
  values?: Record<string, unknown>;
}

/** Free text and form values may carry words: they travel at redacted; a bare option id is metadata (aep-wire §2.2). */
export const captureFor = (a: Answer): CaptureLevel =>
  a.text !== undefined || a.values !== undefined ? 'redacted' : 'metadata';

export type RespondOutcome =
  | {
      outcome: 'answered';
      command: string;
      session: string;
      request: string;
      ack: string;
      answered: string;
      answer?: unknown;
    }
  /** `code`: the adapter's rule id (`not-pending`, `unknown-request`, `answer-invalid`, …) when it sent one. */
  | {
      outcome: 'rejected';
      command: string;
      session: string;
      request: string;
      ack: string;
      reason: string;
      detail?: string;
      code?: string;
    }
  | {
      outcome: 'refused';
      command?: string;
      session: string;
      request: string;
      code: string;
      detail?: string;
      by: 'relay' | 'roster';
    }
  | { outcome: 'timeout'; command: string; session: string; request: string; stage: 'ack' | 'answer'; ack?: string }
  /** D48: the request is risky; this allow was taken as the first of two, and a second, distinct identity must allow it too. */
  | { outcome: 'pending-second'; command: string; session: string; request: string; ack: string; first: DecidedBy }
  | { outcome: 'unreachable'; session: string; request: string; detail: string };

export async function sendResponse(
  consumer: RelayConsumer,
  f: Sender,
  req: { session: string; request: string; answer: Answer; timeoutMs: number; ackWindowMs?: number },
): Promise<RespondOutcome> {
  const { session, request } = req;
  const found = await routeOf(consumer, session);
  if ('code' in found)
    return { outcome: 'refused', session, request, code: found.code, detail: found.detail, by: 'roster' };
  if (!acceptsOf(found.entry)?.includes(RESPOND_TYPE)) {
    return {
      outcome: 'refused',
      session,
      request,
      code: 'unsupported',
      by: 'roster',
      detail: `${found.entry.agent ?? 'the claimant'} does not declare ${RESPOND_TYPE}`,
    };
  }
  // subject and cause both name the request (AEP-0004 §2, golden respond command).
  const cmd = buildCommand({ agent: senderOf(consumer, f) }, session, {
    type: RESPOND_TYPE,
    subject: request,
    cause: request,
    data: { answer: req.answer, ...surfaceData(f) },
    capture: captureFor(req.answer),
  });
  const { settlement, terminal: a } = await sendAndFollow(consumer, cmd, {
    filter: { session, cause: cmd.id, type: 'attention.answered' },
    settles: (e) => e.type === 'attention.answered',
    timeoutMs: req.timeoutMs,
    ackWindowMs: req.ackWindowMs,
    // D48: a first allow of a risky request is settled by its ack: nothing more comes until a second identity allows.
    afterAck: (ack) => firstOfTwo(ack) === undefined,
  });
  const base = { command: cmd.id, session, request };
  if (settlement.outcome === 'timeout') return { ...base, outcome: 'timeout', stage: 'ack' };
  if (settlement.outcome === 'refused') return { ...base, ...relayRefused(settlement) };
  if (settlement.outcome === 'rejected') return { ...base, ...ackRejected(settlement) };
  const first = firstOfTwo(settlement.ack);
  if (first !== undefined) return { ...base, outcome: 'pending-second', ack: settlement.ack.id, first };
  if (!a) return { ...base, outcome: 'timeout', stage: 'answer', ack: settlement.ack.id };
  return {
    ...base,
    outcome: 'answered',
    ack: settlement.ack.id,
    answered: a.id,
    ...(a.data?.['answer'] !== undefined ? { answer: a.data['answer'] } : {}),
  };
}
