// GitHub Copilot CLI 1.0.102 as a table (D50): repository command hooks (`.github/hooks/*.json`,
// only in a trusted folder) whose `additionalContext` reaches the model at sessionStart,
// userPromptSubmitted and postToolUse, and the headless JSON-RPC server that `aep-steer run
// copilot` hosts a session on (server/). What each hook and each server call was seen to do is in
// copilot-opencode-observed §1; the rows cite it. Copilot's hook input names no event: the
// installer's command adds `hook_event_name` (installer.ts).
import { str } from '../hook-input.js';
import { digest, observation as spec, withAnswer } from '../hook-maps.js';
import { OPERATOR_DENIED, collapseEndReason, describeBy, mechanicalFallback, toolPermissionHold } from '../table.js';
import { toolDetail } from '../tool-detail.js';
import type { HeldSpec, HookInput, MapRule, VendorTable } from '../table.js';
import type { ClassifiedHook, HeldDecision } from '../../streams/surface.js';
import { gateOptions } from '../gate-options.js';
import { copilotInstaller } from './installer.js';
import { copilotServer } from './server/spec.js';
import { transcriptAnswer } from './transcript.js';

const TOKEN = 'copilot';
const OBS = 'copilot-opencode-observed §1';
const HOOKS = `${OBS} (hooks: where each additionalContext landed)`;

const tool = (input: HookInput) => ({ name: str(input.toolName) ?? 'unknown' });
const argsDigest = (input: HookInput): string | undefined =>
  input.toolArgs === undefined ? undefined : digest(input.toolArgs);

const maps: Record<string, MapRule> = {
  sessionStart: (input) => [spec('session.started', { client: { name: TOKEN }, trigger: str(input.source) })],
  // The end moment (D10): the runtime emits session.ended itself, after the drops.
  sessionEnd: () => [],
  userPromptSubmitted: () => [spec('run.started', { trigger: 'user' })],
  // With its answer once the transcript has it (`later` below).
  agentStop: (input) => [spec('run.finished', { reason: str(input.stopReason) })],
  errorOccurred: () => [{ ...spec('run.failed', { reason: 'error' }), severity: 'error' }],
  preToolUse: (input) => [spec('tool.requested', { tool: tool(input), args_digest: argsDigest(input) })],
  postToolUse: (input) => [
    spec('tool.completed', {
      tool: tool(input),
      result_digest: input.toolResult === undefined ? undefined : digest(input.toolResult),
    }),
  ],
  postToolUseFailure: (input) => [
    { ...spec('tool.failed', { tool: tool(input), error: { type: 'tool_error' } }), severity: 'warning' },
  ],
  // The held request is the hook's own (moments below): nothing more to record.
  permissionRequest: () => [],
};

/** D34, D35: the tool and what it will do (`toolInput`: a shell command's text, a path, a URL). */
const heldPermission = (input: HookInput): HeldSpec => {
  const name = tool(input).name;
  return toolPermissionHold(TOKEN, name, { tool_name: name }, undefined, toolDetail(input.toolInput));
};

/** Copilot reads `{behavior}` at the top level; a deny's `message` becomes the tool's result (observed). */
const decidePermission = (_hook: ClassifiedHook, d: HeldDecision): unknown =>
  d.option === 'allow' ? { behavior: 'allow' } : { behavior: 'deny', message: d.message ?? OPERATOR_DENIED };

/** A hook fired inside a subagent names it (subagentStart/Stop carry the agent; main-agent hooks do not). */
const subagent = (input: HookInput): boolean => str(input.agentId) !== undefined || str(input.agent_id) !== undefined;

export const copilot: VendorTable = {
  token: TOKEN,
  version: '1.0.102',
  steering: 'instruct',
  port: 8395, // D15
  attentionTimeoutMs: 55_000, // D14
  identify: (input) => {
    const session = str(input.sessionId);
    const event = str(input.hook_event_name) ?? str(input.hookName);
    return session === undefined || session === '' || event === undefined ? undefined : { session, event };
  },
  subagent,
  describe: describeBy('cwd', { userPromptSubmitted: 'prompt', sessionStart: 'initialPrompt' }),
  unlistedReason: `the reply carries no context Copilot CLI was seen to consume (${OBS})`,
  // D31: userPromptSubmitted opens a turn (queue rides it), postToolUse falls inside one (steer).
  deliveries: {
    honours: ['moment', 'steer', 'queue'],
    evidence: `${HOOKS}: userPromptSubmitted context is appended to the prompt; postToolUse context to the tool result, in the same turn's next request`,
  },
  // D30: a session `aep-steer run copilot` hosts on the headless server is also steered there.
  lanes: [copilotServer],
  // D44: what waits is the adapter's: the server's queue takes a send for good (its edit calls are
  // experimental), so the adapter hands one over per turn end, as a start, and the verbs act here.
  queue: {
    keeps: 'adapter',
    calls:
      'server: a queued instruction goes over as `session.send` when a turn ends (a start, D43), one per turn end, none while paused or after a cancel; session.queue.updateText, moveItem, sendNow and setDrainPaused are not used',
    evidence:
      'e2e/copilot-queue-verbs#queue three, edit the second, move the third first, pause and resume: the turns after open with them in that order',
  },
  // D33: only the server stops a turn (`session.abort`); a person's `copilot` is reached by hooks alone.
  cancel: {
    by: ['server'],
    how: 'host the session with `aep-steer run copilot`',
    enable: 'start its adapter with AEP_INSTRUCT=1 and host the session with `aep-steer run copilot`',
    evidence: `${OBS} (headless server: session.abort → abort, assistant.turn_end); test/adapters/copilot/server-lane.test.ts`,
  },
  // The held permissionRequest gate is opt-in, scoped by a tool regex.
  options: gateOptions('AEP_COPILOT', 'permissionRequest'),
  moments: {
    sessionStart: { role: 'context', starts: true, evidence: `${HOOKS}: its own user message` },
    userPromptSubmitted: { role: 'context', bounds: 'opens', evidence: `${HOOKS}: inside <system_reminder>` },
    postToolUse: { role: 'context', evidence: `${HOOKS}: appended to the tool result` },
    preToolUse: {
      role: 'observe',
      reason: 'its context was seen only beside permissionDecision "allow", which would also approve the call',
      evidence: HOOKS,
    },
    postToolUseFailure: { role: 'observe', reason: 'not seen carrying context on 1.0.102', evidence: OBS },
    agentStop: {
      role: 'observe',
      bounds: 'closes',
      reason: 'it reads only decision "block", which starts another prompt, not context',
      evidence: HOOKS,
    },
    // Opt-in (D13): the hook fires for every call, --allow-all or not, so holding it by default
    // would stop each call for an answer. Left neutral, Copilot decides its own way (its rules, its
    // prompt, or the server's permission.requested the server lane holds; one a hook settled arrives
    // `resolvedByHook` and is not held twice).
    permissionRequest: {
      role: 'gated',
      tool: (input) => tool(input).name,
      hold: heldPermission,
      decide: decidePermission,
      open: {
        role: 'observe',
        reason: 'it fires for every tool call, allowed or not; held only with the gate on (AEP_COPILOT_CONTROL=1)',
        evidence: OBS,
      },
      evidence: `${OBS} (permissionRequest fires before each tool call, with or without --allow-all); e2e/copilot-hook-permissions: {behavior:"allow"} runs the call, {behavior:"deny",message} makes the message its result`,
    },
    sessionEnd: { role: 'end', reason: (input) => collapseEndReason(input.reason), evidence: `${OBS} (sessionEnd)` },
  },
  replies: {
    // An empty object changes nothing; `additionalContext` is read at the context moments.
    neutral: {},
    context: (_event, text) => ({ additionalContext: text }),
    noUserNotice: {
      why: "Copilot CLI 1.0.102 puts a hook reply's additionalContext in the model's request; no reply field was seen shown to the person alone",
      evidence: 'copilot-opencode-observed §1 (hook output table)',
    },
  },
  maps,
  // D45: the turn's final answer, from the transcript the agentStop hook names (transcript.ts).
  later: (event, input) =>
    event !== 'agentStop'
      ? undefined
      : async () => [
          withAnswer(maps.agentStop!(input)[0]!, {
            last_assistant_message: await transcriptAnswer(input),
          }),
        ],
  fallback: mechanicalFallback(TOKEN),
  installer: copilotInstaller,
  cli: { bin: 'copilot', install: 'npm install -g @github/copilot@1.0.102' },
  credentials: async () => (await import('./credentials.js')).copilotCredentials,
};
