// What the vendor's own channels report to a session actor: its user-plane channel (inputs,
// approvals, cancels, forwarded commands, withdraws) and its native lanes (reach, steers, turns).
import type { Rejection } from '../protocol/index.js';
import type { AttentionRequest, ToolsAtStop } from './session-context.js';

/** The channel took the input (Cline hub reply ok, OpenHands REST 2xx). */
export interface InputSentInput {
  type: 'input.sent';
  at: number;
  commandId: string;
}
/** The channel refused the input or could not be reached. */
export interface InputFailedInput {
  type: 'input.failed';
  at: number;
  commandId: string;
}
/** The vendor reports an input consumed (matched by its text: the vendor names no command). */
export interface InputConsumedInput {
  type: 'input.consumed';
  at: number;
  text: string;
}
/**
 * The vendor's queue answered a withdraw of a send_input: `removed` true took it back, false means
 * it was read already; absent, the call failed (`detail`).
 */
export interface WithdrawAnsweredInput {
  type: 'withdraw.answered';
  at: number;
  commandId: string;
  removed?: boolean;
  detail?: string;
}
/** The channel's answer to a forwarded cancel. */
export interface CancelAnsweredInput {
  type: 'cancel.answered';
  at: number;
  commandId: string;
  ok: boolean;
}
/** The vendor answered a forwarded command: no rejection is a 2xx. */
export interface ForwardSettledInput {
  type: 'forward.settled';
  at: number;
  commandId: string;
  rejection?: Rejection;
}
/** The vendor's channel raised an approval request (Cline hub `approval.requested`). */
export interface ApprovalRequestedInput {
  type: 'approval.requested';
  at: number;
  requestId: string;
  approvalId: string;
  request: AttentionRequest;
}
/**
 * The vendor's channel settled an approval (`approval.resolved`): answered in its own UI unless
 * this adapter answered it first; `approved` absent means the vendor cancelled it.
 */
export interface ApprovalResolvedInput {
  type: 'approval.resolved';
  at: number;
  approvalId: string;
  approved?: boolean;
  answeredId: string;
}
/** The vendor's channel was lost: its open requests can no longer be answered. */
export interface TransportLostInput {
  type: 'transport.lost';
  at: number;
}
/** D30: a native lane reaches the session now (`attached`) or no longer (`detached`). */
export interface LaneReachInput {
  type: 'lane.reach';
  at: number;
  lane: string;
  reaches: boolean;
}
/** The lane's answer to a steer: taken for the running turn (`ok`), or why not (lane.ts LaneOutcome). */
export interface LaneAnsweredInput {
  type: 'lane.answered';
  at: number;
  commandId: string;
  ok: boolean;
  reason?: 'turn-ended' | 'idle' | 'unreachable' | 'refused';
  /** D43: a start found a turn begun meanwhile and went into it as this delivery instead. */
  became?: 'steer' | 'queue';
}
/** The vendor's receipt: the steer is in the model's input (`ref`: the vendor's id, the accepting turn). */
export interface LaneDeliveredInput {
  type: 'lane.delivered';
  at: number;
  commandId: string;
  ref: string;
  /** D43: the lane says whether the instruction began the turn (`ref`) or went into one already running. */
  started?: boolean;
  /** D50: taking it moved the running shell command to the background. */
  backgrounded?: { command: string };
}
/**
 * D44: how the adapter's own queue goes to a lane whose vendor cannot change what it holds
 * (machines/queue-handover.ts). `take`: the head only, one per turn end, or every waiting one at
 * once; `as`: a turn of its own (D43 start) or the vendor's next-turn queue (the lane's `queue`).
 */
export interface QueueHandover {
  take: 'one' | 'all';
  as: 'start' | 'queue';
}
/** The lane saw a turn start or end (its own protocol, beside the hook moments). */
export interface LaneTurnInput extends ToolsAtStop {
  type: 'lane.turn';
  at: number;
  open: boolean;
  /** The turn ended because it was interrupted (the vendor's own status). */
  interrupted?: boolean;
  /** The lane runs what it took unread as a prompt of its own after the turn: its receipt still comes. */
  keepsUnread?: boolean;
  /** D44: the lane's hand-over row: a normal end hands what waits in the adapter's queue over as it says. */
  handover?: QueueHandover;
  /** Steers (command ids) the lane could not take back at the turn's end: the vendor runs them next, receipt to come. */
  kept?: string[];
}
/** The lane's answer to a withdraw: `removed` false, it was read already; absent, the lane could not say. */
export interface LaneWithdrawnInput {
  type: 'lane.withdrawn';
  at: number;
  /** The withdraw command's id. */
  commandId: string;
  removed?: boolean;
}
