// What the session runtime needs from a vendor, declared here and supplied by src/adapters
// (each vendor is a data table; adapters/table.ts turns a table into a VendorSurface).
// No machine and no stream ever sees a vendor name: they see these shapes only.
import type { EventData, Severity, CaptureLevel } from '../protocol/envelope.js';
import type { EndReason } from '../machines/session-output.js';
import type { InputPolicy } from '../machines/command-inputs.js';

/** An attention request as the vendor raised it (AEP-0002 §7; D14). */
export interface AttentionRequestSpec {
  kind: 'permission' | 'form';
  prompt: string;
  subject?: string;
  options?: { id: string; label: string }[];
  fields?: EventData[];
  /** Vendor input kept for building the decision reply (tool name, questions…). */
  context?: EventData;
  /** What the tool will do (its command, path or URL) as the vendor shows its user (D35); redacted-class. */
  detail?: string;
  /** D48: the policy rule the request breaks, by name and why (never the command text). */
  risky?: { rule: string; why: string };
}

export type { EndReason, InputPolicy };

/** How one hook arrival steps the session (D7, D10, D13). */
export type HookClass =
  /**
   * Not held and not the end. `eligible` is D7: accepts context, consumed by the main agent.
   * `starts` marks the vendor's session-start moment, which reopens an ended session (a resumed
   * `codex exec resume`, `claude --resume`, `qwen --continue` keeps the session id).
   */
  | {
      kind: 'moment';
      eligible: boolean;
      reason?: string;
      starts?: boolean;
      turn?: 'opens' | 'closes' | 'within';
      ran?: string;
    }
  /** A held loop: the reply waits for a decision (D13, D14); `call` names its tool call (D34). */
  | { kind: 'held'; hold: 'permission' | 'elicitation'; request: AttentionRequestSpec; call?: string }
  /** The session's end moment (D10), with the reason `session.ended` carries. */
  | { kind: 'end'; reason: EndReason };

/** An observation event derived from the hook input (AEP-0002 Annex A mappings). */
export interface ObservationSpec {
  type: string;
  data?: EventData;
  subject?: string;
  run?: string;
  /** The envelope `step` (a grouping fact the vendor states, e.g. one model response's calls). */
  step?: string;
  /** A preset event id, when a later event must name this one (an attention request's subject). */
  id?: string;
  /** The event this one is the outcome of (a command the vendor carried out, an answer). */
  cause?: string;
  severity?: Severity;
  capture?: CaptureLevel;
}

export interface ClassifiedHook {
  /** The vendor's session id, as carried in the hook input. */
  session: string;
  /** The vendor's hook event name, e.g. `PreToolUse`. */
  event: string;
  class: HookClass;
  observations: ObservationSpec[];
  /** D31: the moment opens or closes a turn for instruct's deliveries (the table's `bounds`). */
  bounds?: 'opens' | 'closes';
  /** D37: what the input says about its session (the working directory; a prompt, the title's source). */
  about?: SessionAbout;
  /** D30: the moment is the vendor's echo of this steer (its command id), which a native lane carried. */
  echo?: string;
  /** D27, D43: the moment's prompt is this start's text (its command id): the first moment of the turn it began. */
  opener?: string;
  /** D45: its observations read from what the vendor writes just after the hook (bounded); they replace `observations`. */
  later?: () => Promise<ObservationSpec[]>;
}

export interface SessionAbout {
  cwd?: string;
  prompt?: string;
}

/** A held loop's answer, in vendor-neutral terms (D14). */
export interface HeldDecision {
  /** `allow` / `deny` for permissions; `submit` for forms. */
  option: string;
  /** A deny's message (free text that is not an option word). */
  message?: string;
  /** Form answers keyed by field id. */
  values?: Record<string, unknown>;
}

/** What the user at the agent is told about a delivery (D27). */
export interface DeliveryNotice {
  count: number;
  /** Senders (command `agent`), first-come order, once each. */
  from: string[];
  /** D43: the moment opens a turn a start began, by this sender (empty: a sender unnamed). */
  startedBy?: string;
}

/** The reply the hook caller gets. `body` is written as JSON; `undefined` means an empty 200. */
export interface HookReply {
  body: unknown;
}

export interface VendorSurface {
  /** The AEP agent token (`claude-code`, `codex`, …): envelope `agent`, `x.{token}.…`. */
  token: string;
  /** The steering verb this vendor takes: `x.{token}.control.instruct` or `…send_input`. */
  steeringType: string;
  /** Default D15 hook port. */
  port: number;
  /** D14 attention timeout default for this vendor. */
  attentionTimeoutMs: number;
  /**
   * Whether any held loop is enabled on this surface (always-held rows, or an opt-in gate turned
   * on): `hello.capabilities.control.accepts` lists `control.attention.respond` only then.
   * Absent means none.
   */
  holds?: boolean;
  /**
   * The user-plane verb `x.{token}.control.send_input` and how the vendor treats such input
   * (D28, D29); absent when the vendor takes none. Its channel comes with the adapter options.
   */
  sendInput?: { type: string; policy: InputPolicy };
  /** `control.cancel` aborts the active run through the user-plane channel (scope `run` only). */
  cancels?: boolean;
  /** The user-plane channel raises approvals that `control.attention.respond` answers. */
  approvals?: boolean;
  /** D32: the user-plane channel takes back a send_input not read yet (the lane's `withdraw`). */
  withdrawsInputs?: boolean;
  /**
   * Commands the adapter carries out on the vendor's own API (OpenHands: control.attention.respond,
   * control.pause, control.resume, x.openhands.control.interrupt), decided by the vendor's answer.
   * Listed in hello only while the control gate is on; carried out by the channel lane's `perform`.
   */
  controls?: readonly string[];
  /** D25 resume window of the end moment, from the vendor table; absent or 0: none. */
  resumeWindowMs?: number;
  /** D43: why a session on the hook lane alone cannot be started from outside (an interactive TUI); with the lanes' ways. */
  startNote?: string;
  /** D43: instruct, taken only with `idle: start` where the steering verb is send_input (OpenHands). */
  startType?: string;
  /** D31: the deliveries instruct honours on this surface's lanes; absent: `moment` only. */
  deliveries?: readonly string[];
  /** D26 default instruction TTL (D37: every vendor has one); absent: none. */
  instructTtlMs?: number;
  /** D37: a live session whose agent said nothing for this long shows `stale`. */
  staleAfterMs?: number;
  /** Classify a parsed hook input. Throws SteeringError('HOOK_BODY_INVALID') on a body it cannot read. */
  classify(input: Record<string, unknown>): ClassifiedHook;
  /**
   * Reply carrying steering text at an eligible moment (D8). With `notice`, the reply also tells
   * the user how many instructions arrived and from whom, where the vendor has a field the user
   * sees and the model does not read (D27).
   */
  contextReply(hook: ClassifiedHook, text: string, notice?: DeliveryNotice): HookReply;
  /**
   * D27, D43: the reply to a started turn's first moment, which carries nothing but tells the user
   * who started the turn; the neutral reply where the vendor has no field for it.
   */
  noticeReply?(hook: ClassifiedHook, notice: DeliveryNotice): HookReply;
  /** The neutral reply: what the vendor gets when there is nothing to say, and on any failure (D15). */
  neutralReply(hook: ClassifiedHook | undefined): HookReply;
  /** A held loop's decision reply (D13: never carries steering). `undefined` = no decision (timeout, D14). */
  decisionReply(hook: ClassifiedHook, decision: HeldDecision | undefined): HookReply;
}
