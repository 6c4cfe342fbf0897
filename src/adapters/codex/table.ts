// Codex 0.171.0 as a table: command hooks through the shim, context on five moments of which four
// reach the main agent (D7), PermissionRequest held (D13, D14), SessionEnd the drop moment (D10),
// and the AEP-0002 Annex A mapping (vendor-surfaces §2.2; turn_id is the AEP run).
import { obj, str } from '../hook-input.js';
import { compact, namedToolCompleted, namedToolRequested, sessionStartedBy, withAnswer } from '../hook-maps.js';
import { codexInstaller } from './installer.js';
import { codexMcp } from './mcp.js';
import { codexAppServer } from './app-server/spec.js';
import { allowOrDeny, hookSpecificOutputContext, mechanicalFallback, permissionHold } from '../table.js';
import type { HeldSpec, HookInput, MapRule, VendorTable } from '../table.js';
import { dialectSession, endReason } from '../claude-dialect.js';

const TOKEN = 'codex';
const E2E = `e2e/${TOKEN}`;
const DELIVERY = 'e2e/codex-delivery';
const RESUMED = `${E2E}#steered between runs: an instruction sent after codex exec ends reaches the first model request of codex exec resume`;

/** Codex turn scope is the AEP run (fixture identity `run_from: turn_id`). */
const withRun = (input: HookInput, spec: { type: string; data?: Record<string, unknown>; subject?: string }) => {
  const out: { type: string; data: Record<string, unknown>; subject?: string; run?: string } = {
    type: spec.type,
    data: compact(spec.data ?? {}),
  };
  if (spec.subject !== undefined) out.subject = spec.subject;
  const run = str(input.turn_id);
  if (run !== undefined) out.run = run;
  return out;
};

const maps: Record<string, MapRule> = {
  SessionStart: sessionStartedBy(TOKEN),
  UserPromptSubmit: (input) => [withRun(input, { type: 'run.started', data: { trigger: 'user' } })],
  Stop: (input) => [withAnswer(withRun(input, { type: 'run.finished', data: {} }), input)],
  PreToolUse: (input) => namedToolRequested(input).map((o) => withRun(input, o)),
  // No failure hook exists: non-zero exits land here too (vendor-surfaces §2.2).
  PostToolUse: (input) => namedToolCompleted(input).map((o) => withRun(input, o)),
  // Held: the runtime raises attention.requested from the classification (D14).
  PermissionRequest: () => [],
  SubagentStart: (input) => [
    withRun(input, {
      type: 'delegation.subagent.started',
      data: { agent_type: str(input.agent_type) },
      subject: str(input.agent_id),
    }),
  ],
  SubagentStop: (input) => [
    withRun(input, {
      type: 'delegation.subagent.stopped',
      data: { agent_type: str(input.agent_type) },
      subject: str(input.agent_id),
    }),
  ],
  // Paired concept: emitted once, at PostCompact (fixture).
  PreCompact: () => [],
  PostCompact: (input) => [{ type: 'session.compacted', data: compact({ trigger: str(input.trigger) }) }],
  // The end moment (D10): the runtime emits session.ended itself, after the drops.
  SessionEnd: () => [],
};

/** `Permission requested: <tool> — <command> (<description>)`, the fixture's prompt. */
function heldPermission(input: HookInput): HeldSpec {
  const tool = str(input.tool_name) ?? 'a tool';
  const toolInput = obj(input.tool_input);
  const command = str(toolInput.command);
  const description = str(toolInput.description);
  const detail =
    command === undefined ? '' : ` \u2014 ${command}${description === undefined ? '' : ` (${description})`}`;
  return permissionHold(`Permission requested: ${tool}${detail}`, tool, { tool_name: tool });
}

export const codex: VendorTable = {
  token: TOKEN,
  version: '0.171.0',
  steering: 'instruct',
  port: 8378, // D15
  attentionTimeoutMs: 55_000, // D14
  // D37 (samples/codex-0.171.0.json); D7: subagent hooks carry the parent's session_id plus agent_id,
  // and their context goes to the subagent.
  ...dialectSession,
  unlistedReason: 'the reply cannot carry additionalContext on this event (vendor-clis-observed §2.1)',
  // D31: UserPromptSubmit opens a turn (queue), Stop ends it. A steer goes through a native lane
  // (the app-server's `turn/steer`, on its receipt): a plain `codex` refuses it, saying how to get one.
  deliveries: {
    honours: ['moment', 'queue'],
    evidence: `${RESUMED}; ${DELIVERY}#steer to a plain codex session is refused unsupported, saying how to get the lane, while a moment sent meanwhile reaches the same turn`,
  },
  // D30: a session whose TUI runs on the adapter's app-server (`aep-steer run codex`) is also
  // reached by `turn/steer`; a plain `codex` runs on a server of its own (0.171.0: a managed daemon that outlives the TUI) and has the hook lane only.
  lanes: [codexAppServer],
  // D44: the app-server takes steers only (turn/steer), so everything queued is the adapter's own.
  queue: {
    keeps: 'adapter',
    calls:
      'none: the app-server has no next-turn queue; the adapter keeps what waits and edits, moves and promotes it itself',
    evidence:
      'e2e/codex-app-server#queue sent mid-turn reaches the first request of the next turn; a withdrawn one never reaches the model',
  },
  // D33: only the app-server stops a turn (`turn/interrupt`). Observed on 0.171.0: the turn ends
  // `interrupted` while a running shell command goes on under the server until it exits.
  cancel: {
    by: ['app-server'],
    how: 'start it with `aep-steer run codex`',
    enable: 'start its adapter with AEP_INSTRUCT=1, and the session with `aep-steer run codex`',
    leaves:
      'a running shell command goes on: run.cancelled names it (left_running); `kill_tools` (`aep-steer cancel --kill-tools`) ends it',
    evidence:
      'e2e/codex-app-server#cancel {scope: run} stops the running turn through turn/interrupt; run.cancelled names the cancel, its run, and the command Codex left running; ' +
      'e2e/codex-app-server#cancel with kill_tools also ends the shell command the vendor would leave running; run.cancelled names it killed; ' +
      'e2e/codex-app-server#a plain `codex exec` session has the hook lane only',
  },
  moments: {
    // `codex exec resume <id>` keeps the session id: the start moment reopens an ended session.
    SessionStart: { role: 'context', starts: true, evidence: RESUMED },
    UserPromptSubmit: { role: 'context', bounds: 'opens', evidence: RESUMED },
    PreToolUse: {
      role: 'context',
      evidence: `${E2E}#PreToolUse delivers a queued instruction to the request carrying the tool result`,
    },
    PostToolUse: {
      role: 'context',
      evidence: `${E2E}#PostToolUse takes what PreToolUse could not fit, and neither instruction is split`,
    },
    SubagentStart: {
      role: 'observe',
      reason: 'context goes to the subagent (D7)',
      evidence: `${E2E}#a subagent's hooks never take the main session's queue`,
    },
    SubagentStop: {
      role: 'observe',
      reason: 'the reply cannot carry additionalContext',
      evidence: 'vendor-clis-observed §2.7',
    },
    Stop: {
      role: 'observe',
      bounds: 'closes',
      reason: 'only decision:block continues the turn; context is not accepted',
      evidence: 'vendor-clis-observed §2.7',
    },
    PreCompact: {
      role: 'observe',
      reason: 'no hookSpecificOutput on this event',
      evidence: 'vendor-clis-observed §2.7',
    },
    PostCompact: {
      role: 'observe',
      reason: 'no hookSpecificOutput on this event',
      evidence: 'vendor-clis-observed §2.7',
    },
    // Codex's output schema is `decision { behavior, message? }` only; it fails closed on `interrupt`,
    // `updatedInput` or `updatedPermissions`, so none is ever sent (vendor-surfaces §2.4).
    PermissionRequest: { role: 'held', hold: heldPermission, decide: allowOrDeny, evidence: 'vendor-surfaces §2.4' },
    // Fires at the end of every `codex exec`, each resume included, with `reason: "other"` (normal).
    // D25: the queue outlives one `exec` for 30 minutes, the way orchestration scripts drive Codex.
    SessionEnd: {
      role: 'end',
      since: '0.171.0',
      reason: endReason,
      resumeWindowMs: 30 * 60_000,
      evidence: `${E2E}#an instruction still queued at SessionEnd waits out the resume window, then drops before any later start`,
    },
  },
  replies: {
    // Empty stdout: Codex treats non-JSON stdout on SessionStart/UserPromptSubmit as context, and
    // ignores the whole output when anything in it is off (vendor-clis-observed §2.7).
    neutral: undefined,
    context: hookSpecificOutputContext,
    // D27: a common output field of every Codex hook schema (vendor-clis-observed §2.7). Observed:
    // `codex exec` 0.171.0 prints only the hook's status, not the message; the TUI shows it as
    // `↳ Hook · <message>`, for a turn begun on the app-server too (e2e/codex-start).
    userNotice: {
      field: 'systemMessage',
      evidence: `${E2E}#systemMessage passes Codex's output schema and never reaches the model, while the instruction does`,
    },
  },
  maps,
  // AEP-0001 §6 mechanical fallback for hooks a later version adds.
  fallback: mechanicalFallback(TOKEN),
  installer: codexInstaller,
  mcp: codexMcp,
  cli: { bin: 'codex', install: 'npm install -g @openai/codex@0.171.0' },
  // What `up` and `run` check before the CLI runs: its model credentials.
  credentials: async () => (await import('./credentials.js')).codexCredentials,
};
