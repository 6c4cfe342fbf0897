// Every input a session actor takes, as one union, and the few the adapter makes itself: its
// timers and its restart. Inputs are named `<origin>.<fact>`.
import type {
  CancelInput,
  ForwardInput,
  InstructInput,
  QueueVerbInput,
  RespondInput,
  SendInputInput,
  WithdrawInput,
} from './command-inputs.js';
import type { EndInput, FailedInput, HeldInput, HoldClosedInput, MomentInput, WrittenInput } from './hook-inputs.js';
import type {
  ApprovalRequestedInput,
  ApprovalResolvedInput,
  CancelAnsweredInput,
  ForwardSettledInput,
  InputConsumedInput,
  InputFailedInput,
  InputSentInput,
  LaneAnsweredInput,
  LaneDeliveredInput,
  LaneReachInput,
  LaneTurnInput,
  LaneWithdrawnInput,
  TransportLostInput,
  WithdrawAnsweredInput,
} from './vendor-inputs.js';

export interface TimeoutInput {
  type: 'attention.timeout';
  at: number;
  requestId: string;
}
export interface TtlInput {
  type: 'ttl.tick';
  at: number;
  ttlMs: number;
}
/** D25: time passed for an ended session; once its resume window is over, what is still queued drops. */
export interface WindowInput {
  type: 'window.tick';
  at: number;
}
/** Sent once after a restart replay: in-flight instructions and open holds lost their hook (D12). */
export interface RecoveredInput {
  type: 'restart.recovered';
  at: number;
}
export type SessionInput =
  | InstructInput
  | WithdrawInput
  | QueueVerbInput
  | RespondInput
  | MomentInput
  | HeldInput
  | EndInput
  | WrittenInput
  | FailedInput
  | TimeoutInput
  | TtlInput
  | WindowInput
  | RecoveredInput
  | SendInputInput
  | InputSentInput
  | InputFailedInput
  | InputConsumedInput
  | CancelInput
  | CancelAnsweredInput
  | WithdrawAnsweredInput
  | ApprovalRequestedInput
  | ApprovalResolvedInput
  | TransportLostInput
  | ForwardInput
  | ForwardSettledInput
  | HoldClosedInput
  | LaneReachInput
  | LaneAnsweredInput
  | LaneDeliveredInput
  | LaneTurnInput
  | LaneWithdrawnInput;
