// A vendor is data: one VendorTable per vendor (its rows, options, ways in), the helpers its table
// is written with, and the replies vendors share. One interpreter (surface-from.ts) turns any table
// into the VendorSurface the session runtime speaks; every difference between vendors is a field.
import type { LaneSpec } from './lane-spec.js';
import type { RiskPolicy } from './risk-policy.js';
import type { SteeringError } from '../protocol/errors.js';
import { vendorType } from '../protocol/types.js';
import type { Delivery } from '../protocol/payloads.js';
import { str } from './hook-input.js';
import type { Observable } from 'rxjs';
import type { HookArrival } from '../streams/hook-endpoint.js';
import type { AepEvent } from '../protocol/envelope.js';
import type { InstallReport } from './install.js';
import type { McpConfig } from './mcp-config.js';
import type { Lane } from '../streams/lane.js';
import type { CredentialCheck } from './credentials.js';
import type {
  AttentionRequestSpec,
  ClassifiedHook,
  EndReason,
  HeldDecision,
  InputPolicy,
  ObservationSpec,
  SessionAbout,
} from '../streams/surface.js';

/**
 * A vendor's user-plane channel beside its hooks (the Cline hub): two trust grants, each an option
 * of the vendor's (D16): the tap (`user-plane`) observes; control (`user-plane-control`) also
 * declares and accepts the user-plane verbs. Options that set `user-plane-env` reach `open`'s
 * environment.
 */
interface UserPlane {
  /** The channel aborts the active run: `control.cancel` (scope `run`) is offered with control. */
  cancels: boolean;
  /** The channel raises approvals: `control.attention.respond` is offered with control. */
  approvals: boolean;
  /** D32: the channel's queue gives back a send_input the agent has not read yet (withdraw). */
  withdraws?: boolean;
  /** `onNote`: a line for the adapter's log when the channel comes back after a reported problem. */
  open(env: NodeJS.ProcessEnv, onError: (e: SteeringError) => void, onNote?: (line: string) => void): Promise<Lane>;
}

/**
 * A native lane the adapter can attach beside the hook lane (D30): the vendor's own daemon, named
 * by a URL and a mode-600 token file (flags `--serve`, `--serve-token-file`, or their variables).
 */
/**
 * D33: what stops a running turn of this vendor, so that Stop is offered only where something
 * can (the console, `aep-steer cancel`), and said truly where it does.
 */
export interface CancelRow {
  /**
   * The ways in that can stop a turn: native lanes by name (a session reached by none of them,
   * its hook lane only, cannot be stopped), or `user-plane` (the vendor's own channel: every
   * session of an adapter that declares `control.cancel`).
   */
  by: readonly string[];
  /** How a session gets one of them (said where none reaches it). */
  how: string;
  /** What to do so a session's turns can be stopped where its adapter declares no `control.cancel`. */
  enable: string;
  /** What the vendor leaves running when it stops a turn, and what the adapter does about it. */
  leaves?: string;
  evidence: string;
}

/**
 * D44: who keeps a queued instruction until the agent reads it, so the sender's edit, move and
 * promote mean the same everywhere: `adapter` keeps it in the session's own queue until a moment
 * takes it (every verb works until then); `vendor` names the native lanes whose own next-turn queue
 * takes a `queue` instruction at once (withdraw reaches it there; an edit, move or promote of it
 * answers `already-delivered`, as for any item handed to a vendor that cannot change it); `none`:
 * nothing ever waits (the vendor takes instruct only to start a turn), so every verb is refused
 * `no-queue` and `calls` says why.
 */
interface QueueRow {
  keeps: 'adapter' | 'none' | { vendor: readonly string[] };
  /** The vendor's own calls on its queue, where it has them, and which the adapter uses. */
  calls: string;
  evidence: string;
}

/** A parsed hook body as the vendor sent it. */
export type HookInput = Record<string, unknown>;

/** What a held hook asks for: the runtime's hold state and the attention request (D13, D14). */
export interface HeldSpec {
  hold: 'permission' | 'elicitation';
  request: AttentionRequestSpec;
}

export interface RowBase {
  /** Where the row's behaviour is proven: `e2e/<token>#<test name>` or `<doc> §<section>`. */
  evidence: string;
  /** First vendor version the row holds for; the table's pinned version when absent. */
  since?: string;
  /**
   * The vendor's session-start moment: it reopens an ended session, since a resumed session
   * (`codex exec resume`, `claude --resume`, `qwen --continue`) keeps its id. A subagent's
   * arrival never counts.
   */
  starts?: true;
  /**
   * The moment opens or closes a turn of the main agent (send_input's idle refusal, D28), or fires
   * only within one (`within`: a tool call; arriving while no turn is open it marks one open, for
   * a vendor whose opening hook runs detached and may come after it).
   */
  turn?: 'opens' | 'closes' | 'within';
  /**
   * D31: the moment opens or closes a turn for instruct's deliveries only (`queue` rides the
   * opening one, `steer` the moments between), where `turn` is not set: no run id is minted.
   */
  bounds?: 'opens' | 'closes';
  /**
   * D34: the moment reports that a tool call ran (the table's `callOf` names which): a request held
   * for that call was answered yes in the vendor's own dialog. `evidence` says where that was seen.
   */
  ran?: { evidence: string };
}

/** A moment whose reply accepts context that the main agent consumes (D7). */
interface ContextRow extends RowBase {
  role: 'context';
  /** A further condition on this arrival: returns why it is not eligible, or undefined when it is. */
  unless?: (input: HookInput) => string | undefined;
}

/** A moment that is observed but never carries steering; `reason` says why (D7). */
interface ObserveRow extends RowBase {
  role: 'observe';
  reason: string;
}

/** A held loop: the reply waits for a decision and never carries steering (D13). */
interface HeldRow extends RowBase {
  role: 'held';
  hold: (input: HookInput) => HeldSpec;
  /** The vendor's decision reply body for an answered hold. */
  decide: (hook: ClassifiedHook, decision: HeldDecision) => unknown;
}

/** The session's end moment: still-queued instructions drop here (D10). */
interface EndRow extends RowBase {
  role: 'end';
  /** The `session.ended` reason for this arrival (AEP enum; see collapseEndReason). */
  reason: (input: HookInput) => EndReason;
  /**
   * D25: how long after this end moment the session keeps its queue and accepts instructions, for
   * a resumed run (same session id) to pick them up. 0 or absent: none (D6/D10 as written).
   */
  resumeWindowMs?: number;
}

/**
 * A moment an opt-in gate may hold (VS Code `PreToolUse`, Hermes `pre_tool_call`): held when the
 * table's opt-in gate (its `gate` option) is on and `tool` matches its tool pattern, otherwise it is the `open` row.
 * A held reply carries only the decision (D13).
 */
interface GatedRow extends RowBase {
  role: 'gated';
  /** The tool name the gate's pattern is matched against. */
  tool: (input: HookInput) => string;
  hold: (input: HookInput) => HeldSpec;
  decide: (hook: ClassifiedHook, decision: HeldDecision) => unknown;
  open: ContextRow | ObserveRow;
}

/**
 * Which of the adapter's settings a vendor option sets, by the way in it belongs to:
 * - `gate`: the opt-in held gate is on (D13; a bridge's writes, D29); `gate-tools`: the tool
 *   pattern it holds, matched in full (every tool when unset);
 * - `user-plane`: the user-plane channel connects, observe-only; `user-plane-control`: it also
 *   carries the user-plane verbs (D28); `user-plane-env`: a variable the channel reads itself;
 * - `source-url`, `source-key`, `source-poll` (seconds), `source-deltas`: a bridge's server;
 * - `lane-url`, `lane-token-file`: the daemon an attached native lane joins (D30).
 */
export type OptionTarget =
  | 'gate'
  | 'gate-tools'
  | 'user-plane'
  | 'user-plane-control'
  | 'user-plane-env'
  | 'source-url'
  | 'source-key'
  | 'source-poll'
  | 'source-deltas'
  | 'lane-url'
  | 'lane-token-file';

/** The targets an option turns on (a flag without a value; its variable is on at `1`, `true` or `yes`). */
export const SWITCHES: ReadonlySet<OptionTarget> = new Set([
  'gate',
  'user-plane',
  'user-plane-control',
  'source-deltas',
]);

/**
 * One flag of `aep-steer adapter <token>` that only this vendor's adapter takes (D16: with its
 * variable). The vendor's folder declares them (`options.ts`); the command reads any vendor's.
 */
export interface VendorOption {
  /** As commander spells it: `--hub-url <url>` takes a value; a switch has none (`--hub`). */
  flag: string;
  /** Read when the flag is absent. */
  env: string;
  /** What it does on this vendor, for `--help` (which adds the variable and the default). */
  help: string;
  sets: OptionTarget;
  /** The value when neither the flag nor the variable gives one. */
  default?: string;
}

/** How a surface is built from its table: the opt-in held gate and its tool pattern. */
export interface SurfaceOptions {
  /** Turns on the table's opt-in held gate (its `gate` option). */
  control?: boolean;
  /** Tool pattern for the gate; every tool when absent or empty. */
  gateTools?: string;
  /** D48: the rules that mark a held request risky; the built-in rules when absent. */
  policy?: RiskPolicy;
}

export type MomentRow = ContextRow | ObserveRow | HeldRow | EndRow | GatedRow;

/** Hook input → observation events (AEP-0002 Annex A). An empty list means deliberately none. */
export type MapRule = (input: HookInput) => ObservationSpec[];

export interface InstallOptions {
  /** Project directory for a project-level install. */
  project?: string;
  /** User-level install (the default when no project is given). */
  user?: boolean;
  port: number;
  secret: string;
  /** The vendor's neutral reply, printed by the shim on any failure (D15). */
  neutral: unknown;
  attentionTimeoutMs: number;
  env?: NodeJS.ProcessEnv;
}

/** Writes and removes a vendor's hook configuration; removal touches only the adapter's own hooks. */
export interface Installer {
  install(opts: InstallOptions): InstallReport;
  uninstall(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport;
  /** One line on where the configuration goes, for `--help`. */
  describeTarget: string;
  /** The file `install` writes for these options (`aep-steer doctor` reads it). */
  file(opts: Pick<InstallOptions, 'project' | 'user'>, env?: NodeJS.ProcessEnv): string;
  /** What else must hold for the hooks to fire (Copilot's folder trust), for `aep-steer doctor`. */
  checks?(
    opts: Pick<InstallOptions, 'project' | 'user'>,
    env: NodeJS.ProcessEnv,
  ): { name: string; ok: boolean; detail: string; fix?: string }[];
}

/** What a bridge source is started with: the agent server's address and key (flags or environment). */
interface SourceOptions {
  url: string;
  key?: string;
  pollMs: number;
  deltas: boolean;
  /** The table's control gate is on: the source also supplies its lane (send_input and the controls). */
  control: boolean;
  /** What the adapter's log holds from earlier runs (a restart resumes from it). */
  history: readonly AepEvent[];
  onError: (e: SteeringError) => void;
}

/** A running bridge source: arrivals for the pipeline, its health for `/healthz`. */
export interface BridgeSource {
  arrivals$: Observable<HookArrival>;
  /** The lane send_input and the forwarded controls go through, when the control gate is on. */
  lane?: Lane;
  health(): Record<string, unknown>;
  close(): Promise<void>;
}

/**
 * A vendor observed over its own server instead of hooks (OpenHands): how to start it. Its
 * settings are the vendor's `source-*` options (D16).
 */
export interface SourceSpec {
  start(opts: SourceOptions): BridgeSource;
}

export interface VendorTable {
  /** AEP agent token: envelope `agent` and `x.{token}.…` (vendor-surfaces §0.2). */
  token: string;
  /** The vendor CLI version the rows were observed on. */
  version: string;
  /** `instruct` for context-injecting vendors, `send_input` for user-plane ones (D1). */
  steering: 'instruct' | 'send_input';
  /**
   * The user-plane verb `x.{token}.control.send_input` and how the vendor treats that input
   * (D28, D29). A table may offer it beside instruct; its channel is the adapter's to supply.
   */
  sendInput?: InputPolicy;
  /** The channel send_input and the other user-plane verbs go through. */
  userPlane?: UserPlane;
  /**
   * D30: the vendor's native lanes beside the hook lane, each with its evidence: owned by the
   * adapter and opened by \`aep-steer run\` (\`app-server\`), or attached to a daemon by URL (\`serve\`).
   */
  lanes?: readonly LaneSpec[];
  /** D33: what `control.cancel` can do on this vendor, for every place that offers Stop. */
  cancel?: CancelRow;
  /** D44: who keeps what waits, with the vendor's own queue calls. */
  queue?: QueueRow;
  /**
   * D31: the deliveries instruct's hook lane honours, with the evidence. `queue` needs a moment
   * that opens a turn (a row with `turn: 'opens'`), `steer` an eligible moment inside a running
   * turn (and rows marking the turn's ends). Absent: `moment` only.
   */
  deliveries?: { honours: readonly Delivery[]; evidence: string };
  /** Commands carried out on the vendor's own API under the control gate (VendorSurface.controls). */
  controls?: readonly string[];
  /** Default hook port (D15). */
  port: number;
  /** Attention timeout default (D14). */
  attentionTimeoutMs: number;
  /** Reads the vendor's session id and hook event name; undefined when the body lacks them. */
  identify: (input: HookInput) => { session: string; event: string } | undefined;
  /** D7: true when the hook fired inside a subagent, whose context never reaches the main agent. */
  subagent: (input: HookInput) => boolean;
  moments: Record<string, MomentRow>;
  /**
   * D34: names the tool call a hook is about, the same for its held request and for the moment
   * that reports it ran (rows with `ran`); absent where no such moment follows a dialog answer.
   */
  callOf?: (input: HookInput) => string | undefined;
  /**
   * The flags only this vendor's adapter takes, each with its variable (D16), and what each sets:
   * the opt-in gate that enables the `gated` rows (and a bridge's writes) exists exactly when one
   * sets `gate`.
   */
  options?: readonly VendorOption[];
  /** Why a hook with no row is not eligible (kept on the classification for the log). */
  unlistedReason: string;
  replies: {
    /** Body of the neutral reply; undefined means an empty 200 (D15). */
    neutral: unknown;
    /** Body of a reply carrying steering text at an eligible moment (D8). */
    context: (event: string, text: string) => unknown;
    /**
     * D27: the reply's top-level field that the vendor shows the user and does not send to the
     * model, with the evidence; absent where the vendor has none.
     */
    userNotice?: { field: string; evidence: string };
    /**
     * D27, D43: why no reply can tell the person anything (no such field), so a steer's sender
     * or who started a turn is not shown at the agent; exactly one of this and `userNotice`.
     */
    noUserNotice?: { why: string; evidence: string };
  };
  maps: Record<string, MapRule>;
  /** Observations for a hook with no `maps` rule; `x.{token}.session.<snake_case>` when absent. */
  fallback?: MapRule;
  /** How `aep-steer install <token>` wires the vendor's hooks to the adapter. */
  installer?: Installer;
  /** Where `aep-steer install mcp <token>` puts the MCP server, for a vendor that orchestrates. */
  mcp?: McpConfig;
  /** The vendor's CLI, for `aep-steer doctor` to compare its version with `version`. */
  cli?: { bin: string; install: string };
  /**
   * D26: instructions expire after this long (D10 `expired`) unless `AEP_INSTRUCT_TTL_MS` says
   * otherwise; D37: every vendor has one, DEFAULT_INSTRUCT_TTL_MS when absent.
   */
  instructTtlMs?: number;
  /** A bridge vendor's server connection; hook vendors have none. */
  source?: SourceSpec;
  /** D45: a hook's observations from what the vendor writes just after it (bounded; the reply never waits). */
  later?: (event: string, input: HookInput) => (() => Promise<ObservationSpec[]>) | undefined;
  /** D37: the session's working directory and prompts as the hook input carries them; absent: none. */
  describe?: (input: HookInput, event: string) => SessionAbout;
  /** D37: the stale window; DEFAULT_STALE_AFTER_MS when absent. */
  staleAfterMs?: number;
  /**
   * D43: why a session this vendor's lanes do not reach cannot be started from outside (the
   * interactive TUI's own way in is closed), with the evidence; the lanes that can say how themselves.
   */
  startNote?: { text: string; evidence: string };
  /**
   * D43: a vendor steered only through send_input that still takes instruct, but only to start a
   * turn in an idle session (its channel's `startTurn`): no moment of it carries steering.
   */
  instructStarts?: true;
  /** How `up` and `run` check that the vendor's CLI would find its model credentials (loaded on use). */
  credentials?: () => Promise<CredentialCheck>;
}

/** D37: `cwd` from one field of every hook input, a prompt from named fields of named moments. */
export const describeBy =
  (cwdField: string, prompts: Record<string, string>) =>
  (input: HookInput, event: string): SessionAbout => {
    const about: SessionAbout = {};
    const cwd = str(input[cwdField]);
    if (cwd !== undefined && cwd !== '') about.cwd = cwd;
    const field = prompts[event];
    const prompt = field === undefined ? undefined : str(input[field]);
    if (prompt !== undefined && prompt.trim() !== '') about.prompt = prompt;
    return about;
  };

/** D26 default TTL: one hour. */
export const DEFAULT_INSTRUCT_TTL_MS = 3_600_000;

/** `PostToolUseFailure` → `post_tool_use_failure`, `pre_llm_call` unchanged. */
export const snakeCase = (name: string): string =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .toLowerCase();

/** The fallback observation for a hook with no Annex A mapping: `x.{token}.session.<snake_case>`. */
export const fallbackType = (token: string, event: string): string =>
  vendorType(token, `session.${snakeCase(event) || 'unknown'}`);

/** AEP-0001 §6 mechanical fallback for hooks a later vendor version adds: the hook name, no data. */
export const mechanicalFallback =
  (token: string): MapRule =>
  (input) => [{ type: fallbackType(token, str(input.hook_event_name) ?? 'unknown'), data: {} }];

/** D7: a hook fired inside a subagent carries its `agent_id`. */
export const carriesAgentId = (input: HookInput): boolean => str(input.agent_id) !== undefined;

/** Reads `session` and `event` from two top-level string fields. */
export const byFields = (sessionField: string, eventField: string) => (input: HookInput) => {
  const session = input[sessionField];
  const event = input[eventField];
  if (typeof session !== 'string' || session === '' || typeof event !== 'string' || event === '') return undefined;
  return { session, event };
};

/**
 * Vendor end reasons are free text; they collapse to `normal` unless they plainly name a timeout,
 * a kill, an error or a compaction (the AEP mapping fixtures: `prompt_input_exit`, `shutdown`,
 * `window closed` → `normal`).
 */
export function collapseEndReason(raw: unknown): EndReason {
  if (typeof raw !== 'string') return 'normal';
  const r = raw.toLowerCase();
  if (/timed?[_ -]?out|idle|expir/.test(r)) return 'timeout';
  if (/kill|signal|terminat/.test(r)) return 'killed';
  if (/error|crash|fail/.test(r)) return 'error';
  if (/compact/.test(r)) return 'compaction';
  return 'normal';
}

/**
 * The context reply Claude Code, Codex and Qwen Code share: `hookEventName` must equal the firing
 * event or the context is dropped (vendor-clis-observed §1.7).
 */
export const hookSpecificOutputContext = (event: string, text: string): unknown => ({
  hookSpecificOutput: { hookEventName: event, additionalContext: text },
});

/** Canned deny message when the operator picks `deny` without words (vendor-surfaces §1.5, §2.4). */
export const OPERATOR_DENIED = 'The operator denied this through AEP control.attention.respond.';

/** The reply to a held PermissionRequest in the shape Claude Code, Codex and Qwen Code read. */
export const permissionRequestReply = (decision: Record<string, unknown>): unknown => ({
  hookSpecificOutput: { hookEventName: 'PermissionRequest', decision },
});

/** Allow, or deny with the operator's words (else the canned message): `decision { behavior, message? }` only. */
export const allowOrDeny = (_hook: ClassifiedHook, d: HeldDecision): unknown =>
  permissionRequestReply(
    d.option === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: d.message ?? OPERATOR_DENIED },
  );

/** A tool call held for permission, allow or deny unless other options are given (D13). */
export const permissionHold = (
  prompt: string,
  tool: string,
  context: Record<string, unknown>,
  options = [
    { id: 'allow', label: 'Allow' },
    { id: 'deny', label: 'Deny' },
  ],
  detail?: string,
): HeldSpec => ({
  hold: 'permission',
  request: { kind: 'permission', prompt, subject: tool, options, context, ...(detail === undefined ? {} : { detail }) },
});

/** The same, asked as `<token> requests permission to use <tool>`, with what the tool will do (D35). */
export const toolPermissionHold = (
  token: string,
  tool: string,
  context: Record<string, unknown>,
  options?: { id: string; label: string }[],
  detail?: string,
): HeldSpec => permissionHold(`${token} requests permission to use ${tool}`, tool, context, options, detail);
