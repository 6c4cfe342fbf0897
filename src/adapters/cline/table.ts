// Cline 3.0.65 (subprocess hook files) as a table. Identity and the rows rest on what the real CLI
// did (vendor-clis-observed §4, cline-hub-observed §1.5): the hub session is
// `sessionContext.rootSessionId`, not `taskId`; only PreToolUse and PostToolUse are blocking, and
// their `contextModification` reached the next model request, so they alone carry instructions.
// The user-plane verb send_input and the approval loop ride the hub (hub/), with
// the idle refusal and the merge rule of D28 as the table's input policy.
import type { ObservationSpec, SessionAbout } from '../../streams/surface.js';
import { arr, int, obj, str } from '../hook-input.js';
import { compact, digest } from '../hook-maps.js';
import { clineInstaller } from './installer.js';
import { clineOptions } from './options.js';
import { collapseEndReason, type HookInput, type MapRule, type VendorTable } from '../table.js';

const TOKEN = 'cline';
const OBS = 'vendor-clis-observed §4.3';
const HUB = 'cline-hub-observed §1.4';

/** Hook file name → the `hookName` Cline puts on stdin (vendor-clis-observed §4.3). */
export const CLINE_HOOK_FILES = {
  TaskStart: 'agent_start',
  TaskResume: 'agent_resume',
  TaskCancel: 'agent_abort',
  TaskComplete: 'agent_end',
  TaskError: 'agent_error',
  PreToolUse: 'tool_call',
  PostToolUse: 'tool_result',
  UserPromptSubmit: 'prompt_submit',
  PreCompact: 'pre_compact',
  SessionShutdown: 'session_shutdown',
} as const;

/** The hub session id; older payloads (and the AEP fixture) carry only `taskId`. */
export const clineSession = (input: HookInput): string | undefined =>
  str(obj(input.sessionContext).rootSessionId) ?? str(input.taskId);

/**
 * D37: the session's workspace, which every hook input names (`workspaceInfo.rootPath`, else the
 * first of `workspaceRoots`); Cline sends no working directory of its own. No title: its one
 * prompt-bearing hook (`prompt_submit`) fires for a mid-turn steer, not for a turn's prompt.
 */
function clineAbout(input: HookInput): SessionAbout {
  const cwd =
    str(obj(input.workspaceInfo).rootPath) ??
    arr(input.workspaceRoots)
      .map(str)
      .find((r) => r !== undefined);
  return cwd === undefined ? {} : { cwd };
}

/** A typed parent id marks a spawned agent: its moments are the child's, never the main agent's (D7). */
const parented = (input: HookInput): boolean => str(input.parent_agent_id) !== undefined;

/** `iteration` stamps the envelope step as a plain string (AEP-0002 Annex A, Cline table). */
function spec(
  input: HookInput,
  type: string,
  data: Record<string, unknown>,
  extra: Partial<ObservationSpec> = {},
): ObservationSpec {
  const out: ObservationSpec = { type, data: compact(data) };
  const iteration = int(input.iteration);
  if (iteration !== undefined) out.step = String(iteration);
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) (out as unknown as Record<string, unknown>)[k] = v;
  return out;
}

const child = (
  input: HookInput,
  type: 'delegation.subagent.started' | 'delegation.subagent.stopped',
): ObservationSpec[] => (parented(input) ? [{ type, data: {}, subject: str(input.agent_id) } as ObservationSpec] : []);

const toolOf = (record: Record<string, unknown>) =>
  compact({ name: str(record.name) ?? 'unknown', call_id: str(record.id) });

const maps: Record<string, MapRule> = {
  agent_start: (input) => [
    ...child(input, 'delegation.subagent.started'),
    { type: 'run.started', data: { trigger: 'user' } },
  ],
  agent_resume: () => [{ type: 'run.started', data: { trigger: 'resume' } }],
  agent_end: (input) => [spec(input, 'run.finished', {}), ...child(input, 'delegation.subagent.stopped')],
  // A cancellation, not a failure; the free-text reason stays out at capture metadata.
  agent_abort: (input) => [
    spec(input, 'run.cancelled', { by: 'user' }),
    ...child(input, 'delegation.subagent.stopped'),
  ],
  agent_error: (input) => {
    const name = str(obj(input.error).name) ?? 'error';
    return [
      spec(input, 'run.failed', { reason: name, error: { type: name } }, { severity: 'error' }),
      ...child(input, 'delegation.subagent.stopped'),
    ];
  },
  tool_call: (input) => {
    const call = obj(input.tool_call);
    return [
      spec(
        input,
        'tool.requested',
        { tool: toolOf(call), args_digest: call.input === undefined ? undefined : digest(call.input) },
        { subject: str(call.name) },
      ),
    ];
  },
  tool_result: (input) => {
    const r = obj(input.tool_result);
    const failed = r.error !== undefined && r.error !== null;
    if (failed)
      return [
        spec(
          input,
          'tool.failed',
          { tool: toolOf(r), duration_ms: int(r.durationMs), error: { type: 'tool_error' } },
          { subject: str(r.name), severity: 'warning' },
        ),
      ];
    return [
      spec(
        input,
        'tool.completed',
        {
          tool: toolOf(r),
          duration_ms: int(r.durationMs),
          result_digest: r.output === undefined ? undefined : digest(r.output),
        },
        { subject: str(r.name) },
      ),
    ];
  },
  prompt_submit: () => [{ type: `x.${TOKEN}.prompt.submitted`, data: {} }],
  pre_compact: (input) => {
    const c = obj(input.preCompact);
    return [
      {
        type: 'session.compacted',
        data: compact({
          strategy: str(c.compactionStrategy),
          'gen_ai.usage.input_tokens': int(c.tokensIn),
          'gen_ai.usage.output_tokens': int(c.tokensOut),
        }),
      },
    ];
  },
  // The end moment (D10): the runtime emits session.ended itself, after the drops.
  session_shutdown: () => [],
};

/** Hooks a later Cline adds: `x.cline.<hook name, underscores as dots>` (fixture: some_future_hook). */
function clineFallback(input: HookInput): ObservationSpec[] {
  const parts = (str(input.hookName) ?? 'unknown')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((p) => p !== '');
  return [
    {
      type: parts.length >= 2 ? `x.${TOKEN}.${parts.join('.')}` : `x.${TOKEN}.session.${parts[0] ?? 'unknown'}`,
      data: {},
    },
  ];
}

const notRead = 'fire-and-forget in Cline 3.0.65: its reply is never read';

export const cline: VendorTable = {
  token: TOKEN,
  version: '3.0.65',
  steering: 'instruct',
  port: 8392, // D15
  attentionTimeoutMs: 55_000, // D14
  // D28: on 3.0.65 `queue` and `steer` both start a turn on an idle hub session, and two pending
  // prompts with the same text merge into one; the hub reports each consumption.
  sendInput: {
    deliveries: ['queue', 'steer'],
    defaultDelivery: 'queue',
    refuseIdle: true,
    reportsConsumption: true,
    mergesIdentical: true,
  },
  // The hub, turned on by the options (options.ts): observe-only, or with its verbs.
  options: clineOptions,
  userPlane: {
    cancels: true, // hub run.abort; on 3.0.65 the abort lands back as the SessionShutdown hook
    approvals: true, // hub approval.requested / approval.respond
    // D32: a prompt still pending is listed (`session.pending_prompts`) and removed
    // (`session.remove_pending_prompt`); e2e/cline-delivery "a queued send_input withdrawn while the turn runs".
    withdraws: true,
    // Loaded when the hub is opened: the table alone (the hook fallback) needs no socket code.
    open: async (env, onError, onNote) => {
      const [{ HubConnection }, { resolveHubEndpoint }, { hubLane }] = await Promise.all([
        import('./hub/connection.js'),
        import('./hub/endpoint.js'),
        import('./hub/lane.js'),
      ]);
      const hub = new HubConnection({
        endpoint: () => resolveHubEndpoint(env),
        onError,
        ...(onNote === undefined
          ? {}
          : { onBack: (url: string) => onNote(`Cline hub: connected to ${url}; hub control on`) }),
      });
      return hubLane(hub);
    },
  },
  // D44: instruct's queue is the adapter's own (the hub lane carries send_input, not instruct); the
  // hub's own pending prompts (update_pending_prompt, remove_pending_prompt) hold send_input only.
  queue: {
    keeps: 'adapter',
    calls:
      'the hub has session.update_pending_prompt {promptId, prompt?, delivery?}, session.remove_pending_prompt and session.steer_first_pending_prompt; instruct never puts items there, so the adapter edits, moves and promotes its own queue',
    evidence:
      'e2e/cline-delivery#a withdrawn instruct never reaches the model: dropped withdrawn, cause-linked to the withdraw',
  },
  // D33: the hub's run.abort stops any of its sessions' turns, once the adapter has hub control.
  cancel: {
    by: ['user-plane'],
    how: 'turn on the hub control (AEP_CLINE_HUB_CONTROL=1) on its adapter',
    enable: 'start its adapter with AEP_CLINE_HUB_CONTROL=1',
    evidence: 'e2e/cline#control.cancel aborts the run and run.cancelled names the command',
  },
  describe: clineAbout,
  identify: (input) => {
    const session = clineSession(input);
    const event = str(input.hookName);
    return session === undefined || event === undefined ? undefined : { session, event };
  },
  subagent: parented,
  unlistedReason: 'only PreToolUse and PostToolUse replies are read by Cline 3.0.65',
  // D31: instruct's hook lane reaches the running turn (tool_call and tool_result fall between
  // agent_start and agent_end) but has no moment that opens one: `queue` is send_input's (D28).
  deliveries: {
    honours: ['moment', 'steer'],
    evidence: 'e2e/cline#instruct reaches the next model request after a tool call',
  },
  moments: {
    // A new turn reopens a session its shutdown moment ended: on 3.0.65 a hub run.abort fires
    // SessionShutdown, yet the hub session stays and takes further turns.
    agent_start: { role: 'observe', turn: 'opens', starts: true, reason: notRead, evidence: OBS },
    agent_resume: { role: 'observe', turn: 'opens', reason: notRead, evidence: OBS },
    // PreToolUse and PostToolUse block the turn they belong to; TaskStart is detached and, on a
    // loaded host, was seen to arrive after PreToolUse (send_input was then refused as idle).
    tool_call: {
      role: 'context',
      turn: 'within',
      evidence: 'e2e/cline#instruct reaches the next model request after a tool call',
    },
    tool_result: {
      role: 'context',
      turn: 'within',
      evidence: 'e2e/cline#instruct reaches the next model request after a tool call',
    },
    agent_end: { role: 'observe', turn: 'closes', reason: notRead, evidence: HUB },
    agent_abort: {
      role: 'observe',
      turn: 'closes',
      reason: notRead,
      evidence: 'e2e/cline#control.cancel aborts the run and run.cancelled names the command',
    },
    agent_error: { role: 'observe', turn: 'closes', reason: notRead, evidence: OBS },
    prompt_submit: {
      role: 'observe',
      reason: 'detached in Cline 3.0.65; it fires for a mid-turn steer',
      evidence: 'cline-hub-observed §1.5',
    },
    session_shutdown: {
      role: 'end',
      reason: (input) => collapseEndReason(input.reason),
      evidence: 'e2e/cline#control.cancel aborts the run and run.cancelled names the command',
    },
  },
  replies: {
    // An empty object: no cancel, no context, nothing the agent acts on.
    neutral: {},
    context: (_event, text) => ({ contextModification: text }),
    noUserNotice: {
      why: 'Cline 3.0.65 reads cancel and contextModification from a hook reply: the context goes to the model, nothing to the user alone',
      evidence: 'vendor-clis-observed §4.3',
    },
  },
  maps,
  fallback: clineFallback,
  installer: clineInstaller,
  cli: { bin: 'cline', install: 'npm install -g cline@3.0.65' },
  // What `up` and `run` check before the CLI runs: its model credentials.
  credentials: async () => (await import('./credentials.js')).clineCredentials,
};
