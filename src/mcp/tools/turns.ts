// The wait and read tools (D45): an orchestrating model follows a session it started until its
// turn ends, a request waits or it ends, within a bound (never a hang), and reads the turn's final
// answer as far as this server's token may see it. Each answer says what to call next.
import { z } from 'zod';
import { MCP_TURN_VOICE, readSentence, waitSentence } from '../../consumer/turn-words.js';
import { readTurn, waitFor } from '../../consumer/turns.js';
import { result } from '../tool-result.js';
import type { RegisterTool } from '../tool-kit.js';

export const waitTool: RegisterTool = (server, { ctx, waitOf, withConsumer }) => {
  server.registerTool(
    'wait',
    {
      title: "Wait for a session's turn to end",
      description:
        'Follows a session until its turn ends (finished, cancelled or failed: the answer says which), a request of it waits for an ' +
        'answer (what it asks, and its id for respond), or the session ends. Bounded: after wait_ms it answers "still running" and ' +
        'you may call it again. A turn that already ended answers at once; pass after_turn (the turn number an earlier wait or read ' +
        'gave) to wait for a later one.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session to follow (spawn or list_sessions gives it).'),
        for: z
          .array(z.enum(['turn-end', 'request', 'end']))
          .optional()
          .describe('What ends the wait; the session ending always does. Default: turn-end and request.'),
        after_turn: z.number().int().min(0).optional().describe('Count only a turn after this one.'),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait at most. Default ${ctx.waitMs}, at most ${ctx.maxWaitMs}.`),
      }),
      annotations: { readOnlyHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        const o = await waitFor(c, {
          session: a.session,
          timeoutMs: waitOf(a.wait_ms),
          ...(a.for === undefined ? {} : { for: a.for }),
          ...(a.after_turn === undefined ? {} : { afterTurn: a.after_turn }),
        });
        return result(waitSentence(o, MCP_TURN_VOICE), { ...o }, o.outcome === 'unreachable');
      }),
  );
};

export const readTool: RegisterTool = (server, { withConsumer }) => {
  server.registerTool(
    'read',
    {
      title: "Read a turn's final answer",
      description:
        "Gives how a session's turn ended and, where this server's token may see it (capture redacted or full), the agent's final " +
        'answer. A metadata token learns only that the turn ended and how. turn: "last" (default) or its number from 1.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session to read.'),
        turn: z
          .union([z.literal('last'), z.number().int().min(1)])
          .optional()
          .describe('"last", or the turn number.'),
      }),
      annotations: { readOnlyHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        const o = await readTurn(c, { session: a.session, turn: a.turn ?? 'last' });
        return result(readSentence(o), { ...o }, o.outcome === 'unreachable');
      }),
  );
};
