// A scripted Claude Code 2.1.332 session for the demo when the real CLI is not installed: the
// hook inputs one `claude -p` run with a single Bash call sends, in the order the CLI fires them
// and with the fields it sends (vendor-clis-observed §1.5, §1.6). Only ids and paths are fresh.
import { randomUUID } from 'node:crypto';

type HookInput = Record<string, unknown> & { hook_event_name: string; session_id: string };

export interface ScriptedSession {
  session: string;
  cwd: string;
  /** The hooks before the model's first request: the session is live on the relay after these. */
  opening: HookInput[];
  /** The tool call: the first of these is the first moment after the instruction can be queued. */
  toolCall: HookInput[];
  /** The end of the turn and of the session (SessionEnd drops anything still queued: D10). */
  closing: HookInput[];
}

export function scriptedSession(
  opts: { session?: string; cwd?: string; home?: string; prompt?: string } = {},
): ScriptedSession {
  const session = opts.session ?? randomUUID();
  const cwd = opts.cwd ?? '/home/dev/project';
  const home = opts.home ?? '/home/dev';
  const transcript = `${home}/.claude/projects/${cwd.replace(/\//g, '-')}/${session}.jsonl`;
  const promptId = randomUUID();
  const toolUseId = `toolu_demo${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  const common = { session_id: session, transcript_path: transcript, cwd };
  const turn = { ...common, prompt_id: promptId, permission_mode: 'bypassPermissions' };
  const tool = {
    ...turn,
    effort: { level: 'medium' },
    tool_name: 'Bash',
    tool_input: { command: 'echo hi', description: 'Print hi' },
    tool_use_id: toolUseId,
  };
  return {
    session,
    cwd,
    opening: [
      { ...common, hook_event_name: 'SessionStart', source: 'startup' },
      { ...turn, hook_event_name: 'UserPromptSubmit', prompt: opts.prompt ?? 'Say hi from the shell.' },
    ],
    toolCall: [
      { ...tool, hook_event_name: 'PreToolUse' },
      {
        ...tool,
        hook_event_name: 'PostToolUse',
        tool_response: { stdout: 'hi', stderr: '', interrupted: false, isImage: false, noOutputExpected: false },
        duration_ms: 114,
      },
      {
        ...turn,
        effort: { level: 'medium' },
        hook_event_name: 'PostToolBatch',
        tool_calls: [{ tool_name: 'Bash', tool_input: tool.tool_input, tool_use_id: toolUseId, tool_response: 'hi' }],
      },
    ],
    closing: [
      {
        ...turn,
        effort: { level: 'medium' },
        hook_event_name: 'Stop',
        stop_hook_active: false,
        last_assistant_message: 'Printed hi.',
        background_tasks: [],
        session_crons: [],
      },
      { ...common, prompt_id: promptId, hook_event_name: 'SessionEnd', reason: 'other' },
    ],
  };
}
