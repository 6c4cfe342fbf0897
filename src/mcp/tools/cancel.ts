// The cancel tool (D33): stops the turn a session runs, where its way in can.
import { z } from 'zod';
import { sendCancel } from '../../consumer/cancel.js';
import { explainCancel } from '../../consumer/explain.js';
import { MCP_VOICE } from '../../consumer/next-step.js';
import { tool } from '../tool-result.js';
import type { RegisterTool } from '../tool-kit.js';

/** `cancel`: held until the agent reports the turn stopped, or `wait_ms` ran out. */
export const cancel: RegisterTool = (server, { ctx, waitOf, withConsumer }) => {
  server.registerTool(
    'cancel',
    {
      title: 'Stop the turn a session is running',
      description:
        'Stops the turn an agent session is running now (control.cancel, scope run), where its lane can: a session whose list_sessions ' +
        'steering lists control.cancel (Cline with its hub control on). The result is held until the agent reports the turn stopped ' +
        '(run.cancelled), the adapter rejects it (e.g. no turn is running), the relay or roster refuses it (code unsupported for a session ' +
        'that takes no cancel, no-route, unauthorized), or wait_ms runs out. Queued instructions stay queued unless clear is true; withdraw takes one back.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session whose running turn to stop.'),
        run: z.string().min(1).optional().describe("The run to stop; the session's running one when absent."),
        kill_tools: z
          .boolean()
          .optional()
          .describe(
            'Also end the shell commands the agent would leave running when its turn stops, where its way in can (the Codex app-server).',
          ),
        clear: z
          .boolean()
          .optional()
          .describe(
            "Also withdraw everything waiting in the session's queue (each dropped withdrawn, with its own cause).",
          ),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait for the turn to stop. Default ${Math.min(ctx.waitMs, 30_000)}.`),
      }),
      annotations: { destructiveHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        const o = await sendCancel(
          c,
          { sender: ctx.sender, surface: 'mcp' },
          {
            session: a.session,
            timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            ...(a.run ? { run: a.run } : {}),
            ...(a.kill_tools === true ? { killTools: true } : {}),
            ...(a.clear === true ? { clear: true } : {}),
          },
        );
        return tool(explainCancel(o, MCP_VOICE));
      }),
  );
};
