// The session_events tool: a session's recent events from the relay's history, at a capture ceiling.
import { z } from 'zod';
import { CAPTURE_LEVELS, type AepEvent } from '../../protocol/envelope.js';
import { sessionHistory } from '../../consumer/history.js';
import { result } from '../tool-result.js';
import type { RegisterTool } from '../tool-kit.js';

const MAX_EVENTS = 500;

function eventRow(e: AepEvent): Record<string, unknown> {
  const r: Record<string, unknown> = { id: e.id, time: e.time, type: e.type };
  for (const k of ['seq', 'cause', 'subject', 'capture'] as const) if (e[k] !== undefined) r[k] = e[k];
  if (e.data !== undefined) r['data'] = e.data;
  return r;
}

/** `session_events`: the newest events, oldest first. */
export const sessionEvents: RegisterTool = (server, { withConsumer }) => {
  server.registerTool(
    'session_events',
    {
      title: "Read a session's recent events",
      description:
        "Returns the most recent AEP events of one session from the relay's history (oldest first): tool calls, prompts, instructions and their " +
        'acks/deliveries, permission requests, session start and end. capture is the ceiling: metadata (default) gives types, ids, times and ' +
        "structure without text; redacted or full include text only where this server's relay token allows it.",
      inputSchema: z.object({
        session: z.string().min(1).describe('The session id.'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_EVENTS)
          .optional()
          .describe('How many of the newest events. Default 50.'),
        capture: z
          .enum(CAPTURE_LEVELS)
          .optional()
          .describe('Capture ceiling: none, metadata (default), redacted, full.'),
        types: z
          .array(z.string().min(1))
          .optional()
          .describe('Only these event types, e.g. ["tool.call.started", "x.claude-code.instruction.delivered"].'),
      }),
      annotations: { readOnlyHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        const events = await sessionHistory(c, {
          session: a.session,
          limit: a.limit ?? 50,
          capture: a.capture ?? 'metadata',
          ...(a.types ? { types: a.types } : {}),
        });
        if (events.length === 0)
          return result(`No events of session ${a.session} on the relay${a.types ? ' of those types' : ''}.`, {
            session: a.session,
            events: [],
          });
        const rows = events.map(eventRow);
        const text = events.map((e) => `${e.time} ${e.type}${e.cause ? ` ← ${e.cause}` : ''}`).join('\n');
        return result(text, { session: a.session, capture: a.capture ?? 'metadata', events: rows });
      }),
  );
};
