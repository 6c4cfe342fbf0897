// The minimal vendor table the benches drive: every UserPromptSubmit may carry steering, replies
// are Claude Code shaped. `observations` lets a bench add observation events per hook.
import type { ObservationSpec, VendorSurface } from '../../src/streams/surface.js';

export function benchSurface(
  extra: { holds?: boolean; observations?: (input: Record<string, unknown>) => ObservationSpec[] } = {},
): VendorSurface {
  return {
    token: 'bench-agent',
    steeringType: 'x.bench-agent.control.instruct',
    port: 0,
    attentionTimeoutMs: 55_000,
    ...(extra.holds !== undefined ? { holds: extra.holds } : {}),
    classify: (input) => ({
      session: String(input.session_id),
      event: String(input.hook_event_name),
      observations: extra.observations?.(input) ?? [],
      class: { kind: 'moment', eligible: input.hook_event_name === 'UserPromptSubmit' },
    }),
    contextReply: (hook, text) => ({
      body: { hookSpecificOutput: { hookEventName: hook.event, additionalContext: text } },
    }),
    neutralReply: () => ({ body: {} }),
    decisionReply: () => ({ body: {} }),
  };
}
