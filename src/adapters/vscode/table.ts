// VS Code agent (Copilot agent hooks, Preview; source pin 1.129.0) as a table. No VS Code runs
// here, so every row rests on the design record and vendor-surfaces §4: command hooks through the
// shim, context on SessionStart, UserPromptSubmit, SubagentStart, PreToolUse and PostToolUse, an
// opt-in held PreToolUse gate whose reply carries the decision only (D13), and no session end.
import type { ClassifiedHook, HeldDecision } from '../../streams/surface.js';
import { str } from '../hook-input.js';
import { namedMaps, observation as spec, sessionStartedBy } from '../hook-maps.js';
import { vscodeInstaller } from './installer.js';
import { vscodeOptions } from './options.js';
import {
  DEFAULT_INSTRUCT_TTL_MS,
  hookSpecificOutputContext,
  mechanicalFallback,
  toolPermissionHold,
} from '../table.js';
import { toolDetail } from '../tool-detail.js';
import type { HeldSpec, HookInput, MapRule, VendorTable } from '../table.js';

const TOKEN = 'vscode';
const DR = 'vendor-surfaces §4.3';

/** Shown to the model when the operator denies without words (VS Code renders deny reasons in chat). */
const DENY_REASON = 'The operator denied this tool call through AEP control.attention.respond.';

const toolName = (input: HookInput): string => str(input.tool_name) ?? 'unknown';

function preToolHold(input: HookInput): HeldSpec {
  const tool = toolName(input);
  // `ask` hands the call to VS Code's own approval flow (vendor-surfaces §4.4).
  const options = [
    { id: 'allow', label: 'Allow' },
    { id: 'deny', label: 'Deny' },
    { id: 'ask', label: 'Ask in VS Code' },
  ];
  // D35: what the tool will do, as redacted-class text.
  return toolPermissionHold(TOKEN, tool, { tool_name: tool }, options, toolDetail(input.tool_input));
}

/** The decision only, never steering (D13): `permissionDecision` and, for a deny, its reason. */
function decidePreTool(_hook: ClassifiedHook, d: HeldDecision): unknown {
  const decision = d.option === 'allow' || d.option === 'ask' ? d.option : 'deny';
  const out: Record<string, unknown> = { hookEventName: 'PreToolUse', permissionDecision: decision };
  if (decision === 'deny') out.permissionDecisionReason = d.message ?? DENY_REASON;
  return { hookSpecificOutput: out };
}

// AEP-0002 Annex A, VS Code table (vendor-surfaces §4.2). transcript_path never rides.
const maps: Record<string, MapRule> = {
  SessionStart: sessionStartedBy(TOKEN, ['agent_type']),
  UserPromptSubmit: () => [spec('run.started', { trigger: 'user' })],
  ...namedMaps,
  // Only the pre moment exists on this target, so compaction is recorded there, once.
  PreCompact: (input) => [spec('session.compacted', { trigger: str(input.trigger) })],
  Stop: () => [spec('run.finished', {})],
};

export const vscode: VendorTable = {
  token: TOKEN,
  version: '1.129.0',
  steering: 'instruct',
  port: 8381, // D15
  attentionTimeoutMs: 25_000, // D14: inside the vendor's 30 s hook timeout
  // session_id is optional on this surface; a missing one is the "unknown" session (fixture identity).
  identify: (input) => {
    const event = str(input.hook_event_name);
    if (event === undefined) return undefined;
    const session = input.session_id === undefined ? 'unknown' : str(input.session_id);
    return session === undefined ? undefined : { session, event };
  },
  // D7: a hook fired inside a subagent carries agent_id; SubagentStart itself names the subagent
  // it starts and is consumed at that start (design record adoption map).
  subagent: (input) =>
    typeof input.agent_id === 'string' && input.agent_id !== '' && input.hook_event_name !== 'SubagentStart',
  unlistedReason: 'no context surface on this event (vendor-surfaces §4.3)',
  // The PreToolUse gate is opt-in, scoped by a tool regex (vendor-surfaces §4.4).
  options: vscodeOptions,
  // D44: the agent's hooks are its only way in (additionalContext on five moments); no queue of its own is reachable.
  queue: {
    keeps: 'adapter',
    calls:
      'none: what waits rides additionalContext on the next eligible moment, so the adapter keeps it and edits, moves and promotes it itself until then',
    evidence: 'vendor-surfaces §4.3',
  },
  moments: {
    SessionStart: { role: 'context', starts: true, evidence: DR },
    UserPromptSubmit: { role: 'context', evidence: DR },
    SubagentStart: { role: 'context', evidence: DR },
    PreToolUse: {
      role: 'gated',
      tool: toolName,
      hold: preToolHold,
      decide: decidePreTool,
      open: { role: 'context', evidence: DR },
      evidence: 'vendor-surfaces §4.4',
    },
    PostToolUse: { role: 'context', evidence: DR },
    PreCompact: { role: 'observe', reason: 'its hook has no output surface on this vendor', evidence: DR },
    Stop: { role: 'observe', reason: 'not a context moment on this vendor', evidence: DR },
    SubagentStop: { role: 'observe', reason: 'not a context moment on this vendor', evidence: DR },
  },
  replies: {
    neutral: {},
    context: hookSpecificOutputContext,
    noUserNotice: {
      why: 'the VS Code agent hooks (Preview) read hookSpecificOutput only: no field is documented as shown to the user alone',
      evidence: 'vendor-surfaces §4',
    },
  },
  maps,
  // AEP-0001 §6 mechanical fallback; the Preview surface may grow events.
  fallback: mechanicalFallback(TOKEN),
  installer: vscodeInstaller,
  // D26: no end moment on this surface; the queue would live as long as the adapter.
  instructTtlMs: DEFAULT_INSTRUCT_TTL_MS,
};
