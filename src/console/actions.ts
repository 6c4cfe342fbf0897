// What the console page may ask its own process to do: send, withdraw, edit, move or promote an instruction, pause a queue,
// answer a held request, stop a running turn. Both go through the one consumer core on the console's relay connection;
// the browser
// never talks to the relay. Each answer is the settled outcome explained in a sentence.
import type { RelayConsumer } from '../consumer/connection.js';
import {
  explainCancel,
  explainRespond,
  explainSteer,
  explainWithdraw,
  refusal,
  type Explained,
} from '../consumer/explain.js';
import { CONSOLE_VOICE } from '../consumer/next-step.js';
import { explainQueueVerb, sendQueueVerb } from '../consumer/queue-verbs.js';
import { queueActions } from './queue-actions.js';
import { sendCancel } from '../consumer/cancel.js';
import { sendInstruction } from '../consumer/instruct.js';
import { sendResponse, type Answer } from '../consumer/respond.js';
import { sendWithdraw } from '../consumer/withdraw.js';
import type { Action, ActionCaller } from '../inspect/server.js';
import type { QueueVerb } from '../machines/command-inputs.js';

export interface ConsoleContext {
  consumer(): RelayConsumer | undefined;
  sender: string;
  relayUrl: string;
}

/** How long the page waits for the ack; delivery then shows live on the board. */
const ACK_WAIT_MS = 15_000;
const ANSWER_WAIT_MS = 15_000;
const MAX_TEXT = 16_384;

const reply = (x: Explained, status = 200) => ({ status, body: { ...x.facts, message: x.text, error: x.isError } });

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A request the page got wrong: refused before anything is sent, with what to give. */
const invalid = (sentence: string) => reply(refusal('invalid-request', sentence), 400);
const TOO_LONG = `the text is longer than ${MAX_TEXT} characters.`;

/**
 * The page's actions, sent as surface `console`; the one-tap link route gets its own set sent as
 * `link` (D46). Neither reads a surface from what it is asked: the page cannot say `link` or `mcp`.
 */
export function consoleActions(ctx: ConsoleContext, surface: 'console' | 'link' = 'console'): Record<string, Action> {
  const base = { sender: ctx.sender, surface };
  // A paired device's request names the device the console authenticated (D46 `decided_by.device`).
  const from = (caller?: { device: string }) => (caller === undefined ? base : { ...base, device: caller.device });
  /** Runs `send` on the console's relay connection and answers its explained outcome; 503 while there is none. */
  const onRelay = async (send: (c: RelayConsumer) => Promise<Explained>) => {
    const c = ctx.consumer();
    if (c === undefined) {
      return reply(
        {
          text: `The console is not connected to the relay at ${ctx.relayUrl}; it keeps retrying.`,
          facts: { outcome: 'unreachable' },
          isError: true,
        },
        503,
      );
    }
    return reply(await send(c));
  };
  const queueVerb = (
    caller: ActionCaller | undefined,
    session: string,
    verb: QueueVerb,
    data: Record<string, unknown>,
  ) =>
    onRelay(async (c) =>
      explainQueueVerb(
        await sendQueueVerb(c, from(caller), { session, verb, data, timeoutMs: ACK_WAIT_MS }),
        CONSOLE_VOICE,
      ),
    );
  return {
    async instruct(body, caller) {
      const f = from(caller);
      const session = str(body['session']);
      const text = body['text'];
      if (session === undefined || typeof text !== 'string') return invalid('give a session and the instruction text.');
      if (text.length > MAX_TEXT) return invalid(TOO_LONG);
      // D43: "Start now" on an idle session that can be started.
      const idle = str(body['idle']);
      if (idle !== undefined && idle !== 'start') return invalid('idle, when given, is start.');
      const req = { session, text, noWait: true, timeoutMs: ACK_WAIT_MS, ...(idle === undefined ? {} : { idle }) };
      return onRelay(async (c) =>
        explainSteer(await sendInstruction(c, f, req), {
          waitMs: ACK_WAIT_MS,
          noun: 'instruction',
          voice: CONSOLE_VOICE,
        }),
      );
    },
    // D32: Withdraw on a queued instruction.
    async withdraw(body, caller) {
      const f = from(caller);
      const session = str(body['session']);
      const instruction = str(body['instruction']);
      if (session === undefined || instruction === undefined)
        return invalid('give the session and the instruction id.');
      return onRelay(async (c) =>
        explainWithdraw(await sendWithdraw(c, f, { session, instruction, timeoutMs: ACK_WAIT_MS }), CONSOLE_VOICE),
      );
    },
    ...queueActions(queueVerb, invalid),
    // D33: Stop on a session whose claimant declares control.cancel; the answer waits for run.cancelled.
    async cancel(body, caller) {
      const f = from(caller);
      const session = str(body['session']);
      if (session === undefined) return invalid('give the session whose turn to stop.');
      return onRelay(async (c) =>
        explainCancel(await sendCancel(c, f, { session, timeoutMs: ANSWER_WAIT_MS }), CONSOLE_VOICE),
      );
    },
    async respond(body, caller) {
      const f = from(caller);
      const session = str(body['session']);
      const request = str(body['request']);
      if (session === undefined || request === undefined) return invalid('give the session and the request id.');
      let answer: Answer;
      // The adapter checks the option against the request (D14): allow/deny, or a form's decline/cancel.
      if (typeof body['option'] === 'string' && /^[a-z_-]{1,32}$/.test(body['option']))
        answer = { option: body['option'] };
      else if (typeof body['text'] === 'string' && body['text'].trim() !== '') answer = { text: body['text'] };
      else if (body['values'] !== null && typeof body['values'] === 'object' && !Array.isArray(body['values']))
        answer = { values: body['values'] as Record<string, unknown> };
      else return reply(refusal('invalid-answer', 'give allow, deny, a text answer or form values.'), 400);
      return onRelay(async (c) =>
        explainRespond(
          await sendResponse(c, f, { session, request, answer, timeoutMs: ANSWER_WAIT_MS }),
          CONSOLE_VOICE,
        ),
      );
    },
  };
}
