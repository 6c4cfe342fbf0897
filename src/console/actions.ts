// What the console page may ask its own process to do: send, withdraw or edit an instruction,
// answer a held request, stop a running turn. Both go through the one consumer core on the console's relay connection;
// the browser
// never talks to the relay. Each answer is the settled outcome explained in a sentence.
import type { RelayConsumer } from '../consumer/connection.js';
import {
  explainCancel,
  explainEdit,
  explainRespond,
  explainSteer,
  explainWithdraw,
  refusal,
  type Explained,
} from '../consumer/explain.js';
import { CONSOLE_VOICE } from '../consumer/next-step.js';
import { editInstruction } from '../consumer/edit.js';
import { sendCancel } from '../consumer/cancel.js';
import { sendInstruction } from '../consumer/instruct.js';
import { sendResponse, type Answer } from '../consumer/respond.js';
import { sendWithdraw } from '../consumer/withdraw.js';
import type { Action } from '../inspect/server.js';

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

export function consoleActions(ctx: ConsoleContext): Record<string, Action> {
  const connected = (): RelayConsumer | { status: number; body: unknown } => {
    const c = ctx.consumer();
    return (
      c ??
      reply(
        {
          text: `The console is not connected to the relay at ${ctx.relayUrl}; it keeps retrying.`,
          facts: { outcome: 'unreachable' },
          isError: true,
        },
        503,
      )
    );
  };
  return {
    async instruct(body) {
      const session = str(body['session']);
      const text = body['text'];
      if (session === undefined || typeof text !== 'string')
        return reply(refusal('invalid-request', 'give a session and the instruction text.'), 400);
      if (text.length > MAX_TEXT)
        return reply(refusal('invalid-request', `the text is longer than ${MAX_TEXT} characters.`), 400);
      const c = connected();
      if (!('roster' in c)) return c;
      const o = await sendInstruction(
        c,
        { sender: ctx.sender },
        { session, text, noWait: true, timeoutMs: ACK_WAIT_MS },
      );
      return reply(explainSteer(o, { waitMs: ACK_WAIT_MS, noun: 'instruction', voice: CONSOLE_VOICE }));
    },
    // D32: Withdraw and Edit on a queued instruction; Edit sends the new text only once the old one is withdrawn.
    async withdraw(body) {
      const session = str(body['session']);
      const instruction = str(body['instruction']);
      if (session === undefined || instruction === undefined)
        return reply(refusal('invalid-request', 'give the session and the instruction id.'), 400);
      const c = connected();
      if (!('roster' in c)) return c;
      return reply(
        explainWithdraw(
          await sendWithdraw(c, { sender: ctx.sender }, { session, instruction, timeoutMs: ACK_WAIT_MS }),
          CONSOLE_VOICE,
        ),
      );
    },
    async edit(body) {
      const session = str(body['session']);
      const instruction = str(body['instruction']);
      const text = body['text'];
      const delivery = str(body['delivery']);
      if (session === undefined || instruction === undefined || typeof text !== 'string' || text.trim() === '') {
        return reply(refusal('invalid-request', 'give the session, the instruction id and the new text.'), 400);
      }
      if (text.length > MAX_TEXT)
        return reply(refusal('invalid-request', `the text is longer than ${MAX_TEXT} characters.`), 400);
      const c = connected();
      if (!('roster' in c)) return c;
      const o = await editInstruction(
        c,
        { sender: ctx.sender },
        { session, instruction, text, timeoutMs: ACK_WAIT_MS, noWait: true, ...(delivery ? { delivery } : {}) },
      );
      return reply(explainEdit(o, ACK_WAIT_MS, CONSOLE_VOICE));
    },
    // D33: Stop on a session whose claimant declares control.cancel; the answer waits for run.cancelled.
    async cancel(body) {
      const session = str(body['session']);
      if (session === undefined) return reply(refusal('invalid-request', 'give the session whose turn to stop.'), 400);
      const c = connected();
      if (!('roster' in c)) return c;
      return reply(
        explainCancel(
          await sendCancel(c, { sender: ctx.sender }, { session, timeoutMs: ANSWER_WAIT_MS }),
          CONSOLE_VOICE,
        ),
      );
    },
    async respond(body) {
      const session = str(body['session']);
      const request = str(body['request']);
      if (session === undefined || request === undefined)
        return reply(refusal('invalid-request', 'give the session and the request id.'), 400);
      let answer: Answer;
      // The adapter checks the option against the request (D14): allow/deny, or a form's decline/cancel.
      if (typeof body['option'] === 'string' && /^[a-z_-]{1,32}$/.test(body['option']))
        answer = { option: body['option'] };
      else if (typeof body['text'] === 'string' && body['text'].trim() !== '') answer = { text: body['text'] };
      else if (body['values'] !== null && typeof body['values'] === 'object' && !Array.isArray(body['values']))
        answer = { values: body['values'] as Record<string, unknown> };
      else return reply(refusal('invalid-answer', 'give allow, deny, a text answer or form values.'), 400);
      const c = connected();
      if (!('roster' in c)) return c;
      return reply(
        explainRespond(
          await sendResponse(c, { sender: ctx.sender }, { session, request, answer, timeoutMs: ANSWER_WAIT_MS }),
          CONSOLE_VOICE,
        ),
      );
    },
  };
}
