// What every relay store offers the one relay core: the seam between the core and its stores
// (the SQLite store in store.ts, the JetStream store in nats/). The SQLite store answers at once;
// a networked one answers with promises, and may add a fabric that joins several relay nodes.
import type { AuditPage, AuditPart } from './audit-rows.js';
import type { Position } from './positions.js';
import type { StoreFaults } from './store-fault.js';
import type { Fabric } from './types.js';

export type { Position } from './positions.js';

/** What the store needs of an event; `epoch`/`seq` absent for seq-less session events. */
export interface Admission {
  session: string;
  source: string;
  id: string;
  epoch?: number;
  seq?: number;
  /** The event text exactly as it will be served (one line). */
  raw: string;
}

export interface Replay {
  /** Set when the requested position predates what is still held (AEP-0003 §7). */
  exhausted?: Position;
  /** Raw event texts in session order. */
  items: string[];
}

/** A value now (the SQLite store) or later (a networked store such as JetStream). */
export type Maybe<T> = T | Promise<T>;

/**
 * How long socket events wait to share a store write. An emitter sending a few events every
 * millisecond otherwise costs a write (a commit, a message to the writer thread) per turn, and
 * a command arriving meanwhile waits behind it: with one per turn the command round trip under
 * such a stream was 2-3x the one without it. Nothing waits for these writes but reads and
 * commands, which flush first.
 */
export const GROUP_WRITE_MS = 5;

/**
 * What the relay core needs of a history store (the seam between the one routing and
 * authorization core and its stores). The SQLite store answers synchronously; a networked one
 * answers with promises, and may add a fabric that joins several relay nodes.
 */
export interface SessionStore {
  readonly bufferCap: number;
  /** Names the store in the relay's log line (a file, `:memory:`, or an engine address). */
  readonly path: string;
  /**
   * One result per admission: false for a redelivery of a held `(source, id)`. `now`: the
   * caller waits on this write; a store that batches its writes does not hold it back.
   */
  admitAll(list: readonly Admission[], opts?: { now?: boolean }): Maybe<boolean[]>;
  replay(session: string, after?: Position): Maybe<Replay>;
  /**
   * What is already committed for a session, read at once, for a store whose `replay` may answer
   * later (the roster's summary of a session it meets first after a restart). Absent otherwise.
   */
  committed?(session: string): readonly string[];
  /** Sessions held, least recently written first. */
  sessionIds(): Maybe<string[]>;
  /**
   * Whether a position at or after `pos` of `session` is held already, answered at once from
   * what this process knows (a refused event there is no news to the sender's resend, D23).
   */
  holdsFrom?(session: string, pos: Position): boolean;
  counts(): { sessions: number; events: number };
  /** The engine's state for `/healthz`. */
  health(): StoreHealth;
  close(): Maybe<void>;
  /** Present when the store joins several relay nodes (claims, commands, live copies). */
  readonly fabric?: Fabric;
  /**
   * How long socket events may wait to share one write (the core's group write). A store whose
   * write is local takes `GROUP_WRITE_MS`; one whose write carries events to other nodes
   * (NATS: copies and acks cross nodes through it) leaves this out and is written every turn.
   */
  readonly groupWriteMs?: number;
  /** D47: a store that signs checkpoints of its chains hands each committed one here. */
  onCheckpoint?(listener: (raw: string) => void): void;
  /** D47: signs the heads no checkpoint covers yet (an idle relay's last rows). */
  checkpointIdle?(): Maybe<boolean>;
  /** D47: a page of the rows, places, checkpoints or heads a remote verify reads; undefined: a bad cursor. */
  auditPage?(part: AuditPart, after: string | null): Maybe<AuditPage | undefined>;
}

export interface StoreHealth {
  engine: string;
  ok: boolean;
  [k: string]: unknown;
}

export const DEFAULT_BUFFER = 10_000;
export const DEFAULT_MAX_SESSIONS = 500;

/** A store that reports its faults (D38): what the core and the server take. */
export type FaultAwareStore = SessionStore & StoreFaults;
