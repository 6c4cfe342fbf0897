// The session actor's vocabulary: what it is seeded with, what arrives, what it holds and what
// it announces. Inputs are `<origin>.<fact>`; outputs are named for the AEP type they become.
// Time and ids always arrive on inputs: nothing here reads a clock or mints an id.
import type { AepCommand, Rejection } from '../protocol/index.js';

/** One accepted instruction (D3). `acceptedAt` is the ack time, kept across restarts (D11). */
export interface QueuedInstruction {
  /** The command id: `cause` of every later event about this instruction. */
  id: string;
  /** `(source, id)` dedupe key of the command. */
  key: string;
  text: string;
  acceptedAt: number;
  /** The command's sender (its `agent`), for the user-visible notice (D27) and who may withdraw it (D32). */
  from?: string;
  /** D31: `steer` or `queue` as the sender chose; absent is `moment`. */
  delivery?: 'steer' | 'queue';
}

/** How an accepted instruction stopped waiting, remembered so a late withdraw says which (D32). */
export type FinishedHow = 'delivered' | 'withdrawn' | 'dropped';

/** D30, D31: a steer handed to a native lane, until the vendor's receipt or its refusal. */
export interface LanedInstruction {
  id: string;
  key: string;
  text: string;
  acceptedAt: number;
  /** The lane's name (`app-server`): `instruction.delivered.lane`. */
  lane: string;
  /** `sending`: the lane has not answered; `sent`: the vendor took it for the running turn, receipt awaited. */
  phase: 'sending' | 'sent';
  /** D31 `queue` on a lane with a next-turn queue of its own: it waits there past the running turn's end. */
  delivery?: 'queue';
  /** D32: a withdraw asked of the lane and not answered yet (its command id and decision key). */
  withdrawing?: { id: string; key: string };
  from?: string;
}

export interface FinishedInstruction {
  id: string;
  how: FinishedHow;
}

/** Instructions handed to one hook reply whose write has not been confirmed yet (D9, D12). */
export interface InFlightBatch {
  hookId: string;
  items: QueuedInstruction[];
  /** The vendor's hook event whose reply carries them (D27). */
  moment?: string;
}

/** An attention request as the vendor raised it (AEP-0002 §7; D14). Same shape as the surface's. */
export interface AttentionRequest {
  kind: 'permission' | 'form';
  prompt: string;
  subject?: string;
  options?: { id: string; label: string }[];
  fields?: Record<string, unknown>[];
  context?: Record<string, unknown>;
  /** `respond_via`: `["control"]` unless the vendor's own UI answers the same loop too. */
  respondVia?: string[];
  /** What the tool will do (its command, path or URL), as the vendor shows its own user (D35); redacted-class. */
  detail?: string;
}

/** A held loop's answer in vendor-neutral terms (D14). Same shape as the surface's. */
export interface Decision {
  option: string;
  message?: string;
  values?: Record<string, unknown>;
}

export type HoldKind = 'permission' | 'elicitation';

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
  /** The transport reports when the agent consumed an input (Cline `pending_prompt_submitted`). */
  reportsConsumption: boolean;
  /** Identical pending texts merge into one on the vendor side, so a second one is refused (D28). */
  mergesIdentical: boolean;
}

/** A command carried out on the vendor's API, undecided until the vendor answers. */
export interface PendingForward {
  /** The command id: `cause` of its ack. */
  id: string;
  key: string;
}

/** An accepted send_input the vendor has not settled yet. */
export interface PendingInput {
  /** The command id: `cause` of every later event about this input. */
  id: string;
  key: string;
  text: string;
  /** The effective delivery (the policy's default applied); absent when the verb takes none. */
  delivery?: string;
  acceptedAt: number;
  /** `sending`: handed to the transport, no answer yet; `sent`: the vendor took it, consumption awaited. */
  phase: 'sending' | 'sent';
  /** The vendor reports consumption, so `sent` does not settle it (InputPolicy.reportsConsumption). */
  awaitsConsumption: boolean;
  /** The command's sender: who may withdraw it (D32). */
  from?: string;
}

/** D32: a withdraw of a send_input, asked of the vendor's queue; its answer decides the withdraw. */
export interface PendingWithdrawal {
  /** The withdraw command's id. */
  id: string;
  key: string;
  /** The input it takes back. */
  input: string;
}

/** A held reply waiting for a decision (D13). */
export interface OpenHold {
  /** Id of the `attention.requested` event: the request's identity on the stream. */
  requestId: string;
  hookId: string;
  hold: HoldKind;
  request: AttentionRequest;
  openedAt: number;
  timeoutMs: number;
  /**
   * The vendor's own id for a request raised on its user-plane channel (Cline hub approvalId);
   * such a hold has no hook reply: its answer goes back through the transport.
   */
  external?: string;
  /**
   * The tool call the request is about (the vendor table's call key): a later moment reporting it ran answers it (D34).
   */
  call?: string;
}

/** How a request that is no longer pending ended (D34): a later respond is told which. */
export type SettledHow = 'answered' | 'answered-oob' | 'dismissed' | 'timeout';

/** A request that ended, remembered so a late respond is refused `not-pending` rather than `unknown-request`. */
export interface SettledRequest {
  requestId: string;
  how: SettledHow;
}

/** The one decision recorded per command (AEP-0004 §3), keyed by `(source, id)`. */
export type AckDecision = 'accepted' | 'rejected';

/**
 * Every decision taken for this session (D4), kept immutable without copying the whole set on
 * each command: new keys go to `recent`; a full `recent` is sealed as one chunk (decisions.ts).
 */
export interface Decisions {
  recent: Readonly<Record<string, AckDecision>>;
  sealed: readonly Readonly<Record<string, AckDecision>>[];
}

export interface SessionContext {
  session: string;
  /** The AEP agent token, used only as data to build `x.{vendor}.…` types. */
  vendor: string;
  queue: QueuedInstruction[];
  inFlight: InFlightBatch[];
  holds: OpenHold[];
  /** The most recent requests that ended (D34), newest last; absent until one has. */
  settled?: SettledRequest[];
  /** The most recent instructions that stopped waiting (D32), newest last; absent until one has. */
  finished?: FinishedInstruction[];
  decisions: Decisions;
  /** Accepted send_inputs not settled yet, in acceptance order (D28, D29). */
  inputs: PendingInput[];
  /** Commands handed to the vendor's API, waiting for its answer (the decision). */
  forwards: PendingForward[];
  /** Withdraws of send_inputs waiting for the vendor's queue to answer; absent until one has. */
  withdrawals?: PendingWithdrawal[];
  /** A turn is running (the table marks the moments that open and close one). */
  turnOpen: boolean;
  /** D30: the native lanes that reach this session now, as the lanes reported; absent: the hook lane only. */
  lanes?: string[];
  /** D31: steers handed to a native lane and not settled yet. */
  laned?: LanedInstruction[];
  /**
   * Steers a lane took whose echo at a hook moment may still come (Codex fires UserPromptSubmit
   * with a steer's text): that moment is the adapter's own steer, not a person's prompt or a new turn.
   */
  echoes?: { id: string; text: string }[];
  /** D32: withdraws handed to a native lane, acked on its answer. */
  withdrawing?: { id: string; key: string; instruction: string }[];
  /**
   * A `control.cancel` handed to the vendor's transport (`acked` once it answered yes): the run's
   * `run.cancelled` names it as cause; the turn's close settles it.
   */
  cancel?: {
    id: string;
    key: string;
    acked: boolean;
    /** D33: sent through this native lane, which reports the turn's end itself. */
    lane?: string;
    /** The lane saw the turn end interrupted before the vendor's answer to the interrupt came. */
    interrupted?: boolean;
    /** The run the cancel stopped, kept for its `run.cancelled` whichever of answer and end comes first. */
    run?: string;
    /** The sender asked the lane to end the tool processes the vendor leaves running (`kill_tools`). */
    killTools?: boolean;
    /** What the lane saw of the tool processes at the interrupted end, kept for a later answer. */
    tools?: ToolsAtStop;
  };
  /**
   * The run of the turn now running, as its opening moment named it (the vendor's own id, or one
   * the adapter minted for a vendor that names none): the turn's terminal names the same run.
   */
  run?: string;
  /**
   * `session.ended` is already on the stream. AEP allows one per session, so a session reopened by
   * a start moment marks its later ends `x.{vendor}.session.closed` instead.
   */
  endedOnce: boolean;
  /**
   * D25: the end moment's resume window is open until this time. Meanwhile the ended session
   * keeps its queue and accepts instructions; a start moment reopens it and delivers. Absent when
   * the session is not ended or its window (0 by default) has passed.
   */
  resumeUntil?: number;
}

export interface SessionSeed {
  session: string;
  vendor: string;
  /** Decisions taken before the actor existed (a command for a then-unknown session, D6). */
  decisions?: Record<string, AckDecision>;
}

export type DropReason = 'session-ended' | 'expired' | 'delivery-unknown' | 'send-failed' | 'turn-ended' | 'withdrawn';

/** `session.ended.reason`, the enum of the AEP session.ended schema; vendor reasons collapse into it. */
export type EndReason = 'normal' | 'error' | 'timeout' | 'killed' | 'compaction';

// ---- inputs ----------------------------------------------------------------------------

export interface InstructInput {
  type: 'command.instruct';
  at: number;
  command: AepCommand;
  /** The AEP_INSTRUCT gate as it stood when the command arrived (D5). */
  gateOpen: boolean;
  /** D31: the deliveries this session's lanes honour (vendor table); absent is `moment` only. */
  deliveries?: readonly string[];
  /** D30: what the native lanes add while one reaches the session, and how a session gets one. */
  native?: { deliveries: readonly string[]; hint: string };
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
/** The lane's answer to a withdraw: `removed` false, it was read already; absent, the lane could not say. */
export interface LaneWithdrawnInput {
  type: 'lane.withdrawn';
  at: number;
  /** The withdraw command's id. */
  commandId: string;
  removed?: boolean;
}
/** `x.{vendor}.control.send_input` (D28, D29): a session-actor input like instruct. */
export interface SendInputInput {
  type: 'command.send_input';
  at: number;
  command: AepCommand;
  /** The vendor's control gate as it stood when the command arrived (D5). */
  gateOpen: boolean;
  /** The transport that carries the input is connected; otherwise the command is refused `busy`. */
  ready: boolean;
  policy: InputPolicy;
}
/** `control.cancel {scope}` (AEP-0004 §5): forwarded to the vendor's transport, acked on its answer. */
export interface CancelInput {
  type: 'command.cancel';
  at: number;
  command: AepCommand;
  gateOpen: boolean;
  ready: boolean;
  /** D33: the native lane that stops the session's turn, instead of the user-plane transport. */
  lane?: string;
  /** D33: no lane that stops turns reaches the session; how a session gets one. */
  unreached?: string;
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
}
/** The vendor's receipt: the steer is in the model's input (`ref`: the vendor's id, the accepting turn). */
export interface LaneDeliveredInput {
  type: 'lane.delivered';
  at: number;
  commandId: string;
  ref: string;
}
/** The lane saw a turn start or end (its own protocol, beside the hook moments). */
/** A tool process (a shell command the agent ran), as the lane found it on this host. */
export interface ToolProcess {
  /** Its process id; absent where the lane could not look (the vendor's process is not its own). */
  pid?: number;
  /** The command as the vendor showed it. */
  command: string;
}
/**
 * D33: what became of the turn's tool processes when the vendor stopped the turn. The vendor may
 * stop the turn and leave a command running (Codex 0.171.0): `leftRunning` names it; `killed`
 * names those the lane ended on the sender's `kill_tools`.
 */
export interface ToolsAtStop {
  leftRunning?: ToolProcess[];
  killed?: ToolProcess[];
}
export interface LaneTurnInput extends ToolsAtStop {
  type: 'lane.turn';
  at: number;
  open: boolean;
  /** The turn ended because it was interrupted (the vendor's own status). */
  interrupted?: boolean;
  /** The lane runs what it took unread as a prompt of its own after the turn: its receipt still comes. */
  keepsUnread?: boolean;
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
/** The transport's answer to a forwarded cancel. */
export interface CancelAnsweredInput {
  type: 'cancel.answered';
  at: number;
  commandId: string;
  ok: boolean;
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
/** The vendor answered a forwarded command: no rejection is a 2xx. */
export interface ForwardSettledInput {
  type: 'forward.settled';
  at: number;
  commandId: string;
  rejection?: Rejection;
}
/** The transport took the input (Cline hub reply ok, OpenHands REST 2xx). */
export interface InputSentInput {
  type: 'input.sent';
  at: number;
  commandId: string;
}
/** The transport refused the input or could not be reached. */
export interface InputFailedInput {
  type: 'input.failed';
  at: number;
  commandId: string;
}
/** The vendor reports an input consumed (matched by its text: the vendor names no command). */
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
export interface InputConsumedInput {
  type: 'input.consumed';
  at: number;
  text: string;
}
export interface RespondInput {
  type: 'command.respond';
  at: number;
  command: AepCommand;
  /** Id for the `attention.answered` event, so `attention.resolved` can point at it. */
  answeredId: string;
}
export interface MomentInput {
  type: 'hook.moment';
  at: number;
  hookId: string;
  /** D7, decided by the vendor table before the hook reaches the actor. */
  eligible: boolean;
  /** The vendor's session-start moment: reopens an ended session (a resumed session keeps its id). */
  starts?: boolean;
  /** The vendor's hook event name, named by `instruction.delivered` (D27). */
  moment?: string;
  /** Id of the first observation event of this hook, when there is one. */
  causeId?: string;
  /** The moment opens or closes a turn, or fires only within one (the table says which), for the D28 idle refusal. */
  turn?: 'opens' | 'closes' | 'within';
  /** The run id minted for the turn this moment opens (a vendor that names none). */
  runId?: string;
  /**
   * The moment reports this tool call ran (`call`: the table's call key): a held request for it was
   * answered yes at the agent (D34); `answeredId` names the `attention.answered` that then says so.
   */
  ran?: { call: string; answeredId: string };
  /** The moment echoes this steer (its command id), which a native lane handed over: not a turn of its own. */
  echo?: string;
  /**
   * The hook already got the neutral reply `repliesNeutral` announced for it (D7–D8): the step
   * takes that as decided and hands the moment nothing.
   */
  answered?: true;
}
export interface HeldInput {
  type: 'hook.held';
  at: number;
  hookId: string;
  /** Id for the `attention.requested` event. */
  requestId: string;
  hold: HoldKind;
  request: AttentionRequest;
  timeoutMs: number;
  causeId?: string;
  /** The tool call the request is about (the table's call key), when the vendor reports its run later. */
  call?: string;
}
/** The vendor closed a held hook before its reply was written: the person answered at the agent or it gave up (D34). */
export interface HoldClosedInput {
  type: 'hold.closed';
  at: number;
  hookId: string;
}
export interface EndInput {
  type: 'hook.end';
  at: number;
  hookId: string;
  /** Carried by `session.ended` (vendor reason mapped by the table). */
  reason: EndReason;
  /** D25 resume window of this end moment (vendor table or `AEP_RESUME_WINDOW_MS`); 0 or absent: none. */
  windowMs?: number;
  causeId?: string;
}
export interface WrittenInput {
  type: 'reply.written';
  at: number;
  hookId: string;
}
export interface FailedInput {
  type: 'reply.failed';
  at: number;
  hookId: string;
}
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

// ---- outputs ---------------------------------------------------------------------------

export type SessionOutput =
  | { type: 'control.accepted'; cause: string; key: string }
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
    }
  /** D32: a withdrawn instruction's drop is caused by the withdraw and names the instruction as `subject`. */
  | { type: 'instruction.dropped'; eventType: string; cause: string; reason: DropReason; subject?: string }
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
    }
  | { type: 'attention.timeout'; subject: string; cause: string; afterMs: number }
  /** `resumeWindowMs`: the D25 window this end leaves open, stated on the stream (D36). */
  | { type: 'session.ended'; reason: EndReason; cause?: string; resumeWindowMs?: number }
  /** `x.{vendor}.session.reopened`: a start moment reopened the ended session. */
  | { type: 'session.reopened'; eventType: string; cause?: string }
  /** `x.{vendor}.session.closed`: a reopened session's later end (session.ended went out already). */
  | { type: 'session.closed'; eventType: string; reason: EndReason; cause?: string; resumeWindowMs?: number }
  /** D12: written to the journal before the reply that carries these instructions. */
  | { type: 'journal.inflight'; hookId: string; ids: string[] }
  /** The hook's reply carries steering text (D8). */
  | { type: 'reply.context'; hookId: string; text: string; ids: string[]; from: string[] }
  | { type: 'reply.neutral'; hookId: string }
  /** The hook's reply waits for a decision (D13). */
  | { type: 'reply.hold'; hookId: string; requestId: string; timeoutMs: number }
  /** The held reply: a decision, or none on timeout (D14). Never carries steering (D13). */
  | { type: 'reply.decision'; hookId: string; decision?: Decision }
  /** Carry a command out on the vendor's API; its answer comes back as forward.settled. */
  | { type: 'control.forward'; cause: string; command: AepCommand }
  /** Hand an accepted send_input to the vendor's transport; its answer comes back as input.sent / input.failed. */
  | { type: 'input.send'; cause: string; text: string; delivery?: string }
  /**
   * `run.cancelled {by:"control"}`: the cancel's run ended stopped (or the session ended while a
   * cancel of its run was under way), with what the lane saw of its tool processes.
   */
  | ({ type: 'run.cancelled'; cause: string; run?: string } & ToolsAtStop)
  /** Answer a request raised on the vendor's channel through that channel (D14, never a hook reply). */
  | { type: 'approval.answer'; approvalId: string; decision: Decision }
  /** Ask the vendor's transport to abort the active run; its answer comes back as cancel.answered. */
  | { type: 'run.cancel'; cause: string; lane?: string; killTools?: true }
  /** D32: ask the vendor's queue to give back the input `subject` (found by its text); answered by withdraw.answered. */
  | { type: 'input.withdraw'; cause: string; subject: string; text: string }
  /** D31: hand a steer to a native lane; its answer comes back as lane.answered, its receipt as lane.delivered. */
  | { type: 'lane.steer'; cause: string; text: string; lane: string; delivery?: 'queue' }
  /** D32: ask the lane to take back an instruction it holds; its answer comes back as lane.withdrawn. */
  | { type: 'lane.withdraw'; cause: string; instruction: string; lane: string }
  /** D30: the lanes that reach the session changed (`x.{vendor}.session.described {lanes}`). */
  | { type: 'lanes.changed'; eventType: string; lanes: string[] }
  /** `x.{vendor}.input.sent {delivery?}`: the transport took it (never echoes the text). */
  | { type: 'input.sent'; eventType: string; cause: string; delivery?: string }
  /** `x.{vendor}.input.consumed {queued_ms}`: the vendor reports the agent read it. */
  | { type: 'input.consumed'; eventType: string; cause: string; queuedMs: number };

export type OutputType = SessionOutput['type'];

/** The outputs that become AEP events on the stream (the rest steer the hook reply or the journal). */
export const STREAM_OUTPUTS = [
  'control.accepted',
  'control.rejected',
  'instruction.delivered',
  'instruction.dropped',
  'attention.requested',
  'attention.answered',
  'attention.resolved',
  'attention.timeout',
  'session.ended',
  'session.reopened',
  'session.closed',
  'lanes.changed',
  'input.sent',
  'input.consumed',
  'run.cancelled',
] as const satisfies readonly OutputType[];
