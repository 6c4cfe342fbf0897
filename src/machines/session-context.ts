// What a session actor holds between inputs: its queue, the hooks and requests still open, the
// commands still undecided and the decisions taken. The machine's context is data only: time and
// ids always arrive on inputs, so nothing here reads a clock or mints an id.
import type { DecidedBy } from './decided-by.js';
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
  /** D44: the text's version, raised by each edit; absent is 1. */
  version?: number;
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
  /**
   * D43: asked to start a turn with it (`asked`); the lane started one (`started`), or found one
   * begun meanwhile and put it in as `delivery` instead (`raced`).
   */
  start?: 'asked' | 'started' | 'raced';
  /** D44: handed over from the adapter's queue (queue-handover.ts): what waits stays until its receipt. */
  fromQueue?: true;
  from?: string;
  /** D44: the text version it carries (absent: 1). */
  version?: number;
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
  /** D48: the policy rule the request breaks, by name and why; a remote allow then needs two identities. */
  risky?: { rule: string; why: string };
}

/** A held loop's answer in vendor-neutral terms (D14). Same shape as the surface's. */
export interface Decision {
  option: string;
  message?: string;
  values?: Record<string, unknown>;
}

export type HoldKind = 'permission' | 'elicitation';

/** A command carried out on the vendor's API, undecided until the vendor answers. */
interface PendingForward {
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
  /** `sending`: handed to the channel, no answer yet; `sent`: the vendor took it, consumption awaited. */
  phase: 'sending' | 'sent';
  /** The vendor reports consumption, so `sent` does not settle it (InputPolicy.reportsConsumption). */
  awaitsConsumption: boolean;
  /** The command's sender: who may withdraw it (D32). */
  from?: string;
}

/** D32: a withdraw of a send_input, asked of the vendor's queue; its answer decides the withdraw. */
interface PendingWithdrawal {
  /** The withdraw command's id. */
  id: string;
  key: string;
  /** The input it takes back. */
  input: string;
  /** D46: who asked. */
  by?: DecidedBy;
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
   * such a hold has no hook reply: its answer goes back through the channel.
   */
  external?: string;
  /**
   * The tool call the request is about (the vendor table's call key): a later moment reporting it ran answers it (D34).
   */
  call?: string;
  /** D48: the first remote allow of a risky request, waiting for a second, distinct identity's. */
  firstAllow?: DecidedBy;
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
  /** D44: the sender paused the queue: nothing but a steer is delivered from it until resumed. */
  paused?: boolean;
  /**
   * D44: a native lane saw a turn start and not yet its end. The hooks may say a turn closed before
   * the vendor has closed it (Copilot's agentStop comes before its server's `session.idle`).
   */
  laneTurnOpen?: boolean;
  /** D30: the native lanes that reach this session now, as the lanes reported; absent: the hook lane only. */
  lanes?: string[];
  /** D31: steers handed to a native lane and not settled yet. */
  laned?: LanedInstruction[];
  /**
   * Steers a lane took whose echo at a hook moment may still come (Codex fires UserPromptSubmit
   * with a steer's text): that moment is the adapter's own steer, not a person's prompt or a new turn.
   */
  echoes?: { id: string; text: string }[];
  /**
   * D27, D43: starts handed to a lane whose turn's first hook moment has not come yet: that moment
   * (its prompt is the start's text) tells the person who started the turn.
   */
  openers?: { id: string; text: string; from?: string }[];
  /** D32: withdraws handed to a native lane, acked on its answer. */
  withdrawing?: { id: string; key: string; instruction: string; by?: DecidedBy }[];
  /**
   * A `control.cancel` handed to the vendor's channel (`acked` once it answered yes): the run's
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
    /** D46: who asked for the stop. */
    by?: DecidedBy;
    /** D44: `clear`: nothing is delivered from the queue until the answer, which withdraws all of it. */
    clear?: boolean;
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
