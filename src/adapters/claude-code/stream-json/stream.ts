// Claude Code's stream-json input and output (`claude -p --input-format stream-json
// --output-format stream-json --verbose --replay-user-messages`) as pure maps: the lines the lane
// writes, and what a line the CLI printed means to the lane. Observed on 2.1.332 against the
// loopback mock (e2e/claude-stream-json; docs/vendors.md, Claude Code notes).
import { createHash } from 'node:crypto';
import { recordShape } from '../../../protocol/wire-shapes.js';

export type Line = Record<string, unknown>;

/**
 * The message uuid a command id travels under: a UUID v4 shape (the CLI keys its acknowledgments
 * and withdrawals by it), derived from the command id so a resend carries the same one and the
 * CLI reads it once.
 */
export function uuidFor(commandId: string): string {
  const h = createHash('sha256').update(`aep-steer:${commandId}`).digest('hex');
  const variant = ((Number.parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * A user message. No priority: folded into the running turn (its next request carries it in the
 * running tool's result); `later`: a turn of its own after the running one ends.
 */
export const userLine = (uuid: string, text: string, priority?: 'later'): Line => ({
  type: 'user',
  message: { role: 'user', content: text },
  uuid,
  parent_tool_use_id: null,
  session_id: '',
  ...(priority === undefined ? {} : { priority }),
});

export const controlLine = (requestId: string, request: Line): Line => ({
  type: 'control_request',
  request_id: requestId,
  request,
});

/** What one output line says to the lane. */
export type StreamEvent =
  | { kind: 'init'; session: string }
  | { kind: 'result'; session?: string; status: string; interrupted: boolean }
  /** The message was read into the model's input: `command_lifecycle started`, or its `isReplay` echo. */
  | { kind: 'read'; uuid: string }
  /** The message will never be read (`command_lifecycle cancelled`). */
  | { kind: 'cancelled'; uuid: string }
  | { kind: 'answer'; requestId: string; ok: boolean; response: Line }
  | { kind: 'other' };

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function readLine(l: Line): StreamEvent {
  switch (l.type) {
    case 'system':
      return l.subtype === 'init' && str(l.session_id) !== undefined
        ? { kind: 'init', session: l.session_id as string }
        : { kind: 'other' };
    case 'result': {
      // Observed: an interrupted or aborted turn ends with `terminal_reason` naming the abort.
      const reason = String(l.terminal_reason ?? '');
      return {
        kind: 'result',
        ...(str(l.session_id) === undefined ? {} : { session: l.session_id as string }),
        status: String(l.subtype ?? 'unknown'),
        interrupted: /abort|interrupt/i.test(reason),
      };
    }
    case 'command_lifecycle': {
      const uuid = str(l.command_uuid);
      if (uuid === undefined) return { kind: 'other' };
      if (l.state === 'started') return { kind: 'read', uuid };
      if (l.state === 'cancelled') return { kind: 'cancelled', uuid };
      return { kind: 'other' };
    }
    case 'user':
      return l.isReplay === true && str(l.uuid) !== undefined
        ? { kind: 'read', uuid: l.uuid as string }
        : { kind: 'other' };
    case 'control_response': {
      const r = (l.response ?? {}) as Line;
      const requestId = str(r.request_id);
      if (requestId === undefined) return { kind: 'other' };
      return {
        kind: 'answer',
        requestId,
        ok: r.subtype === 'success',
        response: (r.response ?? (r.error === undefined ? {} : { error: r.error })) as Line,
      };
    }
    default:
      return { kind: 'other' };
  }
}

/** Splits a byte stream into JSON lines; what does not parse is passed to `bad` (a warning line). */
export function lineReader(onLine: (l: Line) => void, bad: (text: string) => void = () => undefined) {
  let partial = '';
  return (chunk: Buffer | string): void => {
    partial += chunk.toString();
    const parts = partial.split('\n');
    partial = parts.pop() ?? '';
    for (const text of parts) {
      if (text.trim() === '') continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        bad(text);
        continue;
      }
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        const line = parsed as Record<string, unknown>;
        recordShape('claude-code stream-json', line.subtype ? `${line.type}/${line.subtype}` : line.type, line);
        onLine(parsed as Line);
      } else bad(text);
    }
  };
}
