// Rebuilds every session from the adapter's own log (D11) with every sink muted: same queues in
// the same order with their accept times, same dedupe records, recorded acks restored byte for
// byte, and each session's next epoch remembered. Records are taken one at a time as they are
// read, so a start never holds the whole log at once.
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

const EV_PREFIX = '{"k":"ev","e":';
/** `,"n":` + `,"p":"` + 64 hex + `"}`, around the digits of `n`. */
const CHAIN_TAIL = 5 + 6 + 64 + 2;

/**
 * The logged text of an ack record's event, when the line is exactly what the log's encoder
 * writes (`{"k":"ev","e":…,"ack":…}`); undefined otherwise, and the event is serialised again.
 */
function eventText(r: Extract<LogRecord, { k: 'ev' }>, ack: string, line: string | undefined): string | undefined {
  if (line === undefined || !line.startsWith(EV_PREFIX)) return undefined;
  // The chain's keys close the line (D47): the ack is what comes before them.
  const linked = r.p !== undefined && r.n !== undefined;
  if (linked) line = `${line.slice(0, line.length - CHAIN_TAIL - String(r.n).length)}}`;
  const tail = `,"ack":${JSON.stringify(ack)}}`;
  if (!line.endsWith(tail) || Object.keys(r).length !== (linked ? 5 : 3)) return undefined;
  const text = line.slice(EV_PREFIX.length, line.length - tail.length);
  // Copied: the line may be a view into the whole file's text, which a kept slice would keep alive.
  return text.startsWith('{') && text.endsWith('}') ? structuredClone(text) : undefined;
}

/** Takes a log's records in order, each with its line when the reader has it; `summary()` once done. */
export class LogReplay {
  private inputs = 0;
  private events = 0;
  private readonly lastEvents = new Map<string, AepEvent>();

  constructor(private readonly host: ActorHost) {}

  record(r: LogRecord, line?: string): void {
    if (r.k === 'ev') {
      const e = r.e;
      this.host.restoreEvent(e, r.ack, r.ack === undefined ? undefined : eventText(r, r.ack, line));
      this.events += 1;
      if (e.session !== undefined && e.seq !== undefined && !isCommandType(e.type)) this.lastEvents.set(e.session, e);
    } else if (r.k === 'in') {
      this.host.replayInput(r.s, r.i);
      this.inputs += 1;
    }
    // `flight` records are the D12 journal for readers of the log; the replayed inputs rebuild
    // the same in-flight set, which recover() then reports as delivery-unknown.
  }

  summary(): ReplaySummary {
    return {
      inputs: this.inputs,
      events: this.events,
      sessions: this.host.sessionKeys().length,
      lastEvents: this.lastEvents,
    };
  }
}

export function replayInto(host: ActorHost, records: readonly LogRecord[]): ReplaySummary {
  const replay = new LogReplay(host);
  for (const r of records) replay.record(r);
  return replay.summary();
}
