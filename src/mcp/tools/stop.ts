// The stop tool (D45): an orchestrating model ends a worker it spawned, once its work is done or
// it went astray. Held until the worker's session ended (its process gone), or wait_ms ran out.
import { z } from 'zod';
import { sendStop, type StopOutcome } from '../../consumer/stop.js';
import { result } from '../tool-result.js';
import type { RegisterTool } from '../tool-kit.js';

/** What the model reads: what happened and what to do next. */
function sentence(o: StopOutcome): string {
  switch (o.outcome) {
    case 'stopped':
      return `Stopped session ${o.session}: it ended and its process is gone (a worktree made for it is kept). Call read for its last finished turn.`;
    case 'rejected':
      return `Not stopped (${o.code ?? o.reason}): ${o.detail ?? o.reason}.`;
    case 'refused':
      return `No stop was made (${o.code}): ${o.detail ?? 'refused'}.`;
    case 'timeout':
      return o.stage === 'ack'
        ? `No acknowledgement in time from session ${o.session}'s adapter; nothing says it stopped. Call list_sessions to see it.`
        : `The stop is under way but session ${o.session} has not ended yet; call wait with for ["end"].`;
    case 'unreachable':
      return o.detail;
  }
}

export const stopTool: RegisterTool = (server, { ctx, waitOf, withConsumer }) => {
  server.registerTool(
    'stop',
    {
      title: 'Stop a worker session',
      description:
        'Ends a session an adapter spawned (a worker started with spawn): its process is stopped and it ends on the stream ' +
        '(session.ended, killed, naming who stopped it); a git worktree made for it is kept. Only its spawner or a holder of ' +
        'the spawn right may. To stop only the running turn, use cancel.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The worker session to end.'),
        reason: z.string().min(1).optional().describe('Why, kept on the record.'),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait for it to end. Default ${Math.min(ctx.waitMs, 30_000)}.`),
      }),
      annotations: { destructiveHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        const o = await sendStop(
          c,
          { sender: ctx.sender, surface: 'mcp' },
          {
            session: a.session,
            timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            ...(a.reason === undefined ? {} : { reason: a.reason }),
          },
        );
        return result(sentence(o), { ...o }, o.outcome !== 'stopped');
      }),
  );
};
