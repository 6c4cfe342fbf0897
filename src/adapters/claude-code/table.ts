// Claude Code 2.1.332 as a table: its hook moments, which of them may carry steering (D7) and on
// what evidence, its held loops (D13, D14), its end moment (D10) and its AEP-0002 Annex A mapping.
import type { EventData } from '../../protocol/envelope.js';
import type { ClassifiedHook, HeldDecision } from '../../streams/surface.js';
import * as m from '../hook-maps.js';
import { claudeCodeInstaller } from './installer.js';
import { claudeCodeMcp } from './mcp.js';
import { claudeStreamJson } from './stream-json/spec.js';
import { arr, obj, str as text } from '../hook-input.js';
import {
  allowOrDeny,
  hookSpecificOutputContext,
  OPERATOR_DENIED,
  permissionRequestReply,
  toolPermissionHold,
  type HeldSpec,
  type HookInput,
  type VendorTable,
} from '../table.js';
import { toolDetail } from '../tool-detail.js';
import { dialectSession, endReason } from '../claude-dialect.js';

const TOKEN = 'claude-code';

// --- held loop: PermissionRequest (kind permission, or a form for AskUserQuestion) -------------

/** AskUserQuestion arrives through PermissionRequest: one form per call, one field per question (AEP-0006). */
function askUserQuestionForm(toolInput: Record<string, unknown>): HeldSpec {
  const questions = arr(toolInput.questions).map(obj);
  const fields: EventData[] = questions.map((q, i) => {
    const question = text(q.question) ?? '';
    const header = text(q.header);
    const field: EventData = {
      id: String(i + 1),
      type: 'select',
      label: header === undefined ? question : `${header}: ${question}`,
      required: true,
      // Claude Code's dialog always offers an "Other" answer, so free text is allowed.
      other: true,
      choices: arr(q.options)
        .map(obj)
        .map((o, j) => ({ id: String(j + 1), label: text(o.label) ?? String(j + 1) })),
    };
    if (q.multiSelect === true) field.multi = true;
    return field;
  });
  const n = questions.length;
  return {
    hold: 'elicitation',
    request: {
      kind: 'form',
      prompt: `${TOKEN} asks ${n} question${n === 1 ? '' : 's'}`,
      fields,
      context: { tool_name: 'AskUserQuestion', tool_input: toolInput },
    },
  };
}

function permissionHold(input: HookInput): HeldSpec {
  const tool = text(input.tool_name) ?? 'a tool';
  const toolInput = obj(input.tool_input);
  if (tool === 'AskUserQuestion') return askUserQuestionForm(toolInput);
  return toolPermissionHold(TOKEN, tool, { tool_name: tool, tool_input: toolInput }, undefined, toolDetail(toolInput));
}

/**
 * D34: PermissionRequest carries no tool_use_id, so a call is named by its tool and input, which
 * PostToolUse repeats as sent. Answered Yes in the dialog, 2.1.332 leaves the held hook running
 * and reports the call through PostToolUse; No and Esc interrupt the turn and end the hook.
 */
const callOf = (input: HookInput): string | undefined => {
  const tool = text(input.tool_name);
  return tool === undefined || input.tool_input === undefined ? undefined : `${tool} ${m.digest(input.tool_input)}`;
};

/** Maps answer values (choice ids, or free text where `other` allows it) back to Claude Code's answers. */
function askUserQuestionAnswers(
  toolInput: Record<string, unknown>,
  values: Record<string, unknown>,
): Record<string, string> {
  const answers: Record<string, string> = {};
  arr(toolInput.questions)
    .map(obj)
    .forEach((q, i) => {
      const labels = arr(q.options)
        .map(obj)
        .map((o) => text(o.label) ?? '');
      const value = values[String(i + 1)];
      const one = (v: unknown): string => {
        const s = String(v);
        const idx = /^[1-9][0-9]*$/.test(s) ? Number(s) - 1 : -1;
        return idx >= 0 && idx < labels.length ? labels[idx]! : s;
      };
      if (value === undefined || value === null) return;
      answers[text(q.question) ?? String(i + 1)] = Array.isArray(value) ? value.map(one).join(', ') : one(value);
    });
  return answers;
}

function decidePermission(hook: ClassifiedHook, d: HeldDecision): unknown {
  if (hook.class.kind !== 'held') return {};
  const ctx = obj(hook.class.request.context);
  if (hook.class.request.kind === 'form') {
    if (d.values === undefined || d.option === 'deny' || d.option === 'cancel') {
      return permissionRequestReply({ behavior: 'deny', message: d.message ?? OPERATOR_DENIED });
    }
    const toolInput = obj(ctx.tool_input);
    return permissionRequestReply({
      behavior: 'allow',
      updatedInput: { ...toolInput, answers: askUserQuestionAnswers(toolInput, d.values) },
    });
  }
  return allowOrDeny(hook, d);
}

// --- held loop: Elicitation (an MCP server's form) ----------------------------------------------

/** MCP elicitation → AEP-0006 form: field ids are the schema keys, enum choices are closed. */
function elicitationHold(input: HookInput): HeldSpec {
  // 2.1.332 sends `requested_schema`; MCP itself names it `requestedSchema`.
  const schema = obj(input.requested_schema ?? input.requestedSchema);
  const required = new Set(arr(schema.required).filter((r): r is string => typeof r === 'string'));
  const fields: EventData[] = Object.entries(obj(schema.properties)).map(([key, raw]) => {
    const p = obj(raw);
    const label = text(p.title) ?? key;
    if (Array.isArray(p.enum)) {
      const names = arr(p.enumNames);
      return {
        id: key,
        type: 'select',
        label,
        required: required.has(key),
        choices: p.enum.map((v, i) => ({ id: String(v), label: text(names[i]) ?? String(v) })),
      };
    }
    const type = p.type === 'integer' || p.type === 'number' ? 'number' : p.type === 'boolean' ? 'boolean' : 'string';
    const field: EventData = { id: key, type, label, required: required.has(key) };
    if (type === 'number' && typeof p.minimum === 'number') field.min = p.minimum;
    if (type === 'number' && typeof p.maximum === 'number') field.max = p.maximum;
    return field;
  });
  return {
    hold: 'elicitation',
    request: {
      kind: 'form',
      prompt: text(input.message) ?? `${TOKEN} requests input (${fields.length} fields)`,
      subject: text(input.mcp_server_name),
      fields,
      context: { mcp_server_name: input.mcp_server_name, elicitation_id: input.elicitation_id },
    },
  };
}

function decideElicitation(_hook: ClassifiedHook, d: HeldDecision): unknown {
  const action =
    d.option === 'decline' || d.option === 'deny' ? 'decline' : d.option === 'cancel' ? 'cancel' : 'accept';
  const out: Record<string, unknown> = { hookEventName: 'Elicitation', action };
  if (action === 'accept') out.content = d.values ?? {};
  return { hookSpecificOutput: out };
}

// --- the table -------------------------------------------------------------------------------

const E2E = `e2e/${TOKEN}`;

export const claudeCode: VendorTable = {
  // An interactive claude takes outside input only through Channels, which 2.1.332 keeps off.
  startNote: {
    text: 'an interactive claude TUI cannot be started from outside: its Channels are off in Claude Code 2.1.332 (the server-side flag tengu_harbor)',
    evidence:
      'e2e/claude-channels (the development channel is ignored: "Channels are not currently available"); copilot-opencode-observed §3',
  },
  token: TOKEN,
  version: '2.1.332',
  steering: 'instruct',
  port: 8377, // D15
  attentionTimeoutMs: 55_000, // D14
  // D37 (samples/claude-code-2.1.332.json); D7: hooks fired inside a subagent carry agent_id, and
  // their context goes to the subagent.
  ...dialectSession,
  unlistedReason: 'the reply accepts no context (vendor-clis-observed §1.7)',
  callOf,
  // D31: UserPromptSubmit is the first moment of a turn (queue); PreToolUse, PostToolUse and
  // Stop fall inside one (steer), between UserPromptSubmit and the Stop that ends it.
  deliveries: {
    honours: ['moment', 'steer', 'queue'],
    evidence:
      `${E2E}#UserPromptSubmit delivers an instruction queued between turns; ${E2E}#PreToolUse delivers a queued instruction to the next model request; ` +
      `${E2E}-delivery#steer sent while a slow tool runs reaches the same turn at PostToolUse; with no turn running it is refused session-idle`,
  },
  // D30: a headless session run by `aep-steer run claude -p` is also reached through its stream-json
  // input; a person's `claude` keeps the hook lane only.
  lanes: [claudeStreamJson],
  // D44: what waits is the adapter's on both lanes: stream-json's `priority: "later"` messages can be
  // taken back (`cancel_async_message`) but not edited or reordered, so a headless run's `queue`
  // sent during a turn stays here and all of it goes over at the turn's end as the next turn's start.
  queue: {
    keeps: 'adapter',
    calls:
      "stream-json: what waits goes over at a turn end as user messages that start the next turn (D43), all at once in the queue's order, none while paused or after a cancel; cancel_async_message takes back an unread steer; no edit or reorder call is used",
    evidence:
      'e2e/claude-stream-queue-verbs#queue three, edit the second, move the third first, pause: nothing at the turn end; resumed, the next turn carries them in the new order',
  },
  // D33: only the stream-json lane stops a turn (its `interrupt` control request); a person's
  // `claude` in a terminal is reached by hooks alone, which cannot.
  cancel: {
    by: ['stream-json'],
    how: 'run it headless with `aep-steer run claude -p`',
    enable: 'start its adapter with AEP_INSTRUCT=1, and run the session headless with `aep-steer run claude -p`',
    evidence:
      'e2e/claude-stream-lane#cancel {scope: run} takes back what waits, stops the turn through interrupt; then a steer is refused session-idle',
  },
  moments: {
    // `--resume` and `--continue` keep the session id: the start moment reopens an ended session
    // (e2e: "a resumed session reopens: refused after SessionEnd, accepted once --resume starts it, delivered at
    // Stop").
    SessionStart: { role: 'context', starts: true, evidence: 'vendor-clis-observed §1.8' },
    UserPromptSubmit: {
      role: 'context',
      bounds: 'opens',
      evidence: `${E2E}#UserPromptSubmit delivers an instruction queued between turns`,
    },
    UserPromptExpansion: { role: 'context', evidence: 'vendor-clis-observed §1.8' },
    PreToolUse: {
      role: 'context',
      evidence: `${E2E}#PreToolUse delivers a queued instruction to the next model request`,
    },
    PostToolUse: {
      role: 'context',
      evidence: `${E2E}#joined instructions over 10,000 characters arrive over two moments, none split`,
      ran: { evidence: `e2e/claude-code-tui#a permission answered Yes in the TUI ends the request via oob` },
    },
    PostToolUseFailure: {
      role: 'context',
      evidence: `${E2E}#PostToolUseFailure delivers an instruction queued while the failing tool ran`,
      ran: { evidence: 'the same call, run and failed, after a Yes in the dialog' },
    },
    PostToolBatch: { role: 'context', evidence: 'vendor-clis-observed §1.8' },
    Stop: {
      role: 'context',
      bounds: 'closes',
      // Context at Stop makes the model take another turn; the second Stop must stay neutral (§1.7).
      unless: (input) =>
        input.stop_hook_active === false ? undefined : 'Stop with stop_hook_active set (vendor-clis-observed §1.7)',
      evidence: `${E2E}#Stop delivers while stop_hook_active is false and the model takes another turn`,
    },
    PostModelSwitch: { role: 'context', evidence: 'vendor-clis-observed §1.8' },
    SubagentStart: {
      role: 'observe',
      reason: 'context goes to the subagent (D7)',
      evidence: 'vendor-clis-observed §1.8',
    },
    SubagentStop: {
      role: 'observe',
      reason: 'context goes to the subagent (D7)',
      evidence: 'vendor-clis-observed §1.8',
    },
    Setup: { role: 'observe', reason: 'context accepted but dropped under -p', evidence: 'vendor-clis-observed §1.8' },
    Notification: { role: 'observe', reason: 'consumption never observed', evidence: 'vendor-clis-observed §1.8' },
    PermissionRequest: {
      role: 'held',
      hold: permissionHold,
      decide: decidePermission,
      evidence: `${E2E}#PermissionRequest answered allow runs the tool, answered deny does not`,
    },
    Elicitation: { role: 'held', hold: elicitationHold, decide: decideElicitation, evidence: 'vendor-surfaces §1.5' },
    // `reason` (clear, logout, prompt_input_exit, other, …) names no failure: normal (vendor-surfaces §1.2).
    SessionEnd: {
      role: 'end',
      reason: endReason,
      evidence: `${E2E}#an instruction still queued at SessionEnd is dropped before session.ended`,
    },
  },
  replies: {
    // "print nothing or {}" is neutral for every event (vendor-clis-observed §1.7).
    neutral: {},
    context: hookSpecificOutputContext,
    // D27: `systemMessage` is shown to the user, not sent to the model (vendor-clis-observed §1.7).
    userNotice: {
      field: 'systemMessage',
      evidence: `${E2E}#systemMessage is shown to the user and absent from the model request, while the instruction reaches the model`,
    },
  },
  // AEP-0002 Annex A, Claude Code table (vendor-surfaces §1.2).
  maps: {
    SessionStart: m.sessionStarted(TOKEN),
    // The runtime emits session.ended itself, after the drops (D10, AEP-0002 §7).
    SessionEnd: m.none,
    UserPromptSubmit: m.runStarted,
    // Only the first Stop of a turn ends the run: a second one follows context given at Stop,
    // and a run has at most one terminal (AEP-0002 §5).
    Stop: (input) =>
      input.stop_hook_active === true
        ? m.vendorSession(`x.${TOKEN}.session.stop`, ['stop_hook_active'])(input)
        : m.runFinished(input),
    StopFailure: m.runFailed,
    PreToolUse: m.toolRequested,
    PostToolUse: m.toolCompleted,
    PostToolUseFailure: m.toolFailed,
    PermissionDenied: m.toolDenied,
    // Held loops: the runtime raises attention.requested from the classification itself.
    PermissionRequest: m.none,
    Elicitation: m.none,
    SubagentStart: m.subagentStarted,
    SubagentStop: m.subagentStopped,
    PreCompact: m.none,
    PostCompact: m.sessionCompacted,
    TaskCreated: m.taskPlanned,
    TaskCompleted: m.taskCompleted,
    Notification: m.progressStatus,
    // Annex A: not captured.
    MessageDisplay: m.none,
    UserPromptExpansion: m.none,
    PostToolBatch: m.none,
    // Opt-in environment hooks: vendor-scoped.
    Setup: m.vendorSession(`x.${TOKEN}.session.setup`, ['trigger']),
    InstructionsLoaded: m.vendorSession(`x.${TOKEN}.session.instructions_loaded`, ['memory_type', 'load_reason']),
    ConfigChange: m.vendorSession(`x.${TOKEN}.session.config_change`, ['source']),
    CwdChanged: m.vendorSession(`x.${TOKEN}.session.cwd_changed`),
    FileChanged: m.vendorSession(`x.${TOKEN}.session.file_changed`),
    WorktreeCreate: m.vendorSession(`x.${TOKEN}.session.worktree_create`),
    WorktreeRemove: m.vendorSession(`x.${TOKEN}.session.worktree_remove`),
  },
  installer: claudeCodeInstaller,
  mcp: claudeCodeMcp,
  cli: { bin: 'claude', install: 'npm install -g @anthropic-ai/claude-code@2.1.332' },
  // What `up` and `run` check before the CLI runs: its model credentials.
  credentials: async () => (await import('./credentials.js')).claudeCredentials,
};
