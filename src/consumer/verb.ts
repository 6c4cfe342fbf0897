// What every steering verb of the consumer core shares: who sends, what a verb is (its command
// type, payload and the events that settle it), the request an instruction-like verb takes and
// the outcomes a verb ends in when it does not settle its own way.
import { createHash } from 'node:crypto';
import type { AepEvent, CaptureLevel } from '../protocol/envelope.js';

/** Who the commands name as their sender (`agent` of the command, AEP-0004 §2). */
export interface Sender {
  sender: string;
  /**
   * D46: the surface the verb is sent from (`console`, `link`, `mcp`); absent, the adapter counts
   * it as `cli`. Each face sets its own; no face takes it from what it is asked.
   */
  surface?: 'cli' | 'console' | 'link' | 'mcp';
  /** D46: the paired device the face authenticated (the console's device routes), when one asked. */
  device?: string;
}

/** The `surface` and `device` fields of a settling verb's data, when the face names them (D46). */
export const surfaceData = (f: Sender): { surface?: string; device?: string } => ({
  ...(f.surface === undefined ? {} : { surface: f.surface }),
  ...(f.device === undefined ? {} : { device: f.device }),
});

/** How a steering verb ends when it does not settle its own way (instruct, withdraw, cancel). */
export type Unsettled =
  /** The session's actor decided against it: its ack says why. */
  | {
      outcome: 'rejected';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      reason: string;
      code?: string;
      detail?: string;
    }
  /** Not sent, or not routed: the roster or the relay said no before any session decided. */
  | {
      outcome: 'refused';
      command?: string;
      session: string;
      vendor?: string;
      code: string;
      detail?: string;
      by: 'relay' | 'roster';
      /** The claimant does not declare the steering verbs (D5): its adapter runs with steering off. */
      steeringOff?: boolean;
    }
  | {
      outcome: 'timeout';
      command: string;
      session: string;
      vendor: string;
      stage: 'ack' | 'delivery';
      ack?: string;
      sent: number;
    }
  | { outcome: 'unreachable'; session: string; detail: string };

export type InstructOutcome =
  | {
      outcome: 'delivered';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      delivered: string;
      queuedMs?: number;
      at?: string;
      moment?: string;
      delivery?: string;
      /** D43: it began the turn (true), or a start went into a turn begun meanwhile (false). */
      started?: boolean;
      /** The vendor's own receipt (the turn it began, a message id). */
      ref?: string;
    }
  | {
      outcome: 'dropped';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      dropped: string;
      reason?: string;
      at?: string;
    }
  | { outcome: 'accepted'; command: string; session: string; vendor: string; ack: string }
  | Unsettled;

export interface InstructRequest {
  session: string;
  text: string;
  vendor?: string;
  /** D31: `moment` (the default), `steer` or `queue`; absent sends none. */
  delivery?: string;
  /** D43: what to do while no turn runs: `refuse`, `wait` or `start`; absent sends none. */
  idle?: string;
  noWait?: boolean;
  /**
   * A caller-chosen command id (see `commandIdFor`): a second send with it is a retry of the
   * same command, deduped by the adapter (D4), and settles from the session's history.
   */
  id?: string;
  /** Whole local wait, ack and delivery together. */
  timeoutMs: number;
  /** Ack window per attempt (AEP-0004 §3 default 10 s); a retry resends the same command. */
  ackWindowMs?: number;
  retries?: number;
  /**
   * Called once the ack arrived, before waiting for the delivery, with what the roster said just
   * before sending: the instructions already queued ahead of this one, and whether the session
   * had ended (a resume window keeps its queue, D25).
   */
  onAccepted?: (info: { command: string; ack: AepEvent; ahead?: number; ended?: boolean }) => void;
  /** Called with the command id just before it is sent. */
  onSending?: (info: { command: string; type: string; vendor: string }) => void;
}

/**
 * A stable command id for an idempotency key: the same sender, session and key always give the
 * same id, so a repeated call is a retry of one command rather than a second instruction.
 */
export function commandIdFor(sender: string, session: string, key: string): string {
  return `idem-${createHash('sha256').update(`${sender}\n${session}\n${key}`).digest('hex').slice(0, 32)}`;
}

/** One steering verb as the core sends it: its command type, hint, payload and settling events. */
export interface Verb {
  type: (vendor: string) => string;
  /** Why a claimant may not declare the verb, said after "does not declare …". */
  hint: string;
  /** The verb is one of the steering verbs that D5's opt-in switches on. */
  steering?: boolean;
  data: Record<string, unknown>;
  /** The events caused by the command that settle it, and which of them mean it arrived. */
  settles: RegExp;
  success: RegExp;
  /** The command's capture; instruction text makes it `redacted` (the default). */
  capture?: CaptureLevel;
  /** The run the command is about (control.cancel). */
  run?: string;
  /** Extension attributes of the command (a withdraw's grant, D32). */
  extensions?: Record<string, string>;
  /**
   * The event types that settle it, where a later command can end it naming it as `subject` (a
   * withdraw's drop, D32): the sender then follows those types on the session, not only its own
   * `cause`, on one subscription.
   */
  endTypes?: (vendor: string) => string[];
  /** What the verb's outcome also carries from the event that delivered it. */
  read?: (data: Record<string, unknown>) => Record<string, unknown>;
}

/** The relay's refusal of a sent command, as the outcome says it (after the outcome's ids). */
export const relayRefused = (s: { code: string; detail?: string }) => ({
  outcome: 'refused' as const,
  code: s.code,
  by: 'relay' as const,
  ...(s.detail ? { detail: s.detail } : {}),
});

/**
 * The adapter's rejection of a sent command, as the outcome says it: its ack, its reason, and the
 * stable code (docs/errors.md) and sentence when the adapter sent them.
 */
export const ackRejected = (s: { ack: { id: string }; reason: string; code?: string; detail?: string }) => ({
  outcome: 'rejected' as const,
  ack: s.ack.id,
  reason: s.reason,
  ...(s.code === undefined ? {} : { code: s.code }),
  ...(s.detail ? { detail: s.detail } : {}),
});

/**
 * The timeout of a verb that settles on its success event alone (cancel, withdraw): acked, but
 * no such event in time. `extra` is what the verb's outcomes name besides the ids.
 */
export const deliveryTimeout = <E extends object>(
  o: { command: string; session: string; vendor: string; ack: string },
  extra: E,
) => ({
  outcome: 'timeout' as const,
  command: o.command,
  session: o.session,
  vendor: o.vendor,
  ...extra,
  stage: 'delivery' as const,
  ack: o.ack,
  sent: 1,
});

/** The steer request a verb on a named session sends: no text of its own, a caller's id kept (D4). */
export const verbRequest = (req: {
  session: string;
  timeoutMs: number;
  vendor?: string;
  id?: string;
  ackWindowMs?: number;
}) => ({
  session: req.session,
  text: '',
  timeoutMs: req.timeoutMs,
  ...(req.vendor ? { vendor: req.vendor } : {}),
  ...(req.id ? { id: req.id } : {}),
  ...(req.ackWindowMs === undefined ? {} : { ackWindowMs: req.ackWindowMs }),
});
