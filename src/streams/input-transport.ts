// The edge to a vendor's user-plane transport (send_input, D28, D29): an accepted input goes out
// through it and its answer comes back as a session input; what it observes (inputs consumed)
// becomes session inputs too. A transport that throws counts as unreachable, never as a crash.
import { EMPTY, from, map, type Observable } from 'rxjs';
import type { Effect, SessionItem } from './actor-host.js';
import type { Rejection } from '../protocol/index.js';
import type { Controller, InputOutcome, InputTransport } from './surface.js';

type SendEffect = Extract<Effect, { kind: 'send' }>;
type ForwardEffect = Extract<Effect, { kind: 'forward' }>;

/** Performs one send. `logged` false means the ack is not durable: nothing goes out (D22). */
export function sendThrough(transport: InputTransport | undefined, effect: SendEffect, logged: boolean, now: () => number): Observable<SessionItem> {
  const outcome: Promise<InputOutcome> = !logged || transport === undefined
    ? Promise.resolve({ ok: false, detail: logged ? 'no transport' : 'log not durable' })
    : Promise.resolve()
      .then(() => transport.send({
        session: effect.session, commandId: effect.commandId, text: effect.text,
        ...(effect.delivery === undefined ? {} : { delivery: effect.delivery }),
      }))
      .catch((cause: unknown): InputOutcome => ({ ok: false, detail: String(cause) }));
  return from(outcome).pipe(
    map((o): SessionItem => ({
      kind: 'input', session: effect.session,
      input: { type: o.ok ? 'input.sent' : 'input.failed', at: now(), commandId: effect.commandId },
    })),
  );
}

/** The transport's observations as session inputs. */
export const fromTransportFacts = (transport: InputTransport | undefined): Observable<SessionItem> =>
  transport?.facts$?.pipe(
    map((f): SessionItem => ({ kind: 'input', session: f.session, input: { type: 'input.consumed', at: f.at, text: f.text } })),
  ) ?? EMPTY;

const UNREACHABLE = (detail: string): Rejection => ({ reason: 'busy', rule: 'transport-down', detail });

/**
 * Carries one forwarded command out; its answer is the decision. A controller that throws counts
 * as unreachable (`busy`). `logged` false: the command input is not durable, nothing goes out (D22).
 */
export function forwardThrough(controller: Controller | undefined, effect: ForwardEffect, logged: boolean, now: () => number): Observable<SessionItem> {
  const outcome: Promise<Rejection | undefined> = !logged || controller === undefined
    ? Promise.resolve(UNREACHABLE(logged ? 'no controller' : 'log not durable'))
    : Promise.resolve()
      .then(() => controller.perform(effect.session, effect.command))
      .catch((cause: unknown) => UNREACHABLE(`the vendor API failed: ${String(cause)}`));
  return from(outcome).pipe(
    map((rejection): SessionItem => ({
      kind: 'input', session: effect.session,
      input: { type: 'forward.settled', at: now(), commandId: effect.command.id, ...(rejection === undefined ? {} : { rejection }) },
    })),
  );
}
