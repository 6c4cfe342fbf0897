// The edge to a vendor's user-plane transport (send_input, D28, D29): an accepted input goes out
// through it and its answer comes back as a session input; what it observes (inputs consumed)
// becomes session inputs too. A transport that throws counts as unreachable, never as a crash.
import { EMPTY, from, map, mergeMap, type Observable } from 'rxjs';
import { newId, type Rejection } from '../protocol/index.js';
import type { SessionInput } from '../machines/session-input.js';
import type { ActorHost } from './actor-host.js';
import type { Effect, SessionItem } from './step-types.js';
import type { Controller, InputOutcome, InputTransport, WithdrawOutcome } from './surface.js';

type SendEffect = Extract<Effect, { kind: 'send' }>;
type ForwardEffect = Extract<Effect, { kind: 'forward' }>;
type CancelEffect = Extract<Effect, { kind: 'cancel' }>;
type AnswerEffect = Extract<Effect, { kind: 'answer' }>;
type WithdrawEffect = Extract<Effect, { kind: 'withdraw' }>;
/** Performs a user-plane effect: a send_input, a cancel of the active run, a withdraw, or an approval's answer. */
export function throughTransport(
  transport: InputTransport | undefined,
  effect: SendEffect | CancelEffect | AnswerEffect | WithdrawEffect,
  logged: boolean,
  now: () => number,
): Observable<SessionItem> {
  if (effect.kind === 'send') return sendThrough(transport, effect, logged, now);
  if (effect.kind === 'cancel') return cancelThrough(transport, effect, logged, now);
  if (effect.kind === 'withdraw') return withdrawThrough(transport, effect, logged, now);
  // The answer is on the stream already; a vendor that settled the request meanwhile reports it
  // as approval.resolved, which finds the hold gone and adds nothing.
  if (logged)
    void Promise.resolve()
      .then(() => transport?.answer?.(effect.session, effect.approvalId, effect.approved, effect.reason))
      .catch(() => undefined);
  return EMPTY;
}

/**
 * One call on the transport, as the session input its answer becomes. No durable record of the
 * step means no call (D22); a missing verb or a throw is an answer too, never a crash.
 */
function answered<T>(
  session: string,
  call: (() => Promise<T>) | undefined,
  logged: boolean,
  failed: (detail: string) => T,
  toInput: (o: T) => SessionInput,
): Observable<SessionItem> {
  const outcome: Promise<T> =
    !logged || call === undefined
      ? Promise.resolve(failed(logged ? 'no transport' : 'log not durable'))
      : Promise.resolve()
          .then(call)
          .catch((cause: unknown) => failed(String(cause)));
  return from(outcome).pipe(map((o): SessionItem => ({ kind: 'input', session, input: toInput(o) })));
}

const notTaken = (detail: string): InputOutcome => ({ ok: false, detail });

/** Forwards a cancel; no durable record of the step means nothing goes out (D22). */
export function cancelThrough(
  transport: InputTransport | undefined,
  effect: CancelEffect,
  logged: boolean,
  now: () => number,
): Observable<SessionItem> {
  const cancel = transport?.cancel?.bind(transport);
  return answered(effect.session, cancel && (() => cancel(effect.session)), logged, notTaken, (o) => ({
    type: 'cancel.answered',
    at: now(),
    commandId: effect.commandId,
    ok: o.ok,
  }));
}

/** D32: asks the vendor's queue for an input back; no durable record of the step means nothing goes out (D22). */
export function withdrawThrough(
  transport: InputTransport | undefined,
  effect: WithdrawEffect,
  logged: boolean,
  now: () => number,
): Observable<SessionItem> {
  const withdraw = transport?.withdraw?.bind(transport);
  const req = { session: effect.session, commandId: effect.inputId, text: effect.text };
  return answered(
    effect.session,
    withdraw && (() => withdraw(req)),
    logged,
    (error): WithdrawOutcome => ({ error }),
    (o) => ({
      type: 'withdraw.answered',
      at: now(),
      commandId: effect.commandId,
      ...('removed' in o ? { removed: o.removed } : { detail: o.error }),
    }),
  );
}

/** Performs one send. `logged` false means the ack is not durable: nothing goes out (D22). */
export function sendThrough(
  transport: InputTransport | undefined,
  effect: SendEffect,
  logged: boolean,
  now: () => number,
): Observable<SessionItem> {
  const req = {
    session: effect.session,
    commandId: effect.commandId,
    text: effect.text,
    ...(effect.delivery === undefined ? {} : { delivery: effect.delivery }),
  };
  return answered(effect.session, transport && (() => transport.send(req)), logged, notTaken, (o) => ({
    type: o.ok ? 'input.sent' : 'input.failed',
    at: now(),
    commandId: effect.commandId,
  }));
}

/** The transport's observations as session inputs; a lost channel reaches every session holding one of its requests. */
export const fromTransportFacts = (
  transport: InputTransport | undefined,
  host: ActorHost,
  control = false,
): Observable<SessionItem> =>
  transport?.facts$?.pipe(
    mergeMap((f): Observable<SessionItem> => {
      switch (f.kind) {
        case 'consumed':
          return from([
            {
              kind: 'input' as const,
              session: f.session,
              input: { type: 'input.consumed' as const, at: f.at, text: f.text },
            },
          ]);
        case 'approval': {
          // Observed only (tap without control): the request is answered in the vendor's UI alone.
          const request = control ? f.request : { ...f.request, respondVia: ['oob'] };
          return from([
            {
              kind: 'input' as const,
              session: f.session,
              input: {
                type: 'approval.requested' as const,
                at: f.at,
                requestId: newId(f.at),
                approvalId: f.approvalId,
                request,
              },
            },
          ]);
        }
        case 'approval.resolved': {
          const input = {
            type: 'approval.resolved' as const,
            at: f.at,
            approvalId: f.approvalId,
            answeredId: newId(f.at),
            ...(f.approved === undefined ? {} : { approved: f.approved }),
          };
          return from([{ kind: 'input' as const, session: f.session, input }]);
        }
        case 'lost':
          return from(
            host
              .sessionKeys()
              .filter((s) => host.context(s)?.holds.some((h) => h.external !== undefined) === true)
              .map((session): SessionItem => ({ kind: 'input', session, input: { type: 'transport.lost', at: f.at } })),
          );
      }
    }),
  ) ?? EMPTY;

const UNREACHABLE = (detail: string): Rejection => ({ reason: 'busy', rule: 'transport-down', detail });

/**
 * Carries one forwarded command out; its answer is the decision. A controller that throws counts
 * as unreachable (`busy`). `logged` false: the command input is not durable, nothing goes out (D22).
 */
export function forwardThrough(
  controller: Controller | undefined,
  effect: ForwardEffect,
  logged: boolean,
  now: () => number,
): Observable<SessionItem> {
  const outcome: Promise<Rejection | undefined> =
    !logged || controller === undefined
      ? Promise.resolve(UNREACHABLE(logged ? 'no controller' : 'log not durable'))
      : Promise.resolve()
          .then(() => controller.perform(effect.session, effect.command))
          .catch((cause: unknown) => UNREACHABLE(`the vendor API failed: ${String(cause)}`));
  return from(outcome).pipe(
    map(
      (rejection): SessionItem => ({
        kind: 'input',
        session: effect.session,
        input: {
          type: 'forward.settled',
          at: now(),
          commandId: effect.command.id,
          ...(rejection === undefined ? {} : { rejection }),
        },
      }),
    ),
  );
}
