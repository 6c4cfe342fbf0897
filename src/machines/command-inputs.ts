// The commands a sender's steering verbs become as session-actor inputs: each carries the AEP
// command and the gates and vendor facts as they stood when it arrived, since the machine knows
// no vendor and reads no setting.
import type { AepCommand, Rejection } from '../protocol/index.js';
import type { QueueHandover } from './vendor-inputs.js';

/**
 * How a vendor's user-plane input (`x.{vendor}.control.send_input`) behaves, from its table
 * (D28, D29). The machine knows no vendor: these facts arrive on the command input.
 */
export interface InputPolicy {
  /** Allowed `delivery` values; empty means the verb takes none (OpenHands). */
  deliveries: readonly string[];
  /** The delivery an input without one gets (Cline: `queue`). */
  defaultDelivery?: string;
  /** Refuse while no turn runs: input to an idle session would start the agent (D28). */
  refuseIdle: boolean;
  /** The channel reports when the agent consumed an input (Cline `pending_prompt_submitted`). */
  reportsConsumption: boolean;
  /** Identical pending texts merge into one on the vendor side, so a second one is refused (D28). */
  mergesIdentical: boolean;
}
export interface InstructInput {
  type: 'command.instruct';
  at: number;
  command: AepCommand;
  /** The AEP_INSTRUCT gate as it stood when the command arrived (D5). */
  gateOpen: boolean;
  /** D31: the deliveries this session's lanes honour (vendor table); absent is `moment` only. */
  deliveries?: readonly string[];
  /** D30: what the native lanes add while one reaches the session, and how a session gets one. */
  native?: NativeLanes;
  /** D43: the lanes that can start a turn (a channel reaches every session), and how a session gets one. */
  starts?: LaneStarts;
  /** D43: the vendor takes instruct only to start a turn (its steering verb is send_input). */
  startOnly?: true;
}

/** D43: which lanes can start a turn; `channel` reaches every session of the vendor. */
export interface LaneStarts {
  lanes: readonly string[];
  channel?: string;
  /** What a person does so a session can be started, and why this vendor's other ways in cannot. */
  hint: string;
}
/** `x.{vendor}.control.withdraw {instruction}` (D32): takes back an instruction that still waits. */
export interface WithdrawInput {
  type: 'command.withdraw';
  at: number;
  command: AepCommand;
  /** The AEP_INSTRUCT gate as it stood when the command arrived (D5). */
  gateOpen: boolean;
  /** The vendor's queue takes back a send_input not read yet (the surface's `withdrawsInputs`); absent: it cannot. */
  takesBackInputs?: boolean;
  /** D32: the native lanes that can take back what they hold (Qwen's mid-turn messages). */
  laneWithdraws?: readonly string[];
}
/**
 * D44: `x.{vendor}.control.edit|move|promote|hold`, the sender's verbs on what waits. A promote
 * carries the same lane facts as instruct, since it may hand the instruction to a lane.
 */
/**
 * D30: what the native lanes add while one reaches the session, and how a session gets one;
 * `handover` (D44): the lane's hand-over row, so a `queue` sent during a turn waits here.
 */
export interface NativeLanes {
  deliveries: readonly string[];
  hint: string;
  handover?: QueueHandover;
}
export interface QueueVerbInput {
  type: 'command.queue';
  at: number;
  verb: QueueVerb;
  command: AepCommand;
  /** The AEP_INSTRUCT gate as it stood when the command arrived (D5). */
  gateOpen: boolean;
  deliveries?: readonly string[];
  native?: NativeLanes;
  starts?: LaneStarts;
  /** D43, D44: the vendor takes instruct only to start a turn, so nothing ever waits for a verb to change. */
  startOnly?: true;
}
export type QueueVerb = 'edit' | 'move' | 'promote' | 'hold';
/** `x.{vendor}.control.send_input` (D28, D29): a session-actor input like instruct. */
export interface SendInputInput {
  type: 'command.send_input';
  at: number;
  command: AepCommand;
  /** The vendor's control gate as it stood when the command arrived (D5). */
  gateOpen: boolean;
  /** The channel that carries the input is connected; otherwise the command is refused `busy`. */
  ready: boolean;
  policy: InputPolicy;
}
/** `control.cancel {scope}` (AEP-0004 §5): forwarded to the vendor's channel, acked on its answer. */
export interface CancelInput {
  type: 'command.cancel';
  at: number;
  command: AepCommand;
  gateOpen: boolean;
  ready: boolean;
  /** D33: the native lane that stops the session's turn, instead of the user-plane channel. */
  lane?: string;
  /** D33: no lane that stops turns reaches the session; how a session gets one. */
  unreached?: string;
}
/**
 * A command the adapter carries out on the vendor's own API (OpenHands pause, resume, interrupt,
 * respond_to_confirmation). The vendor's answer decides it; its guard was evaluated by the
 * adapter from what the stream last showed, so refusals match what consumers see.
 */
export interface ForwardInput {
  type: 'command.forward';
  at: number;
  command: AepCommand;
  /** The vendor's control gate as it stood when the command arrived (D5). */
  gateOpen: boolean;
  /** The vendor guard's refusal, when there is one. */
  refusal?: Rejection;
}
export interface RespondInput {
  type: 'command.respond';
  at: number;
  command: AepCommand;
  /** Id for the `attention.answered` event, so `attention.resolved` can point at it. */
  answeredId: string;
}
