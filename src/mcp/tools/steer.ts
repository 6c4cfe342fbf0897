// The tools that send text into a session: instruct (an instruction for the next moment, D31) and
// send_input (the vendor's own input API, D28). They share their input schema and the idempotency
// key ledger, so a key names one text.
import { z } from 'zod';
import type { RelayConsumer } from '../../consumer/connection.js';
import { commandIdFor, type InstructOutcome, type InstructRequest, type Sender } from '../../consumer/verb.js';
import { sendInput as sendInputCommand } from '../../consumer/send-input.js';
import { sendInstruction } from '../../consumer/instruct.js';
import { DELIVERIES, IDLE } from '../../protocol/payloads.js';
import { refusal, steerResult, type ToolResult } from '../tool-result.js';
import type { RegisterTool, ToolContext, ToolKit } from '../tool-kit.js';

/** What one of the two tools sends: its consumer verb, what its key names, and its words. */
interface Sending<D extends string> {
  send: (c: RelayConsumer, f: Sender, req: InstructRequest & { delivery?: D }) => Promise<InstructOutcome>;
  /** The key as this tool scopes it, and the body the key names (a key names one text). */
  key: string | undefined;
  body: string;
  /** What a conflicting key should be given for, and what the result calls the text. */
  fresh: string;
  noun: string;
}

/**
 * Sends the text once its idempotency key checks out, and explains how it settled. The key names
 * one command id, unless the ledger holds that id for another body: then it is refused.
 */
async function sendKeyed<D extends string>(
  { ctx, ledger, waitOf, withConsumer }: ToolKit,
  a: {
    session: string;
    text: string;
    idempotency_key?: string | undefined;
    wait_ms?: number | undefined;
    delivery?: D | undefined;
    idle?: string | undefined;
  },
  how: Sending<D>,
): Promise<ToolResult> {
  const waitMs = waitOf(a.wait_ms);
  const id = how.key === undefined ? undefined : commandIdFor(ctx.sender, a.session, how.key);
  if (id !== undefined && !ledger.check(id, how.body)) {
    return refusal(
      'idempotency-conflict',
      `idempotency_key "${a.idempotency_key}" was already used for a different text on session ${a.session}; use a new key for ${how.fresh}.`,
      { session: a.session },
    );
  }
  return withConsumer(async (c) => {
    const o = await how.send(
      c,
      { sender: ctx.sender },
      {
        session: a.session,
        text: a.text,
        timeoutMs: waitMs,
        ...(id ? { id } : {}),
        ...(a.delivery ? { delivery: a.delivery } : {}),
        ...(a.idle ? { idle: a.idle } : {}),
      },
    );
    return steerResult(o, { waitMs, noun: how.noun, ...(a.idempotency_key ? { key: a.idempotency_key } : {}) });
  });
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
export const instruct: RegisterTool = (server, kit) => {
  server.registerTool(
    'instruct',
    {
      title: 'Steer an agent session',
      description:
        "Sends an instruction to another coding agent's live session (Claude Code, Codex, Qwen Code, …) through the relay. The adapter queues it and " +
        'hands it to that agent at its next eligible moment (a tool call, a prompt), so its model reads it on its next request; it starts a turn ' +
        'only when asked (idle: start) on a session list_sessions marks startable. The result is held until the stream settles: delivered (after how many ms, at which moment, when), dropped (with the reason, ' +
        'e.g. the session ended), rejected by the adapter (e.g. empty text), refused by the relay or roster (code: no-route, unsupported, unauthorized, ' +
        'ambiguous), or still queued when wait_ms ran out. Give an idempotency_key to make retries safe. delivery chooses when it arrives: ' +
        'moment (default: the next eligible moment), steer (into the turn running now; refused session-idle when none runs), queue (the first ' +
        'moment of the next turn). A session that cannot honour one refuses it with code delivery-unsupported, naming those it takes. ' +
        'The result carries command_id: withdraw takes it back while it still waits.',
      inputSchema: z.object({
        ...steerInput(kit.ctx),
        delivery: z
          .enum(DELIVERIES)
          .optional()
          .describe('moment (default), steer (the running turn) or queue (the next turn).'),
        idle: z
          .enum(IDLE)
          .optional()
          .describe(
            'While no turn runs: refuse (default for steer), wait for the next turn someone starts (default otherwise), or start ' +
              'a turn with this text (only where list_sessions says startable; refused start-unsupported elsewhere, naming the way that would).',
          ),
      }),
    },
    (a) =>
      sendKeyed(kit, a, {
        send: sendInstruction,
        key: a.idempotency_key,
        body: `${a.delivery ?? 'moment'}\n${a.idle ?? ''}\n${a.text}`,
        fresh: 'a new instruction',
        noun: 'instruction',
      }),
  );
};

/** `send_input`: input through the agent's own input API (Cline hub, OpenHands). */
export const sendInput: RegisterTool = (server, kit) => {
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
        ...steerInput(kit.ctx),
        delivery: z
          .enum(['queue', 'steer'])
          .optional()
          .describe('Cline only: queue (default) waits for the current turn; steer folds it into the running turn.'),
      }),
    },
    (a) =>
      sendKeyed(kit, a, {
        send: sendInputCommand,
        key: a.idempotency_key === undefined ? undefined : `input\n${a.idempotency_key}`,
        body: a.text,
        fresh: 'new input',
        noun: 'input',
      }),
  );
};
