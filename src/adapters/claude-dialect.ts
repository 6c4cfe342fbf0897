// What the vendors speaking Claude Code's hook dialect share (Claude Code, and Codex and Qwen Code,
// which copy its field names): a hook names its session and event in `session_id` and
// `hook_event_name` and its directory in `cwd`, UserPromptSubmit carries the prompt, a hook fired
// inside a subagent carries `agent_id`, and SessionEnd says why it ended in `reason`.
import { byFields, carriesAgentId, collapseEndReason, describeBy, type HookInput, type VendorTable } from './table.js';

/** How a dialect hook names its session and event, says where it runs (D37), and tells a subagent's (D7). */
export const dialectSession = {
  identify: byFields('session_id', 'hook_event_name'),
  describe: describeBy('cwd', { UserPromptSubmit: 'prompt' }),
  subagent: carriesAgentId,
} satisfies Partial<VendorTable>;

/** D10: SessionEnd's `reason` as an AEP end reason. */
export const endReason = (input: HookInput) => collapseEndReason(input.reason);
