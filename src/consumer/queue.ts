// What still waits in one session's queue (D32, D44: in its order, with each text's version), read from the session's history on the relay:
// instructions the adapter accepted that are neither delivered nor dropped. The text is shown
// only where the token is served it (redacted-class, D20); the relay drops it below.
import type { AepEvent } from '../protocol/envelope.js';
import { endedInstruction } from '../protocol/instruction-end.js';
import type { RelayConsumer } from './connection.js';
import { sessionHistory } from './history.js';

export interface WaitingInstruction {
  id: string;
  sender?: string;
  /** D31: absent on the command means `moment`; D44 a promoted one is `steer`. */
  delivery: string;
  sentAt: string;
  ageMs: number;
  text?: string;
  /** D44: 1 in the queue's order, front first. */
  position: number;
  /** D44: the text's version: 1, raised by each edit the adapter acked. */
  version: number;
}

/** A session's queue as its events settled it: what waits, in order, and whether it is paused (D44). */
export interface QueueState {
  waiting: WaitingInstruction[];
  paused: boolean;
}

const INSTRUCT = /^x\.[a-z0-9_-]+\.control\.instruct$/;
const EDIT = /^x\.[a-z0-9_-]+\.control\.edit$/;
const EDITED = /^x\.[a-z0-9_-]+\.instruction\.edited$/;
const MOVED = /^x\.[a-z0-9_-]+\.instruction\.moved$/;
const PROMOTED = /^x\.[a-z0-9_-]+\.instruction\.promoted$/;
const HELD = /^x\.[a-z0-9_-]+\.queue\.held$/;

/** D44: `id` moved to `position` (1 is the front) among those still waiting. */
function placed(order: string[], id: string, position: number): string[] {
  const rest = order.filter((x) => x !== id);
  rest.splice(Math.max(0, Math.min(rest.length, position - 1)), 0, id);
  return rest;
}

/** The accepted, unsettled instructions among `events`, in the queue's order, and the pause. */
function queueOf(events: readonly AepEvent[], now: number): QueueState {
  const sent = new Map<string, AepEvent>();
  const edits = new Map<string, string>();
  const accepted = new Set<string>();
  const settled = new Set<string>();
  const changed = new Map<string, { version?: number; text?: string; delivery?: string }>();
  let order: string[] = [];
  let paused = false;
  for (const e of events) {
    const subject = typeof e.subject === 'string' ? e.subject : undefined;
    if (INSTRUCT.test(e.type)) sent.set(e.id, e);
    else if (EDIT.test(e.type) && typeof e.data?.['text'] === 'string') edits.set(e.id, e.data['text']);
    else if (e.type === 'control.accepted' && typeof e.cause === 'string') {
      accepted.add(e.cause);
      if (sent.has(e.cause) && !order.includes(e.cause)) order.push(e.cause);
    } else if (EDITED.test(e.type) && subject !== undefined) {
      const text = typeof e.cause === 'string' ? edits.get(e.cause) : undefined;
      const version = e.data?.['version'];
      changed.set(subject, {
        ...changed.get(subject),
        ...(typeof version === 'number' ? { version } : {}),
        ...(text === undefined ? {} : { text }),
      });
    } else if (MOVED.test(e.type) && subject !== undefined && typeof e.data?.['position'] === 'number')
      order = placed(order, subject, e.data['position']);
    else if (PROMOTED.test(e.type) && subject !== undefined) {
      changed.set(subject, { ...changed.get(subject), delivery: 'steer' });
      order = placed(order, subject, 1);
    } else if (HELD.test(e.type)) paused = e.data?.['paused'] === true;
    else {
      const ended = endedInstruction(e);
      if (ended !== undefined) {
        settled.add(ended);
        order = order.filter((x) => x !== ended);
      }
    }
  }
  const waiting: WaitingInstruction[] = [];
  for (const id of order) {
    const e = sent.get(id);
    if (e === undefined || settled.has(id)) continue;
    const c = changed.get(id) ?? {};
    const delivery = c.delivery ?? e.data?.['delivery'];
    const text = c.text ?? e.data?.['text'];
    waiting.push({
      id,
      delivery: typeof delivery === 'string' ? delivery : 'moment',
      sentAt: e.time,
      ageMs: Math.max(0, now - Date.parse(e.time)),
      position: waiting.length + 1,
      version: c.version ?? 1,
      ...(typeof e.agent === 'string' ? { sender: e.agent } : {}),
      ...(typeof text === 'string' ? { text } : {}),
    });
  }
  return { waiting, paused };
}

/** Queue history kept per session; older instructions have settled long before (D3 caps the queue at 20). */
const HISTORY = 2000;

export async function sessionQueue(
  consumer: RelayConsumer,
  session: string,
  now: () => number = Date.now,
): Promise<WaitingInstruction[]> {
  return (await sessionQueueState(consumer, session, now)).waiting;
}

/** D44: what waits, in the queue's order with position and version, and whether the queue is paused. */
export async function sessionQueueState(
  consumer: RelayConsumer,
  session: string,
  now: () => number = Date.now,
): Promise<QueueState> {
  return queueOf(await sessionHistory(consumer, { session, limit: HISTORY }), now());
}

/** `--last`: the sender's newest instruction still waiting, if any. */
export const newestOf = (waiting: readonly WaitingInstruction[], sender: string): WaitingInstruction | undefined =>
  waiting.filter((w) => w.sender === sender).at(-1);
