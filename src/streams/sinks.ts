// Sinks: where stamped events and log records go. A network sink never throws into the
// pipeline; the log sink does (it is the source of truth, D11).
import { SteeringError, type AepEvent } from '../protocol/index.js';
import type { EventLog, LogRecord } from './log.js';
import type { RelayLink } from './relay-link.js';

export type Sink = (e: AepEvent) => void;

/** Commits a step's records as one batch; resolves once durable, rejects LOG_WRITE_FAILED. */
export const toEventLog = (log: EventLog) => (records: readonly LogRecord[]): Promise<void> => log.commit(records);

/** Hands events to the relay link; its `send` queues and never waits for the network. */
export const toRelay = (link: RelayLink, onError: (e: SteeringError) => void): Sink => (e) => {
  try {
    link.send(e);
  } catch (cause) {
    onError(new SteeringError('RELAY_UNREACHABLE', 'relay link refused an event', { cause }));
  }
};
