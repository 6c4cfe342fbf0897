// The withdraw tool (D32): takes back an instruction this server sent while it still waits.
import { z } from 'zod';
import { commandIdFor } from '../../consumer/verb.js';
import { sendWithdraw } from '../../consumer/withdraw.js';
import { explainWithdraw } from '../../consumer/explain.js';
import { MCP_VOICE } from '../../consumer/next-step.js';
import { tool } from '../tool-result.js';
import type { RegisterTool } from '../tool-kit.js';

/** `withdraw`: one command id per (sender, session, instruction), so a repeat is a retry (D4). */
export const withdraw: RegisterTool = (server, { ctx, waitOf, withConsumer }) => {
  server.registerTool(
    'withdraw',
    {
      title: 'Take back an instruction that still waits',
      description:
        "Withdraws an instruction this server sent (its command_id from instruct) while it still waits in the session's queue: the agent never " +
        'reads it. Calling it again for the same instruction gives the same answer. Refusals carry a code: already-delivered (the agent has it), ' +
        'not-waiting (withdrawn before, expired, or its turn or session ended), unknown-instruction (the session never accepted that id), ' +
        "not-sender (only its sender may withdraw it, unless granted is set and this server's token is granted withdraw for the session). " +
        'To edit an instruction, withdraw it and send the new text with instruct.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session the instruction was sent to.'),
        instruction: z.string().min(1).describe("The instruction's command_id, as instruct returned it."),
        granted: z
          .boolean()
          .optional()
          .describe(
            "Withdraw another sender's instruction on this token's withdraw grant; refused unauthorized without one.",
          ),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait for the answer. Default ${Math.min(ctx.waitMs, 30_000)}.`),
      }),
      annotations: { idempotentHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        // One command id per (sender, session, instruction): a repeated call is a retry, answered as the first (D4).
        const id = commandIdFor(ctx.sender, a.session, `withdraw${a.granted ? '-granted' : ''}\n${a.instruction}`);
        const o = await sendWithdraw(
          c,
          { sender: ctx.sender, surface: 'mcp' },
          {
            session: a.session,
            instruction: a.instruction,
            id,
            timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            ...(a.granted ? { granted: true } : {}),
          },
        );
        return tool(explainWithdraw(o, MCP_VOICE));
      }),
  );
};
