// D45: the orchestrator's own session, so the workers `aep-steer mcp` spawns are put under it. The
// MCP server runs as a child of the orchestrating agent and holds no claim of its own, so the
// relay cannot see which session it serves: it is named here, and the relay takes the name only
// for a session claimed now under the sender's own identity (src/relay/spawn-parent.ts). Named by
// `--parent-session` (AEP_PARENT_SESSION), else by the session id the agent gives the processes it
// starts (Claude Code: CLAUDE_CODE_SESSION_ID); a name from the environment is sent only while the
// roster lists that session, so an agent whose session is not on the relay (no hooks) still spawns.
import type { RelayConsumer } from '../consumer/connection.js';

export interface McpParent {
  session: string;
  /** Given by flag or AEP_PARENT_SESSION: always sent (a refusal says why); else only when listed. */
  explicit: boolean;
}

/** The variables agents set for the processes they start, naming their own session. */
const AGENT_SESSION_VARS = ['CLAUDE_CODE_SESSION_ID'];

/** The parent from the flag (which has AEP_PARENT_SESSION as its default), else the agent's environment. */
export function mcpParent(flag: string | undefined, env: NodeJS.ProcessEnv): McpParent | undefined {
  if (flag !== undefined && flag !== '') return { session: flag, explicit: true };
  for (const v of AGENT_SESSION_VARS) {
    const s = env[v];
    if (s !== undefined && s !== '') return { session: s, explicit: false };
  }
  return undefined;
}

/** The parent to name on a spawn now: an explicit one, or the agent's while the roster lists it. */
export async function parentToName(p: McpParent | undefined, c: RelayConsumer): Promise<string | undefined> {
  if (p === undefined || p.explicit) return p?.session;
  const listed = (await c.roster().catch(() => [])).some((e) => e.session === p.session);
  return listed ? p.session : undefined;
}
