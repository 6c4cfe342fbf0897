// A small VendorSurface shaped like Claude Code's hooks, for tests: event name in
// `hook_event_name`, session in `session_id`, `agent_id` marks a subagent, context replies as
// `{hookSpecificOutput:{hookEventName, additionalContext}}`. A vendor table is not under test here.
import { SteeringError } from '../../src/protocol/index.js';
import type { ClassifiedHook, HeldDecision, HookReply, VendorSurface } from '../../src/streams/surface.js';

const CONTEXT_MOMENTS = new Set(['SessionStart', 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop']);

export function fakeSurface(overrides: Partial<VendorSurface> = {}): VendorSurface {
  return {
    token: 'claude-code',
    steeringType: 'x.claude-code.control.instruct',
    port: 8377,
    attentionTimeoutMs: 55_000,
    holds: true,
    classify(input): ClassifiedHook {
      const event = input.hook_event_name;
      const session = input.session_id;
      if (typeof event !== 'string' || typeof session !== 'string')
        throw new SteeringError('HOOK_BODY_INVALID', 'hook_event_name and session_id are required');
      const observations =
        event === 'SessionStart'
          ? [{ type: 'session.started', data: {} }]
          : event === 'PreToolUse'
            ? [{ type: 'tool.requested', data: { tool: { name: String(input.tool_name ?? 'tool') } } }]
            : event === 'TeammateIdle'
              ? [
                  { type: 'agent.idle', data: {} },
                  { type: 'progress.status', data: { phase: 'idle' } },
                ]
              : [];
      if (event === 'SessionEnd')
        return {
          session,
          event,
          class: { kind: 'end', reason: input.reason === 'killed' ? 'killed' : 'normal' },
          observations: [{ type: 'x.claude-code.session.session_end' }],
        };
      if (event === 'PermissionRequest') {
        return {
          session,
          event,
          observations,
          class: {
            kind: 'held',
            hold: 'permission',
            request: { kind: 'permission', prompt: 'Run a command?', subject: String(input.tool_name ?? 'tool') },
          },
        };
      }
      if (event === 'Elicitation') {
        return {
          session,
          event,
          observations,
          class: {
            kind: 'held',
            hold: 'elicitation',
            request: {
              kind: 'form',
              prompt: 'Which?',
              fields: [{ id: 'name', type: 'string', label: 'Name', required: true }],
            },
          },
        };
      }
      const subagent = input.agent_id !== undefined;
      const stopActive = event === 'Stop' && input.stop_hook_active === true;
      const eligible = CONTEXT_MOMENTS.has(event) && !subagent && !stopActive;
      // SessionStart is the start moment that reopens an ended session.
      return {
        session,
        event,
        observations,
        class:
          event === 'SessionStart' && !subagent
            ? { kind: 'moment', eligible, starts: true }
            : { kind: 'moment', eligible },
      };
    },
    contextReply(hook, text): HookReply {
      return { body: { hookSpecificOutput: { hookEventName: hook.event, additionalContext: text } } };
    },
    neutralReply(): HookReply {
      return { body: {} };
    },
    decisionReply(hook, decision: HeldDecision | undefined): HookReply {
      if (!decision) return { body: {} };
      const d: Record<string, unknown> = { behavior: decision.option };
      if (decision.message !== undefined) d.message = decision.message;
      return { body: { hookSpecificOutput: { hookEventName: hook.event, decision: d } } };
    },
    ...overrides,
  };
}

export const hookBody = (
  event: string,
  session: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  session_id: session,
  hook_event_name: event,
  ...extra,
});
