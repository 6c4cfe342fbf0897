// The one definition of an AEP 0.1 event (AEP-0001 §5): sixteen context attributes plus `data`.
// Everything in this project that builds, checks, stores or reads an event uses these types.

export const AEP_VERSION = '0.1' as const;

export const SEVERITIES = ['debug', 'info', 'notice', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

export const CAPTURE_LEVELS = ['none', 'metadata', 'redacted', 'full'] as const;
export type CaptureLevel = (typeof CAPTURE_LEVELS)[number];

/** Extension attribute values are scalars only (AEP-0001 §5.4). */
export type ExtensionValue = string | number | boolean;

/** JSON payload of an event: always an object when present. */
export type EventData = Record<string, unknown>;

/** Core context attributes, in the order of AEP-0001 §5 (1–16), then `data` (17). */
export const CORE_ATTRIBUTES = [
  'aep',
  'id',
  'type',
  'subject',
  'time',
  'source',
  'agent',
  'session',
  'run',
  'step',
  'seq',
  'epoch',
  'cause',
  'traceparent',
  'severity',
  'capture',
  'data',
] as const;

export interface AepEvent<T extends string = string, D extends EventData = EventData> {
  aep: typeof AEP_VERSION;
  id: string;
  type: T;
  subject?: string;
  time: string;
  source: string;
  agent: string;
  session?: string;
  run?: string;
  step?: string;
  seq?: number;
  epoch?: number;
  cause?: string;
  traceparent?: string;
  severity?: Severity;
  capture?: CaptureLevel;
  data?: D;
  /** Extension attributes: `[a-z0-9]{1,20}`, scalar values. */
  [extension: string]: unknown;
}

/** A sequenced session event: carries `session` and `seq` (AEP-0001 §5.2). */
export type SessionEvent<T extends string = string, D extends EventData = EventData> = AepEvent<T, D> & {
  session: string;
  seq: number;
};

/** A command (AEP-0004 §2): carries `session`, never `seq`; `agent` is the sender. */
export type AepCommand<T extends string = string, D extends EventData = EventData> = AepEvent<T, D> & {
  session: string;
  seq?: never;
};

export const severityRank = (s: Severity | undefined): number => SEVERITIES.indexOf(s ?? 'info');
export const captureRank = (c: CaptureLevel | undefined): number => CAPTURE_LEVELS.indexOf(c ?? 'metadata');

/** Dedupe key for `(source, id)` (AEP-0001 §5.3: ids are unique per emitter, not globally). */
export const dedupeKey = (e: Pick<AepEvent, 'source' | 'id'>): string => `${e.source}\u0000${e.id}`;
