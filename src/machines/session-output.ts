// What a session actor announces: outputs named for the AEP type they become, or for the hook
// reply, journal record or vendor call they ask of the adapter.
import type { AepCommand, Rejection } from '../protocol/index.js';
import type { AttentionRequest, Decision, ToolsAtStop } from './session-context.js';
import type { DecidedBy } from './decided-by.js';

export type DropReason = 'session-ended' | 'expired' | 'delivery-unknown' | 'send-failed' | 'turn-ended' | 'withdrawn';

/** `session.ended.reason`, the enum of the AEP session.ended schema; vendor reasons collapse into it. */
export type EndReason = 'normal' | 'error' | 'timeout' | 'killed' | 'compaction';

export type SessionOutput =
  /** `pendingSecond`: D48, a first allow of a risky request, taken and waiting for a second identity's. */
  | { type: 'control.accepted'; cause: string; key: string; pendingSecond?: DecidedBy; subject?: string }
  | { type: 'control.rejected'; cause: string; key: string; rejection: Rejection }
  /** A redelivered command: the recorded ack goes out again unchanged (AEP-0004 §3, D4). */
  | { type: 'control.reack'; cause: string; key: string }
  | {
      type: 'instruction.delivered';
      eventType: string;
      cause: string;
      queuedMs: number;
      moment?: string;
      delivery?: string;
      /** D30: the native lane that carried it, and the vendor's receipt. */
      lane?: string;
      ref?: string;
      /** D43: it began the turn (true), or a start went into a turn begun meanwhile (false). */
      started?: boolean;
      /** D44: the text version it carried, when an edit raised it past 1. */
      version?: number;
      /** D50: taking it moved the running shell command to the background. */
      backgrounded?: { command: string };
    }
  /**
   * D44: a queue verb took effect (`x.{vendor}.instruction.edited|moved|promoted`, `x.{vendor}.queue.held`),
   * caused by the verb, naming the instruction as `subject`; `data` is the settled state.
   */
  | {
      type: 'queue.changed';
      eventType: string;
      cause: string;
      subject?: string;
      data: Record<string, unknown>;
      /** D46: who changed it. */
      decidedBy?: DecidedBy;
    }
  /** D32: a withdrawn instruction's drop is caused by the withdraw and names the instruction as `subject`. */
  | {
      type: 'instruction.dropped';
      eventType: string;
      cause: string;
      reason: DropReason;
      subject?: string;
      /** D46: who withdrew it. */
      decidedBy?: DecidedBy;
    }
  | { type: 'attention.requested'; id: string; cause?: string; request: AttentionRequest }
  | {
      type: 'attention.answered';
      id: string;
      subject: string;
      cause: string;
      answer: Record<string, unknown>;
      via?: 'control' | 'oob';
    }
  | {
      type: 'attention.resolved';
      subject: string;
      cause: string;
      resolution: 'answered' | 'dismissed';
      latencyMs: number;
      /** D46: who settled it. */
      decidedBy: DecidedBy;
      /** D48: who gave the first allow of a risky request this second allow settled. */
      firstBy?: DecidedBy;
    }
  | { type: 'attention.timeout'; subject: string; cause: string; afterMs: number; decidedBy: DecidedBy }
  /** `resumeWindowMs`: the D25 window this end leaves open, stated on the stream (D36). */
  | { type: 'session.ended'; reason: EndReason; cause?: string; resumeWindowMs?: number }
  /** `x.{vendor}.session.reopened`: a start moment reopened the ended session. */
  | { type: 'session.reopened'; eventType: string; cause?: string }
  /** `x.{vendor}.session.closed`: a reopened session's later end (session.ended went out already). */
  | { type: 'session.closed'; eventType: string; reason: EndReason; cause?: string; resumeWindowMs?: number }
  /** D12: written to the journal before the reply that carries these instructions. */
  | { type: 'journal.inflight'; hookId: string; ids: string[] }
  /** The hook's reply carries steering text (D8); `startedBy`: the moment opens a turn a start began (D27, D43). */
  | { type: 'reply.context'; hookId: string; text: string; ids: string[]; from: string[]; startedBy?: string }
  /** D27, D43: the first moment of a turn a start began tells the person who started it, and carries nothing. */
  | { type: 'reply.notice'; hookId: string; startedBy?: string }
  | { type: 'reply.neutral'; hookId: string }
  /** The hook's reply waits for a decision (D13). */
  | { type: 'reply.hold'; hookId: string; requestId: string; timeoutMs: number }
  /** The held reply: a decision, or none on timeout (D14). Never carries steering (D13). */
  | { type: 'reply.decision'; hookId: string; decision?: Decision }
  /** Carry a command out on the vendor's API; its answer comes back as forward.settled. */
  | { type: 'control.forward'; cause: string; command: AepCommand }
  /** Hand an accepted send_input to the vendor's channel; its answer comes back as input.sent / input.failed. */
  | { type: 'input.send'; cause: string; text: string; delivery?: string }
  /**
   * `run.cancelled {by:"control"}`: the cancel's run ended stopped (or the session ended while a
   * cancel of its run was under way), with what the lane saw of its tool processes.
   */
  | ({ type: 'run.cancelled'; cause: string; run?: string; decidedBy?: DecidedBy } & ToolsAtStop)
  /** Answer a request raised on the vendor's channel through that channel (D14, never a hook reply). */
  | { type: 'approval.answer'; approvalId: string; decision: Decision }
  /** Ask the vendor's channel to abort the active run; its answer comes back as cancel.answered. */
  | { type: 'run.cancel'; cause: string; lane?: string; killTools?: true }
  /** D32: ask the vendor's queue to give back the input `subject` (found by its text); answered by withdraw.answered. */
  | { type: 'input.withdraw'; cause: string; subject: string; text: string }
  /** D31: hand a steer to a native lane; its answer comes back as lane.answered, its receipt as lane.delivered. */
  | { type: 'lane.steer'; cause: string; text: string; lane: string; delivery?: 'queue'; start?: 'steer' | 'queue' }
  /** D32: ask the lane to take back an instruction it holds; its answer comes back as lane.withdrawn. */
  | { type: 'lane.withdraw'; cause: string; instruction: string; lane: string }
  /** D30: the lanes that reach the session changed (`x.{vendor}.session.described {lanes}`). */
  | { type: 'lanes.changed'; eventType: string; lanes: string[] }
  /** `x.{vendor}.input.sent {delivery?}`: the channel took it (never echoes the text). */
  | { type: 'input.sent'; eventType: string; cause: string; delivery?: string }
  /** `x.{vendor}.input.consumed {queued_ms}`: the vendor reports the agent read it. */
  | { type: 'input.consumed'; eventType: string; cause: string; queuedMs: number };
