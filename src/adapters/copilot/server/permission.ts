// A `permission.requested` event of the Copilot server as a held request (D34, D35): what the tool
// asks to do, as the server's own prompt details show it (`promptRequest`: a shell command's full
// text, a path, a URL), answered allow or deny. One a `permissionRequest` hook already settled
// (`resolvedByHook`) needs no answer and is not held.
import { toolPermissionHold } from '../../table.js';
import type { AttentionRequestSpec } from '../../../streams/surface.js';

const PROMPT_DETAIL = ['fullCommandText', 'path', 'fileName', 'url', 'toolName'] as const;

export function copilotPermission(
  data: Record<string, unknown>,
): { id: string; request: AttentionRequestSpec } | undefined {
  const id = data.requestId;
  if (typeof id !== 'string' || data.resolvedByHook === true) return undefined;
  const prompt = (data.promptRequest ?? {}) as Record<string, unknown>;
  const asked = (data.permissionRequest ?? {}) as Record<string, unknown>;
  const kind = typeof prompt.kind === 'string' ? prompt.kind : typeof asked.kind === 'string' ? asked.kind : 'tool';
  const tool = kind === 'commands' ? 'bash' : kind;
  const detail = PROMPT_DETAIL.map((f) => prompt[f]).find((v): v is string => typeof v === 'string' && v !== '');
  const context = { tool_name: tool, request_id: id };
  return { id, request: toolPermissionHold('copilot', tool, context, undefined, detail).request };
}
