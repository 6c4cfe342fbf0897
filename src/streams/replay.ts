// Rebuilds every session actor from the adapter's own log (D11) through the live stepping path
// with every sink muted: same queues in the same order with their accept times, same dedupe
// records, recorded acks restored byte for byte, and each session's next epoch remembered.
import type { AepEvent } from '../protocol/envelope.js';
import { isCommandType } from '../protocol/types.js';
import type { ActorHost } from './actor-host.js';
import type { LogRecord } from './log.js';

export interface ReplaySummary {
  inputs: number;
  events: number;
  sessions: number;
  /** Each session's last sequenced event in the log: redelivered, it re-claims the session (aep-wire §4.4). */
  lastEvents: Map<string, AepEvent>;
}

export function replayInto(host: ActorHost, records: readonly LogRecord[]): ReplaySummary {
  let inputs = 0;
  let events = 0;
  const lastEvents = new Map<string, AepEvent>();
  for (const r of records) {
    if (r.k === 'ev') {
      host.restoreEvent(r.e, r.ack);
      events += 1;
      if (r.e.session !== undefined && r.e.seq !== undefined && !isCommandType(r.e.type)) lastEvents.set(r.e.session, r.e);
    } else if (r.k === 'in') {
      host.replayInput(r.s, r.i);
      inputs += 1;
    }
    // `flight` records are the D12 journal for readers of the log; the replayed inputs rebuild
    // the same in-flight set, which recover() then reports as delivery-unknown.
  }
  return { inputs, events, sessions: host.sessionKeys().length, lastEvents };
}
