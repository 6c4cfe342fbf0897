// The tools for requests agents hold open (D13, D14): pending_requests lists them from the live
// board, respond answers one.
import { z } from 'zod';
import { sendResponse, type Answer } from '../../consumer/respond.js';
import { refusal, respondResult, result } from '../tool-result.js';
import { unreachable, type RegisterTool } from '../tool-kit.js';
import { secondApproverNote } from '../../consumer/explain-second.js';

/** `pending_requests`: the board's open holds, oldest first. */
export const pendingRequests: RegisterTool = (server, { ctx }) => {
  server.registerTool(
    'pending_requests',
    {
      title: 'List permission and form requests waiting for an answer',
      description:
        'Lists the permission requests (a tool the agent wants to run) and form requests (questions, elicitations) that agent sessions are holding ' +
        'open until someone answers, oldest first: session, request id, kind, prompt, the option ids offered and form fields. The prompt says ' +
        "what the tool will do (its command, path or URL) and forms carry their questions and labels when this server's token may read " +
        'redacted text; at metadata only the tool name. Answer one with respond. A request answered or dismissed at the agent itself ' +
        '(in its own dialog, or by Esc) disappears from the list at once.',
      inputSchema: z.object({
        session: z.string().min(1).optional().describe("Only this session's requests."),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ session }) => {
      if (ctx.consumer() === undefined) return unreachable(ctx);
      const rows = ctx.board
        .snapshot()
        .sessions.filter((s) => session === undefined || s.session === session)
        .flatMap((s) => s.holds.map((h) => ({ session: s.session, vendor: s.agent ?? null, ...h })))
        .sort((x, y) => x.since.localeCompare(y.since));
      const text =
        rows.length === 0
          ? `No pending requests${session ? ` for session ${session}` : ''}.`
          : rows
              .map(
                (r) =>
                  `${r.request} ${r.kind} in ${r.session}: ${r.prompt ?? '(no prompt)'}${r.options ? ` [options: ${r.options.join(', ')}]` : ''} since ${r.since}${r.risky ? `; ${secondApproverNote(r.risky, r.firstBy)}` : ''}`,
              )
              .join('\n');
      return result(text, { requests: rows });
    },
  );
};

/** `respond`: exactly one of decision, text or values, held until the answer is recorded. */
export const respond: RegisterTool = (server, { ctx, waitOf, withConsumer }) => {
  server.registerTool(
    'respond',
    {
      title: 'Answer a permission or form request',
      description:
        "Answers one pending request (from pending_requests) and waits until the agent's adapter records the answer (attention.answered). " +
        'For a permission give decision "allow" or "deny" on every agent: they map onto the request\'s own options (Cline\'s approve/deny); ' +
        'free text on a permission is a deny with that message. For a form give values (field id → value, required fields included) or ' +
        'decision "decline". Give exactly one of decision, text, values. A request that ended already (answered or dismissed at the agent, ' +
        'timed out) is refused with code not-pending and nothing is sent.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session holding the request.'),
        request: z.string().min(1).describe('The request id (the attention.requested event id) from pending_requests.'),
        decision: z
          .string()
          .regex(/^[a-z_-]{1,32}$/)
          .optional()
          .describe('"allow" or "deny" for a permission (or one of its option ids), "decline" or "cancel" for a form.'),
        text: z.string().optional().describe('A free-text answer.'),
        values: z.record(z.string(), z.unknown()).optional().describe('Form answers: field id to value.'),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait for the answer to be recorded. Default ${Math.min(ctx.waitMs, 30_000)}.`),
      }),
    },
    async (a) => {
      const given = [a.decision, a.text, a.values].filter((x) => x !== undefined).length;
      if (given !== 1)
        return refusal('invalid-answer', 'give exactly one of decision, text or values.', {
          session: a.session,
          request: a.request,
        });
      const answer: Answer =
        a.decision !== undefined
          ? { option: a.decision }
          : a.text !== undefined
            ? { text: a.text }
            : { values: a.values! };
      return withConsumer(async (c) =>
        respondResult(
          await sendResponse(
            c,
            { sender: ctx.sender, surface: 'mcp' },
            {
              session: a.session,
              request: a.request,
              answer,
              timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            },
          ),
        ),
      );
    },
  );
};
