// What each event of a session's stream on the `qwen serve` daemon shows in the terminal of
// `aep-steer run qwen-code` and changes in its conversation (conversation.ts): the model's text,
// tool calls, prompts from elsewhere, steers that reached the turn, permissions, turns' ends.
import { rec, SERVE_RUN_EXIT, type Conversation } from './conversation.js';
import { optionsOf, type ServeEvent } from './maps.js';

export function showEvent(c: Conversation, e: ServeEvent): void {
  const prompt = typeof e.data?.promptId === 'string' ? e.data.promptId : e.promptId;
  // Observed on 0.24.4: a turn opens with its prompt's echo or `pending_prompt_started`.
  if (
    prompt !== undefined &&
    !c.completed.has(prompt) &&
    (e.type === 'session_update' || e.type === 'pending_prompt_started')
  )
    c.open.add(prompt);
  switch (e.type) {
    case 'session_update':
      showUpdate(c, rec(e.data?.update));
      return;
    case 'mid_turn_message_injected': {
      const ids = Array.isArray(e.data?.messageIds) ? e.data.messageIds.length : 0;
      c.line(`  ↳ ${ids === 1 ? 'a message' : `${ids} messages`} reached the running turn (a steer)`);
      return;
    }
    case 'permission_request': {
      const requestId = e.data?.requestId;
      if (typeof requestId !== 'string') return;
      c.asked.push({ requestId, options: optionsOf(e) });
      const call = rec(e.data?.toolCall);
      c.line(
        `run: permission asked: ${String(call?.title ?? 'a tool call')}; type y to allow or n to deny (or answer it with \`aep-steer respond\`)`,
      );
      return;
    }
    case 'permission_resolved': {
      const i = c.asked.findIndex((a) => a.requestId === e.data?.requestId);
      if (i === -1) return;
      c.asked.splice(i, 1);
      c.line('run: the permission was answered elsewhere');
      return;
    }
    case 'turn_complete': {
      if (prompt === undefined) return;
      c.completed.add(prompt);
      c.open.delete(prompt);
      c.mine.delete(prompt);
      if (c.midLine) c.write('\n');
      if (e.data?.stopReason === 'cancelled') c.line('run: the turn was stopped');
      c.settle();
      return;
    }
    case 'session_died':
      c.line('run: the daemon ended this session; `aep-steer run qwen-code` opens a new one');
      c.finish(SERVE_RUN_EXIT.ended);
      return;
  }
}

/** A `session_update`: the model's text, a prompt this run did not send, a tool call as it starts. */
function showUpdate(c: Conversation, update: Record<string, unknown> | undefined): void {
  const kind = update?.sessionUpdate;
  const content = rec(update?.content);
  if (kind === 'agent_message_chunk' && typeof content?.text === 'string') c.write(content.text);
  // A prompt this run did not send (a queued instruction, another client) is shown as one.
  else if (kind === 'user_message_chunk' && typeof content?.text === 'string' && !c.sent.has(content.text))
    c.line(`› ${content.text}`);
  else if (kind === 'tool_call_update' && update?.status === 'in_progress') {
    const id = String(update.toolCallId ?? '');
    if (!c.tools.has(id)) {
      c.tools.add(id);
      c.line(`  ⚙ ${String(update.title ?? 'a tool')}`);
    }
  }
}
