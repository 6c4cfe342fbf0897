// What still waits in one session's queue (D32), read from the session's history on the relay:
// instructions the adapter accepted that are neither delivered nor dropped. The text is shown
// only where the token is served it (redacted-class, D20); the relay drops it below.
import type { AepEvent } from '../protocol/envelope.js';
import { endedInstruction } from '../protocol/instruction-end.js';
import type { RelayConsumer } from './connection.js';
import { sessionHistory } from './history.js';

export interface WaitingInstruction {
  id: string;
  sender?: string;
  /** D31: absent on the command means `moment`. */
  delivery: string;
  sentAt: string;
  ageMs: number;
  text?: string;
}

const INSTRUCT = /^x\.[a-z0-9_-]+\.control\.instruct$/;

/** The accepted, unsettled instructions among `events`, oldest first. */
function waitingOf(events: readonly AepEvent[], now: number): WaitingInstruction[] {
  const sent = new Map<string, AepEvent>();
  const accepted = new Set<string>();
  const settled = new Set<string>();
  for (const e of events) {
    if (INSTRUCT.test(e.type)) sent.set(e.id, e);
    else if (e.type === 'control.accepted' && typeof e.cause === 'string') accepted.add(e.cause);
    else {
      const ended = endedInstruction(e);
      if (ended !== undefined) settled.add(ended);
    }
  }
  const out: WaitingInstruction[] = [];
  for (const [id, e] of sent) {
    if (!accepted.has(id) || settled.has(id)) continue;
    const delivery = e.data?.['delivery'];
    const text = e.data?.['text'];
    out.push({
      id,
      delivery: typeof delivery === 'string' ? delivery : 'moment',
      sentAt: e.time,
      ageMs: Math.max(0, now - Date.parse(e.time)),
      ...(typeof e.agent === 'string' ? { sender: e.agent } : {}),
      ...(typeof text === 'string' ? { text } : {}),
    });
  }
  return out;
}

/** Queue history kept per session; older instructions have settled long before (D3 caps the queue at 20). */
const HISTORY = 2000;

export async function sessionQueue(
  consumer: RelayConsumer,
  session: string,
  now: () => number = Date.now,
): Promise<WaitingInstruction[]> {
  return waitingOf(await sessionHistory(consumer, { session, limit: HISTORY }), now());
}

/** `--last`: the sender's newest instruction still waiting, if any. */
export const newestOf = (waiting: readonly WaitingInstruction[], sender: string): WaitingInstruction | undefined =>
  waiting.filter((w) => w.sender === sender).at(-1);
