// The Cline hub as the adapter's user-plane transport (D28): send_input is hub
// `session.send_input {prompt, delivery}` on the hook session's id (`rootSessionId`), and the
// hub's `session.pending_prompt_submitted` reports each consumption.
import { filter, mergeMap, EMPTY, of, type Observable } from 'rxjs';
import type { InputOutcome, InputRequest, InputTransport, TransportFact } from '../../streams/surface.js';
import type { HubConnection, HubEvent } from './connection.js';

const promptOf = (e: HubEvent): string | undefined => {
  const p = e.payload.prompt;
  const text = typeof p === 'object' && p !== null ? (p as Record<string, unknown>).prompt : undefined;
  return typeof text === 'string' ? text : undefined;
};

export function hubTransport(hub: HubConnection, now: () => number = Date.now): InputTransport & { hub: HubConnection } {
  const facts$: Observable<TransportFact> = hub.events$.pipe(
    filter((e) => e.event === 'session.pending_prompt_submitted'),
    mergeMap((e) => {
      const text = promptOf(e);
      return text === undefined || e.sessionId === undefined ? EMPTY : of({ kind: 'consumed' as const, session: e.sessionId, at: now(), text });
    }),
  );
  return {
    hub,
    ready: () => hub.ready(),
    async send(req: InputRequest): Promise<InputOutcome> {
      const payload: Record<string, unknown> = { prompt: req.text };
      if (req.delivery !== undefined) payload.delivery = req.delivery;
      const reply = await hub.command('session.send_input', req.session, payload);
      return reply.ok ? { ok: true } : { ok: false, detail: reply.error?.code ?? 'hub refused' };
    },
    async cancel(session: string): Promise<InputOutcome> {
      const reply = await hub.command('run.abort', session, {});
      return reply.ok ? { ok: true } : { ok: false, detail: reply.error?.code ?? 'hub refused' };
    },
    facts$,
  };
}
