// The queue tools (D44): edit a waiting instruction in place, move it, promote it to a steer now,
// and pause or resume a session's queue. Each answers once the change is settled on the stream,
// with the adapter's codes; the same call again is a retry of the same command (D4).
import { z } from 'zod';
import { commandIdFor } from '../../consumer/verb.js';
import { explainQueueVerb, sendQueueVerb } from '../../consumer/queue-verbs.js';
import { MCP_VOICE } from '../../consumer/next-step.js';
import type { QueueVerb } from '../../machines/command-inputs.js';
import { tool } from '../tool-result.js';
import type { RegisterTool, ToolKit } from '../tool-kit.js';
import type { McpServer } from '@modelcontextprotocol/server';

const CODES =
  'Refusals carry a code: already-delivered (the agent has it), not-waiting (withdrawn, expired, or its turn or session ended), ' +
  'unknown-instruction (the session never accepted that id), not-sender (only its sender may change it, unless granted is set and ' +
  "this server's token is granted withdraw for the session). Nothing changes on a refusal.";

const common = {
  session: z.string().min(1).describe('The session the instruction was sent to.'),
  idempotency_key: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The same arguments again are a retry of the same command and get the same answer; give a new key to make the same change again after others.',
    ),
  wait_ms: z.number().int().min(1).optional().describe('How long to wait for the answer.'),
};
const instruction = z.string().min(1).describe("The instruction's command_id, as instruct returned it.");
const granted = z
  .boolean()
  .optional()
  .describe("Change another sender's instruction on this token's withdraw grant; refused unauthorized without one.");

function register<S extends z.ZodRawShape>(
  server: McpServer,
  kit: ToolKit,
  name: string,
  verb: QueueVerb,
  meta: { title: string; description: string; shape: S },
  dataOf: (a: z.infer<z.ZodObject<S>>) => Record<string, unknown>,
): void {
  const { ctx, waitOf, withConsumer } = kit;
  server.registerTool(
    name,
    {
      title: meta.title,
      description: meta.description,
      inputSchema: z.object({ ...common, ...meta.shape }),
      annotations: { idempotentHint: true },
    },
    async (args) =>
      withConsumer(async (c) => {
        const a = args as z.infer<z.ZodObject<S>> & {
          session: string;
          idempotency_key?: string;
          wait_ms?: number;
          granted?: boolean;
        };
        const data = dataOf(a);
        const id = commandIdFor(ctx.sender, a.session, `${verb}\n${JSON.stringify(data)}\n${a.idempotency_key ?? ''}`);
        const o = await sendQueueVerb(
          c,
          { sender: ctx.sender },
          {
            session: a.session,
            verb,
            data,
            id,
            timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            ...(a.granted ? { granted: true } : {}),
          },
        );
        return tool(explainQueueVerb(o, MCP_VOICE));
      }),
  );
}

export const queueTools: RegisterTool = (server, kit) => {
  register(
    server,
    kit,
    'edit_instruction',
    'edit',
    {
      title: 'Edit a waiting instruction in place',
      description: `Replaces the text of an instruction that still waits, keeping its place in the queue; its delivery names the new text version. ${CODES} A bad text is refused text-empty or text-too-long.`,
      shape: { instruction, text: z.string().describe('The new text.'), granted },
    },
    (a) => ({ instruction: a.instruction, text: a.text }),
  );
  register(
    server,
    kit,
    'move_instruction',
    'move',
    {
      title: 'Move a waiting instruction',
      description: `Moves an instruction that still waits: before another waiting instruction of the same session, or to the front or back. ${CODES} A before naming no instruction waiting in that session is refused move-target-unknown.`,
      shape: {
        instruction,
        before: z.string().min(1).optional().describe('Put it just before this waiting instruction.'),
        to: z.enum(['front', 'back']).optional().describe('Put it at the front or the back.'),
        granted,
      },
    },
    (a) => ({ instruction: a.instruction, ...(a.before ? { before: a.before } : {}), ...(a.to ? { to: a.to } : {}) }),
  );
  register(
    server,
    kit,
    'promote_instruction',
    'promote',
    {
      title: 'Deliver a waiting instruction as a steer now',
      description: `Takes an instruction out of the queue and delivers it into the running turn as a steer. While no turn runs it is refused session-idle, unless start is true and a lane can start a turn; where nothing can steer the session it is refused delivery-unsupported. A refused promote leaves it where it was. ${CODES}`,
      shape: {
        instruction,
        start: z.boolean().optional().describe('While no turn runs, start one with it (where a lane can).'),
        granted,
      },
    },
    (a) => ({ instruction: a.instruction, ...(a.start ? { idle: 'start' } : {}) }),
  );
  register(
    server,
    kit,
    'hold_queue',
    'hold',
    {
      title: "Pause or resume a session's queue",
      description:
        "paused true: nothing from the session's queue is delivered until it is resumed (a steer still goes in). paused false: the queue is delivered again, in its order.",
      shape: { paused: z.boolean().describe('true pauses, false resumes.') },
    },
    (a) => ({ paused: a.paused }),
  );
};
