// The edge to a vendor's user-plane transport (send_input, D28, D29): an accepted input goes out
// through it and its answer comes back as a session input; what it observes (inputs consumed)
// becomes session inputs too. A transport that throws counts as unreachable, never as a crash.
import { EMPTY, from, map, type Observable } from 'rxjs';
import type { Effect, SessionItem } from './actor-host.js';
import type { InputOutcome, InputTransport } from './surface.js';

type SendEffect = Extract<Effect, { kind: 'send' }>;
type CancelEffect = Extract<Effect, { kind: 'cancel' }>;

/** Performs a user-plane effect: a send_input, or a cancel of the active run. */
export const throughTransport = (transport: InputTransport | undefined, effect: SendEffect | CancelEffect, logged: boolean, now: () => number): Observable<SessionItem> =>
  (effect.kind === 'send' ? sendThrough(transport, effect, logged, now) : cancelThrough(transport, effect, logged, now));

/** Forwards a cancel; no durable record of the step means nothing goes out (D22). */
export function cancelThrough(transport: InputTransport | undefined, effect: CancelEffect, logged: boolean, now: () => number): Observable<SessionItem> {
  const cancel = transport?.cancel?.bind(transport);
  const outcome: Promise<InputOutcome> = !logged || cancel === undefined
    ? Promise.resolve({ ok: false, detail: logged ? 'no transport' : 'log not durable' })
    : Promise.resolve().then(() => cancel(effect.session)).catch((cause: unknown): InputOutcome => ({ ok: false, detail: String(cause) }));
  return from(outcome).pipe(
    map((o): SessionItem => ({ kind: 'input', session: effect.session, input: { type: 'cancel.answered', at: now(), commandId: effect.commandId, ok: o.ok } })),
  );
}

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
