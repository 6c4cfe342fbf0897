// Two families of failure: the protocol answering no (a Rejection, a value emitted as
// control.rejected; a ProtocolError, the same no met as an exception: a relay error frame, a
// refused filter or subscription, an HTTP refusal) and a SteeringError, something local that
// broke (its code names what; INTERNAL is the adapter's own fault).

/** Why a command was refused by an adapter (AEP-0004 §3 nack reasons this project uses). */
type RejectReason = 'invalid' | 'unsupported' | 'refused' | 'unauthorized' | 'busy';

/** Stable ids of the rules a command can fail; tests assert on these. */
type RuleId =
  | 'text-empty'
  | 'text-too-long'
  | 'text-not-string'
  | 'queue-full'
  | 'unknown-session'
  | 'session-ended'
  | 'gate-off'
  | 'unknown-request'
  /** The request ended already: answered (here or at the agent), dismissed or timed out (D34). */
  | 'not-pending'
  | 'answer-invalid'
  | 'delivery-invalid'
  /** D43: `idle` is not refuse, wait or start. */
  | 'idle-invalid'
  /** D43: no way into the session can start a turn (the detail says which would). */
  | 'start-unsupported'
  | 'start-only'
  /** D44: the vendor keeps no queue a verb could change (OpenHands: instruct only starts a turn). */
  | 'no-queue'
  /** D31: the session's lanes cannot honour the delivery asked for (the detail names those it can). */
  | 'delivery-unsupported'
  /** D32: the withdrawn instruction was handed to the agent already. */
  | 'already-delivered'
  /** D32: the withdrawn instruction no longer waits: withdrawn, expired or dropped before. */
  | 'not-waiting'
  /** D32: the session never accepted an instruction with that id. */
  | 'unknown-instruction'
  /** D32: only the instruction's sender (or a token granted withdraw) may take it back. */
  | 'not-sender'
  /** D44: a move names neither `before` nor `to`, or both. */
  | 'move-invalid'
  /** D44: a move's `before` names no other instruction waiting in the same session. */
  | 'move-target-unknown'
  /** D44: a hold's `paused` is not a boolean. */
  | 'paused-invalid'
  | 'session-idle'
  | 'transport-down'
  | 'input-pending-identical'
  | 'cancel-scope'
  | 'no-active-run'
  | 'cancel-pending'
  | 'cancel-refused'
  /** D33: no lane that can stop the session's turn reaches it (the detail says how to get one). */
  | 'lane-unreached'
  /** The vendor's API said no (an HTTP 4xx/5xx answer to a forwarded command). */
  | 'vendor-refused'
  /** The vendor would ignore or misread the command in the status the stream last showed. */
  | 'status-guard'
  /** D46: a command named a surface that is not a sender's (agent, policy, timeout) or none known. */
  | 'surface-reserved'
  | 'surface-invalid'
  /** D48: a one-tap link cannot allow a risky request. */
  | 'risky-link'
  /** D48: the second allow of a risky request came from the identity that gave the first. */
  | 'second-approver-same'
  /** D45: spawn is off on this adapter (no `--spawn-root`), or the spawn went to a session that is not its home. */
  | 'spawn-off'
  /** D45: the spawn's `cwd` lies outside every spawn root (after following symlinks, or by `..`). */
  | 'cwd-outside-roots'
  /** D45: the spawn's `cwd` climbs with `..`. */
  | 'cwd-dotdot'
  /** D45: the spawn's `cwd` (or a link in it) is a symlink that leads out of its root. */
  | 'cwd-symlink-escape'
  /** D45: the spawn's `cwd` does not exist or is not a directory. */
  | 'cwd-not-directory'
  /** D45: a worktree was asked for in a directory that is not in a git repository, or git refused it. */
  | 'worktree-not-repo'
  | 'worktree-invalid'
  /** D45: the adapter already runs `--max-spawned` spawned sessions. */
  | 'spawn-cap'
  /** D45: the checks passed but the vendor's worker did not start (its launcher said why). */
  | 'spawn-failed'
  /** D45: a spawn whose prompt, cwd, worktree or model is not of the right kind. */
  | 'spawn-invalid'
  /** D45: a command other than a spawn sent to the adapter's home session. */
  | 'home-spawn-only'
  /** D45: a stop (`control.cancel {scope:"session"}`) of a session that is no running worker of this adapter. */
  | 'end-not-spawned'
  /** D45: a stop of a worker another stop is ending already. */
  | 'end-under-way';

export interface Rejection {
  reason: RejectReason;
  rule: RuleId;
  /** Names the rule that failed; never echoes instruction text (D2). */
  detail: string;
}

/**
 * Relay refusals on a target's behalf (AEP-0004 §4, D17), and `store-unavailable` (D38): the
 * relay's store cannot write now (NATS down, a stream without a leader, a full disk); sending
 * the same event or command again once it recovers is the remedy.
 */
export type RelayRefusalCode = 'unauthorized' | 'unsupported' | 'ambiguous' | 'no-route' | 'store-unavailable';

/** A sender's own refusals, read from the roster before anything is sent (D37). */
export type RosterRefusalCode = 'no-route' | 'ambiguous' | 'adapter-offline' | 'vendor-mismatch';

export type SteeringErrorCode =
  | 'HOOK_BODY_INVALID'
  | 'HOOK_TIMEOUT'
  | 'LOG_TORN_RECORD'
  | 'LOG_WRITE_FAILED'
  | 'RELAY_UNREACHABLE'
  | 'RELAY_UNAUTHORIZED'
  /** The relay refused an event the adapter sent (settled for good, or sent again later). */
  | 'RELAY_REFUSED'
  | 'RELAY_PROTOCOL'
  | 'EVENT_INVALID'
  /** The adapter's own code failed (a bug): reported, and the hook path still answers (D15). */
  | 'INTERNAL'
  | 'EXTENSION_INVALID'
  | 'CONFIG_INVALID'
  /** D47: the relay's signing key file is missing, not Ed25519, or readable by others. */
  | 'SIGNING_KEY_INVALID'
  | 'PORT_IN_USE'
  /** An observed agent server (OpenHands) cannot be reached; the bridge keeps retrying. */
  | 'SOURCE_UNREACHABLE'
  /** An observed agent server refused the bridge's key (HTTP 401, socket close 4001). */
  | 'SOURCE_UNAUTHORIZED';

export class SteeringError extends Error {
  readonly code: SteeringErrorCode;
  constructor(code: SteeringErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'SteeringError';
    this.code = code;
  }
}

/** The protocol's no as an exception: `code` is the wire code (docs/errors.md). */
class ProtocolError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'ProtocolError';
    this.code = code;
  }
}

/** A filter the dialect refuses; a relay answers it with `invalid-filter` (AEP-0003 §6.5). */
export class FilterError extends ProtocolError {
  declare readonly code: 'invalid-filter';
  constructor(message: string) {
    super('invalid-filter', message);
    this.name = 'FilterError';
  }
}

export type SubscribeErrorCode = 'invalid-filter' | 'unauthorized' | 'limit-exceeded';

/** A subscription the relay refuses, with the error frame's code. */
export class SubscribeError extends ProtocolError {
  declare readonly code: SubscribeErrorCode;
  constructor(code: SubscribeErrorCode, message: string) {
    super(code, message);
    this.name = 'SubscribeError';
  }
}

/** A frame-level refusal of a subscribe or roster request, as a consumer receives it. */
export class FrameError extends ProtocolError {
  constructor(code: string, detail: string | undefined) {
    super(code, detail ? `${code}: ${detail}` : code);
    this.name = 'FrameError';
  }
}

/** A relay's HTTP refusal: the status and the JSON body it answers with (`error` is the code). */
export class HttpError extends ProtocolError {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.error), String(body.error));
    this.name = 'HttpError';
  }
}
