// What the steering fold keeps of one session as events arrive (commands, acks, terminals, ends),
// and how it orders what it saw: verdicts are taken later (resolve.ts), so arrival order across
// files never decides one.
import type { AepEvent } from '../protocol/envelope.js';
import { RESUME_WINDOW_ATTR } from '../protocol/types.js';
import type { EventPlace, HoldView, Sighting } from './views.js';
import { readDecidedBy, type DecidedBy } from '../machines/decided-by.js';

// A send_input (D28, D29) is followed like an instruct: `input.sent` is its delivery, or only a
// step towards it where the vendor also reports `input.consumed` (or the session drops it unread).
export const INSTRUCT = /^x\.([a-z0-9_-]+)\.control\.(?:instruct|send_input)$/;
export const DELIVERED = /^x\.([a-z0-9_-]+)\.(?:instruction\.delivered|input\.consumed)$/;
export const SENT = /^x\.([a-z0-9_-]+)\.input\.sent$/;
export const DROPPED = /^x\.([a-z0-9_-]+)\.instruction\.dropped$/;
/** A start moment reopened an ended session; a reopened session's later end (D6, D10). */
export const REOPENED = /^x\.[a-z0-9_-]+\.session\.reopened$/;
export const CLOSED = /^x\.[a-z0-9_-]+\.session\.closed$/;

export interface AckRecord {
  sighting: Sighting;
  accepted: boolean;
  reason?: string;
  detail?: string;
  /** The stable machine code beside `reason` (docs/errors.md). */
  code?: string;
}

export interface TerminalRecord {
  sighting: Sighting;
  kind: 'delivered' | 'dropped' | 'sent';
  vendor: string;
  cause?: string;
  queuedMs?: number;
  moment?: string;
  lane?: string;
  ref?: string;
  reason?: string;
  /** D43: the delivery began the agent's turn. */
  started?: boolean;
  /** D46: who withdrew it. */
  decidedBy?: DecidedBy;
  /** D44: the text version the delivery carried (absent: 1). */
  version?: number;
}

/** An adapter's settled queue change (`x.{vendor}.instruction.edited|moved|promoted`, `x.{vendor}.queue.held`). */
const QUEUE_CHANGE = /^x\.[a-z0-9_-]+\.(?:instruction\.(edited|moved|promoted)|queue\.(held))$/;

export interface QueueChange {
  kind: 'edited' | 'moved' | 'promoted' | 'held';
  subject?: string;
  /** The verb that made it: an edit's command carries the new text. */
  cause?: string;
  data: Record<string, unknown>;
  sighting: Sighting;
  /** D46: who made the change. */
  decidedBy?: DecidedBy;
}

/** D44: the queue change an event settles, or undefined when it settles none. */
export function queueChangeOf(e: AepEvent, sighting: Sighting): QueueChange | undefined {
  const m = QUEUE_CHANGE.exec(e.type);
  if (!m) return undefined;
  const by = readDecidedBy(e.data);
  return {
    ...(by === undefined ? {} : { decidedBy: by }),
    kind: (m[1] ?? m[2]) as QueueChange['kind'],
    data: e.data ?? {},
    sighting,
    ...(typeof e.subject === 'string' ? { subject: e.subject } : {}),
    ...(typeof e.cause === 'string' ? { cause: e.cause } : {}),
  };
}

export interface Mark {
  kind: 'end' | 'reopen';
  sighting: Sighting;
  /** The end event's `resumewindowms` attribute: instructions may be accepted until end + window (D25). */
  windowMs?: number;
}

export interface SessionRecord {
  session: string;
  agent?: string;
  source?: string;
  epoch?: number;
  seq?: number;
  events: number;
  startedAt?: string;
  ended?: Sighting;
  /** Every end (session.ended, x.*.session.closed) and reopening, as seen; an end states its D25 window (D36). */
  marks: Mark[];
  updatedAt: string;
  holds: Map<string, HoldView>;
  /** Every command seen for this session, by id. */
  commands: Map<string, { event: AepEvent; sighting: Sighting }>;
  /** Acks by command id (cause), in arrival order; more than one is a finding. */
  acks: Map<string, AckRecord[]>;
  ackIds: Map<string, string>;
  terminals: TerminalRecord[];
  /** The agent's turns as the stream shows them: each run's start and end, in arrival order (D43). */
  runs: { kind: 'start' | 'end'; sighting: Sighting }[];
  /** D44: the adapter's settled queue changes (edits, moves, promotions, pauses), as seen. */
  changes: QueueChange[];
}

export const sightingOf = (e: AepEvent, place: EventPlace): Sighting => {
  const s: Sighting = { id: e.id, time: e.time, place };
  if (typeof e.epoch === 'number') s.epoch = e.epoch;
  if (typeof e.seq === 'number') s.seq = e.seq;
  return s;
};

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `(epoch, seq)` order of two sightings from one emitter; undefined when either lacks a seq. */
const after = (a: Sighting, b: Sighting): boolean | undefined => {
  if (a.seq === undefined || b.seq === undefined) return undefined;
  const ea = a.epoch ?? 0;
  const eb = b.epoch ?? 0;
  return ea !== eb ? ea > eb : a.seq > b.seq;
};

/** A session the fold has not seen before, first seen at `time`. */
export const newSessionRecord = (session: string, time: string): SessionRecord => ({
  session,
  events: 0,
  updatedAt: time,
  holds: new Map(),
  commands: new Map(),
  acks: new Map(),
  ackIds: new Map(),
  terminals: [],
  marks: [],
  runs: [],
  changes: [],
});

export const endMark = (e: AepEvent, sighting: Sighting): Mark => {
  const w = e[RESUME_WINDOW_ATTR];
  return typeof w === 'number' && w > 0 ? { kind: 'end', sighting, windowMs: w } : { kind: 'end', sighting };
};

/** The latest end or reopening (before `before`, when given), in stream order. */
export function lastMark(s: SessionRecord, before?: Sighting): Mark | undefined {
  let last: Mark | undefined;
  for (const m of s.marks) {
    if (before !== undefined && after(m.sighting, before) !== false) continue;
    if (last === undefined || order(m.sighting, last.sighting) > 0) last = m;
  }
  return last;
}

export function order(a: Sighting, b: Sighting): number {
  if (a.seq !== undefined && b.seq !== undefined) {
    const ea = a.epoch ?? 0;
    const eb = b.epoch ?? 0;
    return ea !== eb ? ea - eb : a.seq - b.seq;
  }
  return a.time < b.time ? -1 : a.time > b.time ? 1 : 0;
}
