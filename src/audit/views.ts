// What the steering fold gives out: each session's state as the session machine would hold it,
// each instruction's lifecycle, and the steering-rule breaches it found. The audit and the live
// boards (inspect, console, MCP) read these shapes.
import type { DecidedBy } from '../machines/decided-by.js';
export type SessionState = 'idle' | 'queued' | 'holding.permission' | 'holding.elicitation' | 'ended';

type InstructionStatus = 'unacknowledged' | 'pending' | 'delivered' | 'dropped' | 'rejected';

/** Where an event came from; the audit sets file and line, the live page leaves them out. */
export interface EventPlace {
  file?: string;
  line?: number;
}

export interface Sighting {
  id: string;
  time: string;
  place: EventPlace;
  epoch?: number;
  seq?: number;
}

export interface InstructionRecord {
  /** The command id: every later step of this instruction names it in `cause` (D4, D9, D10). */
  id: string;
  session: string;
  /** Vendor token from `x.{vendor}.control.instruct`, or from the terminal's type. */
  vendor?: string;
  /** The sender: the command's `agent` (AEP-0004 §2). */
  sender?: string;
  sentAt?: string;
  command?: Sighting;
  /** Text as carried on the stream (present only at capture redacted or above). */
  text?: string;
  /** D31: the delivery the sender chose, when it named one. */
  delivery?: string;
  accepted?: Sighting;
  rejected?: Sighting & { reason?: string; code?: string; detail?: string };
  /**
   * `moment`: the vendor moment whose reply carried it (D27), when the adapter names it; `lane`
   * and `ref`: the native lane that delivered it and the vendor's id for it (D30), absent for the hook lane;
   * `started`: it began the agent's turn (D43).
   */
  delivered?: Sighting & { queuedMs?: number; moment?: string; lane?: string; ref?: string; started?: boolean };
  /** A send_input's `input.sent`: the vendor took it (D28, D29). */
  sent?: Sighting;
  /** `decidedBy`: D46, who withdrew it. */
  dropped?: Sighting & { reason?: string; decidedBy?: DecidedBy };
  /** D44: the sender's edits, moves and promotions of it while it waited, in order; D46: who made each. */
  changes?: (Sighting & { kind: 'edited' | 'moved' | 'promoted'; decidedBy?: DecidedBy })[];
  status: InstructionStatus;
}

export interface HoldView {
  request: string;
  kind: string;
  prompt?: string;
  /** Option ids a permission offers (`allow`, `deny`), and a form's fields, as requested. */
  options?: string[];
  fields?: unknown[];
  since: string;
  /** D48: the rule that marks it risky, and the first allow it has (it needs a second approver). */
  risky?: { rule: string; why?: string };
  firstBy?: DecidedBy;
}

/** D44, D46: the last change made to one waiting instruction, and who made it. */
export interface QueueChangedBy {
  change: 'edited' | 'moved' | 'promoted';
  by: DecidedBy;
}

export interface SessionView {
  session: string;
  agent?: string;
  source?: string;
  state: SessionState;
  /** Pending instructions, FIFO by acceptance (D3) unless the sender moved them (D44). */
  queue: {
    id: string;
    sender?: string;
    acceptedAt: string;
    text?: string;
    delivery?: string;
    version?: number;
    /** D46: who last edited, moved or promoted it. */
    changedBy?: QueueChangedBy;
  }[];
  /** D43: a turn is running (run.started with no end after it); `state` idle says only that nothing waits. */
  running?: boolean;
  /** D44: the sender paused the queue; D46: who paused it. */
  paused?: boolean;
  pausedBy?: DecidedBy;
  holds: HoldView[];
  epoch?: number;
  seq?: number;
  events: number;
  startedAt?: string;
  endedAt?: string;
  updatedAt: string;
}

/** A steering-rule breach found by the fold; the audit adds where it happened. */
export interface Finding {
  rule: FindingRule;
  message: string;
  place: EventPlace;
  eventId: string;
  /** The instruction a `terminal-missing` finding is about. */
  instruction?: string;
}

type FindingRule =
  | 'ack-uncaused'
  | 'terminal-uncaused'
  | 'terminal-cause'
  | 'terminal-orphan'
  | 'terminal-duplicate'
  /** D32: an instruction delivered after its withdraw was accepted. */
  | 'delivered-after-withdraw'
  /** D43: a delivery said to start a turn, where a turn was running or another began meanwhile. */
  | 'start-beside-turn'
  /** D44: a delivery from the queue after its pause was acked and before its resume. */
  | 'delivered-while-paused'
  /** D44: a delivery out of the queue's order after a move was acked. */
  | 'delivered-out-of-order'
  /** D44: a delivery of a text version an acked edit had replaced. */
  | 'delivered-superseded'
  | 'terminal-unaccepted'
  | 'terminal-missing'
  | 'accepted-after-end'
  | 'capture-text';
