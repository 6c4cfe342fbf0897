// Qwen Code 0.24.4 as a table: native HTTP hooks straight to the adapter, context consumed on five
// moments (D7: PreToolUse, SubagentStart and Stop context is parsed and dropped on this version),
// PermissionRequest held (D13, D14), SessionEnd the drop moment (D10), and the AEP-0002 Annex A
// mapping (vendor-surfaces §3.2). Qwen escapes `<` and `>` in the context it forwards (§3.6).
import { int, obj, str } from '../hook-input.js';
import { namedMaps, observation as spec, sessionStartedBy, toolOf, withAnswer } from '../hook-maps.js';
import { qwenCodeInstaller } from './installer.js';
import { qwenCodeOptions } from './options.js';
import { qwenServe } from './serve/spec.js';
import {
  DEFAULT_INSTRUCT_TTL_MS,
  allowOrDeny,
  hookSpecificOutputContext,
  mechanicalFallback,
  permissionHold,
} from '../table.js';
import type { HeldSpec, HookInput, MapRule, VendorTable } from '../table.js';
import { dialectSession, endReason } from '../claude-dialect.js';

const TOKEN = 'qwen-code';
const E2E = `e2e/${TOKEN}`;

/**
 * Qwen fires TodoCreated and TodoCompleted twice per write; only the persisted (postWrite) firing is the fact
 * (fixture).
 */
const persisted = (input: HookInput): boolean => input.phase !== 'validation';

const maps: Record<string, MapRule> = {
  SessionStart: sessionStartedBy(TOKEN, ['permission_mode']),
  // The end moment (D10): the runtime emits session.ended itself, after the drops.
  SessionEnd: () => [],
  // The empty-prompt refire after each tool batch continues the run; it starts none (vendor-clis-observed §3.4).
  UserPromptSubmit: (input) => (input.prompt === '' ? [] : [spec('run.started', { trigger: 'user' })]),
  // D45: the turn's final answer (`last_assistant_message`, vendor-clis-observed §3.5) is what `read` shows.
  Stop: (input) => [withAnswer(spec('run.finished', { 'gen_ai.usage.input_tokens': int(input.input_tokens) }), input)],
  StopFailure: (input) => [{ ...spec('run.failed', { reason: str(input.error) ?? 'error' }), severity: 'error' }],
  ...namedMaps,
  PostToolUseFailure: (input) => [
    {
      ...spec(
        'tool.failed',
        { tool: toolOf(input), error: { type: input.is_interrupt === true ? 'interrupt' : 'tool_error' } },
        str(input.tool_name),
      ),
      severity: 'warning',
    },
  ],
  // Annex A: the batch summary repeats the per-tool events.
  PostToolBatch: () => [],
  // Held: the runtime raises attention.requested from the classification (D14).
  PermissionRequest: () => [],
  PreCompact: () => [],
  PostCompact: (input) => [spec('session.compacted', { trigger: str(input.trigger) })],
  // permission_prompt duplicates PermissionRequest (fixture); other notifications are status.
  Notification: (input) =>
    input.notification_type === 'permission_prompt' ? [] : [spec('progress.status', {}, str(input.notification_type))],
  TodoCreated: (input) => (persisted(input) ? [spec('progress.task.planned', {}, str(input.todo_id))] : []),
  TodoCompleted: (input) => (persisted(input) ? [spec('progress.task.completed', {}, str(input.todo_id))] : []),
};

function heldPermission(input: HookInput): HeldSpec {
  const tool = str(input.tool_name) ?? 'a tool';
  const command = str(obj(input.tool_input).command);
  return permissionHold(`Permission requested: ${tool}${command === undefined ? '' : ` \u2014 ${command}`}`, tool, {
    tool_name: tool,
  });
}

export const qwenCode: VendorTable = {
  token: TOKEN,
  version: '0.24.4',
  steering: 'instruct',
  port: 8380, // D15
  attentionTimeoutMs: 55_000, // D14
  // D37 (samples/qwen-code-0.24.4.json); D7: hooks fired inside a subagent carry agent_id.
  ...dialectSession,
  unlistedReason: 'the reply carries no context Qwen Code consumes (vendor-clis-observed §3.7)',
  // D30: sessions hosted by `qwen serve` also take mid-turn messages (`steer`), prompts of their
  // own (`queue`: the next turn, or the turn it starts when none runs) and cancels. The adapter
  // attaches to the daemon its options name.
  lanes: [qwenServe],
  options: qwenCodeOptions,
  // D44: what waits is the adapter's: the daemon's pending prompts can be listed and removed but not
  // edited or reordered, so a `queue` sent during a turn stays here and all of it goes over as one
  // prompt at the turn's end.
  queue: {
    keeps: 'adapter',
    calls:
      "serve: what waits goes over at a turn end as one POST /session/:id/prompt, the texts in the queue's order, each command delivered by that prompt's start; none while paused or after a cancel; DELETE /session/:id/pending-prompts/:promptId takes back a prompt handed over alone; no edit or reorder call is used",
    evidence:
      'e2e/qwen-serve-queue-verbs#queue three, edit the second, move the third first, pause: nothing at the turn end; resumed, one prompt opens the next turn with all three in the new order',
  },
  // D33: only a `qwen serve` daemon stops a turn (`POST /session/:id/cancel`); the TUI's hooks cannot.
  cancel: {
    by: ['serve'],
    how: 'host the session on a `qwen serve` daemon and start the adapter with `--serve URL`',
    enable: 'start its adapter with AEP_INSTRUCT=1 and `--serve URL` of the `qwen serve` daemon that hosts the session',
    evidence:
      'e2e/qwen-serve-adapter#control.cancel {scope: run} stops the turn through the lane; run.cancelled names the cancel',
  },
  moments: {
    // `--continue` keeps the session id: the start moment reopens an ended session.
    SessionStart: {
      role: 'context',
      starts: true,
      evidence: `${E2E}#SessionStart of a continued session delivers into the system message`,
    },
    // Also fires with prompt "" after each tool batch: still a main-agent moment (§3.4).
    UserPromptSubmit: {
      role: 'context',
      evidence: `${E2E}#UserPromptSubmit delivers, also on the empty-prompt refire after a tool batch`,
    },
    PostToolUse: { role: 'context', evidence: `${E2E}#PreToolUse is ineligible and leaves the queue for PostToolUse` },
    PostToolUseFailure: { role: 'context', evidence: 'vendor-clis-observed §3.7' },
    PostToolBatch: {
      role: 'context',
      evidence: `${E2E}#UserPromptSubmit delivers, also on the empty-prompt refire after a tool batch`,
    },
    PreToolUse: {
      role: 'observe',
      reason: 'context parsed, then dropped on 0.24.4 (D7)',
      evidence: `${E2E}#PreToolUse is ineligible and leaves the queue for PostToolUse`,
    },
    SubagentStart: {
      role: 'observe',
      reason: 'context dropped for built-in agents on 0.24.4 (D7)',
      evidence: 'vendor-clis-observed §3.7',
    },
    // D43: the turn is over for instruct at Stop; a `qwen serve` daemon still counts it running
    // for about 0.65 s (0.24.4), and a start sent then begins the next turn (serve/lane.ts).
    Stop: {
      role: 'observe',
      reason: 'context starts no new model request headless (D7)',
      bounds: 'closes',
      evidence: `e2e/qwen-serve-start#a start sent right after the Stop hook begins a turn of its own`,
    },
    PreCompact: {
      role: 'observe',
      reason: 'context reaches only the compaction request',
      evidence: 'vendor-clis-observed §3.7',
    },
    // Qwen reads `hookSpecificOutput.decision { behavior, message }` (PermissionRequestHookOutput in 0.24.4).
    PermissionRequest: { role: 'held', hold: heldPermission, decide: allowOrDeny, evidence: 'vendor-surfaces §3.4' },
    // Does not fire headless (-p); fires in the interactive UI, ACP mode and on /clear (§3.4).
    SessionEnd: { role: 'end', reason: endReason, evidence: 'vendor-surfaces §3.5' },
  },
  replies: {
    // Qwen reads JSON only with content-type application/json; `{}` is "continue" (0.24.4 HttpHookRunner).
    neutral: {},
    context: hookSpecificOutputContext,
    noUserNotice: {
      why: 'Qwen Code 0.24.4 reads hookSpecificOutput, decision and reason from a hook reply; nothing in it is shown to the user alone',
      evidence: 'vendor-clis-observed §3.6',
    },
  },
  maps,
  // AEP-0001 §6 mechanical fallback for hooks a later version adds.
  fallback: mechanicalFallback(TOKEN),
  installer: qwenCodeInstaller,
  cli: { bin: 'qwen', install: 'npm install -g @qwen-code/qwen-code@0.24.4' },
  // D26: SessionEnd never fires headless, so a finished `qwen -p` session would keep its queue
  // forever (e2e: "a finished headless session never ends: an instruction to it is dropped expired under a short TTL").
  instructTtlMs: DEFAULT_INSTRUCT_TTL_MS,
  // What `up` and `run` check before the CLI runs: its model credentials.
  credentials: async () => (await import('./credentials.js')).qwenCredentials,
};
