// The tools that send text into a session: instruct (an instruction for the next moment, D31) and
// send_input (the vendor's own input API, D28). They share their input schema and the idempotency
// key ledger, so a key names one text.
import { z } from 'zod';
import { commandIdFor } from '../../consumer/verb.js';
import { sendInput as sendInputCommand } from '../../consumer/send-input.js';
import { sendInstruction } from '../../consumer/instruct.js';
import { DELIVERIES } from '../../protocol/payloads.js';
import { refusal, steerResult } from '../tool-result.js';
import type { RegisterTool, ToolContext } from '../tool-kit.js';

/**
 * The command id an idempotency key names (`key`: the key as this tool scopes it), or the refusal
 * when the ledger holds that id for another body: a key names one text.
 */
function keyedId(
  sender: string,
  ledger: Parameters<RegisterTool>[1]['ledger'],
  a: { session: string; idempotency_key?: string | undefined },
  key: string | undefined,
  body: string,
  fresh: string,
): { id: string | undefined } | { refused: ReturnType<typeof refusal> } {
  if (key === undefined) return { id: undefined };
  const id = commandIdFor(sender, a.session, key);
  if (ledger.check(id, body)) return { id };
  return {
    refused: refusal(
      'idempotency-conflict',
      `idempotency_key "${a.idempotency_key}" was already used for a different text on session ${a.session}; use a new key for ${fresh}.`,
      { session: a.session },
    ),
  };
}

/** The input both tools take, with the waits of this server. */
const steerInput = (ctx: ToolContext) => ({
  session: z.string().min(1).describe('Target session id, as list_sessions gives it.'),
  text: z
    .string()
    .describe(
      'What the agent should read, phrased as an instruction to it (it arrives as context on its next model request).',
    ),
  idempotency_key: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'Any string naming this one instruction. The same key (same session) is never delivered twice: a repeated call returns the same outcome, ' +
        'so retry with the same key after a timeout or an error instead of sending a new instruction.',
    ),
  wait_ms: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(`How long to hold the result waiting for delivery. Default ${ctx.waitMs}, at most ${ctx.maxWaitMs}.`),
});

/** `instruct`: an instruction, held until delivered, dropped, refused, or `wait_ms` ran out. */
export const instruct: RegisterTool = (server, { ctx, ledger, waitOf, withConsumer }) => {
  server.registerTool(
    'instruct',
    {
      title: 'Steer an agent session',
      description:
        "Sends an instruction to another coding agent's live session (Claude Code, Codex, Qwen Code, …) through the relay. The adapter queues it and " +
        'hands it to that agent at its next eligible moment (a tool call, a prompt), so its model reads it on its next request; it does not start a ' +
        'turn by itself. The result is held until the stream settles: delivered (after how many ms, at which moment, when), dropped (with the reason, ' +
        'e.g. the session ended), rejected by the adapter (e.g. empty text), refused by the relay or roster (code: no-route, unsupported, unauthorized, ' +
        'ambiguous), or still queued when wait_ms ran out. Give an idempotency_key to make retries safe. delivery chooses when it arrives: ' +
        'moment (default: the next eligible moment), steer (into the turn running now; refused session-idle when none runs), queue (the first ' +
        'moment of the next turn). A session that cannot honour one refuses it with code delivery-unsupported, naming those it takes. ' +
        'The result carries command_id: withdraw takes it back while it still waits.',
      inputSchema: z.object({
        ...steerInput(ctx),
        delivery: z
          .enum(DELIVERIES)
          .optional()
          .describe('moment (default), steer (the running turn) or queue (the next turn).'),
      }),
    },
    async (a) => {
      const waitMs = waitOf(a.wait_ms);
      const keyed = keyedId(
        ctx.sender,
        ledger,
        a,
        a.idempotency_key,
        `${a.delivery ?? 'moment'}\n${a.text}`,
        'a new instruction',
      );
      if ('refused' in keyed) return keyed.refused;
      const id = keyed.id;
      return withConsumer(async (c) => {
        const o = await sendInstruction(
          c,
          { sender: ctx.sender },
          {
            session: a.session,
            text: a.text,
            timeoutMs: waitMs,
            ...(id ? { id } : {}),
            ...(a.delivery ? { delivery: a.delivery } : {}),
          },
        );
        return steerResult(o, {
          waitMs,
          noun: 'instruction',
          ...(a.idempotency_key ? { key: a.idempotency_key } : {}),
        });
      });
    },
  );
};

/** `send_input`: input through the agent's own input API (Cline hub, OpenHands). */
export const sendInput: RegisterTool = (server, { ctx, ledger, waitOf, withConsumer }) => {
  server.registerTool(
    'send_input',
    {
      title: 'Send input to a Cline or OpenHands session',
      description:
        "Sends user input to a session whose adapter drives the agent's own input API (Cline hub sessions: x.cline.control.send_input; OpenHands " +
        'conversations: x.openhands.control.send_input). Use it only for sessions whose list_sessions steering lists a send_input verb; for the ' +
        'others use instruct. Cline refuses input to an idle session (it would start a turn). The result is held until the adapter reports the ' +
        'input sent (x.<vendor>.input.sent), it is rejected, refused, or wait_ms runs out.',
      inputSchema: z.object({
        ...steerInput(ctx),
        delivery: z
          .enum(['queue', 'steer'])
          .optional()
          .describe('Cline only: queue (default) waits for the current turn; steer folds it into the running turn.'),
      }),
    },
    async (a) => {
      const waitMs = waitOf(a.wait_ms);
      const key = a.idempotency_key === undefined ? undefined : `input\n${a.idempotency_key}`;
      const keyed = keyedId(ctx.sender, ledger, a, key, a.text, 'new input');
      if ('refused' in keyed) return keyed.refused;
      const id = keyed.id;
      return withConsumer(async (c) => {
        const o = await sendInputCommand(
          c,
          { sender: ctx.sender },
          {
            session: a.session,
            text: a.text,
            timeoutMs: waitMs,
            ...(id ? { id } : {}),
            ...(a.delivery ? { delivery: a.delivery } : {}),
          },
        );
        return steerResult(o, { waitMs, noun: 'input', ...(a.idempotency_key ? { key: a.idempotency_key } : {}) });
      });
    },
  );
};
