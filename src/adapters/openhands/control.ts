// The control gate's writes (AEP_OPENHANDS_CONTROL=1, D29) as the adapter's lane `agent-server`,
// over REST only: the event socket stays auth-frame-only. send_input is the lane's `send` (the
// append with run:false pinned, `x.openhands.input.sent` at 2xx); the other four verbs are its
// `perform`, decided by the server's answer. Each guard reads the status the stream last
// showed, so a refusal matches what consumers see: a write the server would silently ignore, or
// one that would start, resume or approve work nobody asked for, is refused before it is sent.
import { NOT_PENDING, readAnswer } from '../../machines/gate.js';
import type { AepCommand, Rejection } from '../../protocol/index.js';
import type { Lane } from '../../streams/lane.js';
import { ANSWER_OPTIONS, CONFIRMATION_PROMPT } from './map.js';
import type { AgentServer, WriteResult } from './agent-server.js';
import type { Receiver } from './receiver.js';
import { openHandsStarter } from './start.js';

const PAUSE = 'control.pause';
const RESUME = 'control.resume';
const RESPOND = 'control.attention.respond';
const INTERRUPT = 'x.openhands.control.interrupt';

/** The forwarded verbs in hello order (send_input is declared by the shared path). */
export const CONTROLS = [RESPOND, PAUSE, RESUME, INTERRUPT] as const;

/** The vendor's own deny reason when the operator gives none (event_router respond_to_confirmation). */
const DEFAULT_REJECT_REASON = 'User rejected the action.';

const guard = (detail: string): Rejection => ({ reason: 'refused', rule: 'status-guard', detail });

const CONFIRMATION = { kind: 'permission' as const, prompt: CONFIRMATION_PROMPT, options: ANSWER_OPTIONS };

/**
 * A respond's answer as the server takes it: allow → accept; deny → reject with the operator's words or the vendor
 * default.
 */
function confirmationOf(command: AepCommand): { accept: boolean; reason?: string } | undefined {
  const decision = readAnswer(CONFIRMATION, (command.data as Record<string, unknown> | undefined)?.answer);
  if (decision === undefined) return undefined;
  if (decision.option === 'allow') return { accept: true };
  return { accept: false, reason: decision.message ?? DEFAULT_REJECT_REASON };
}

/**
 * The server's answer as the command's decision. No answer in time is accepted as "will try" (the
 * write may still land; the status flips stay the truth and no outcome is made up without one).
 */
function outcomeOf(r: WriteResult): Rejection | undefined {
  if (r.kind === 'ok' || r.kind === 'timeout') return undefined;
  if (r.kind === 'unreachable')
    return { reason: 'busy', rule: 'transport-down', detail: `${r.detail}; retry once it answers` };
  return {
    reason: 'refused',
    rule: 'vendor-refused',
    detail: `the agent server answered ${r.status}${r.detail ? `: ${r.detail}` : ''}`,
  };
}

export function openHandsLane(server: AgentServer, receiver: Receiver): Lane {
  const starter = openHandsStarter(server, (s) => receiver.status(s), receiver.arrivals$);
  return {
    name: 'agent-server',
    deliveries: [],
    how: 'start its adapter with AEP_OPENHANDS_CONTROL=1',
    // What the conversations do is observed on the event socket (the bridge's arrivals); the lane
    // reads it only for its own starts' receipts (D43).
    facts$: starter.facts$,
    startTurn: starter.startTurn,
    reaches: (session) => receiver.status(session) !== undefined,
    ready: () => receiver.health() === 'ok',
    async send(req) {
      const r = await server.sendMessage(req.session, req.text);
      return r.kind === 'ok'
        ? { ok: true }
        : {
            ok: false,
            reason: r.kind === 'http' ? 'refused' : 'unreachable',
            detail: r.kind === 'http' ? `agent server answered ${r.status}` : r.detail,
          };
    },
    check(session, command) {
      const status = receiver.status(session) ?? 'unknown';
      switch (command.type) {
        case PAUSE:
        case INTERRUPT:
          // From anything but running the server ignores it, or (interrupt from idle) pauses a
          // conversation no run exists in.
          return status === 'running'
            ? undefined
            : guard(`forwarded only while the conversation runs; it is ${status}`);
        case RESUME:
          if (status === 'waiting_for_confirmation')
            return guard(
              'the conversation waits for confirmation: answer it with control.attention.respond (resume would accept the pending actions)',
            );
          return status === 'paused'
            ? undefined
            : guard(`forwarded only from paused (resume from ${status} would start work); it is ${status}`);
        case RESPOND: {
          const open = receiver.attention(session);
          if (open === undefined || command.subject !== open) {
            // D34: a request that ended (answered by another client of the server, or by an earlier
            // respond) is refused not-pending, saying how; only an id never seen is unknown.
            const how = command.subject === undefined ? undefined : receiver.ended(session, command.subject);
            if (how !== undefined) return NOT_PENDING[how];
            return { reason: 'refused', rule: 'unknown-request', detail: 'not the live pending confirmation request' };
          }
          return confirmationOf(command) === undefined
            ? {
                reason: 'invalid',
                rule: 'answer-invalid',
                detail: 'answer allow or deny (text is a deny with that reason)',
              }
            : undefined;
        }
        default:
          return { reason: 'unsupported', rule: 'gate-off', detail: `${command.type} is not an OpenHands control` };
      }
    },
    async perform(session, command) {
      // The outcome note goes first: the server may broadcast the flip before its REST answer.
      switch (command.type) {
        case RESPOND: {
          const c = confirmationOf(command)!;
          const answer: Record<string, unknown> = { option: c.accept ? 'allow' : 'deny' };
          const words = (command.data as { answer?: { text?: unknown } } | undefined)?.answer?.text;
          if (!c.accept && typeof words === 'string' && words.trim() !== '') answer.text = words;
          receiver.settle(session, command.id, answer);
          const r = outcomeOf(await server.respondToConfirmation(session, c.accept, c.reason));
          if (r !== undefined) receiver.settle(session, undefined);
          return r;
        }
        case PAUSE:
        case RESUME:
        case INTERRUPT: {
          receiver.expect(session, command.id);
          const call =
            command.type === PAUSE
              ? server.pause(session)
              : command.type === RESUME
                ? server.run(session)
                : server.interrupt(session);
          const r = outcomeOf(await call);
          if (r !== undefined) receiver.expect(session, undefined);
          return r;
        }
        default:
          return { reason: 'unsupported', rule: 'gate-off', detail: `${command.type} is not an OpenHands control` };
      }
    },
    // The socket and the server client are the bridge source's to close.
    close: async () => undefined,
  };
}
