// D43 on the OpenHands agent server: a start is the user-message append with `run: true`, which
// begins the agent loop on an idle or finished conversation (event_service.py `send_message`).
// The REST answer only says the append was stored; the receipt is what the event socket shows
// next: our user MessageEvent, then the flip to `running` that opens the turn (its id is the
// bridge's run id). A start that finds the conversation running already goes in as a steer: the
// append with `run: false`, which the running loop reads at its next step; its receipt is the
// agent's first event after our message. OpenHands keeps no next-turn queue, so a start asked to
// become a queue in a running turn is refused rather than sent as something else.
import { mergeMap, type Observable } from 'rxjs';
import type { HookArrival } from '../../streams/hook-endpoint.js';
import type { LaneFact, LaneOutcome, LaneRequest } from '../../streams/lane.js';
import { statusOf, type OpenHandsFrame, type Status } from './map.js';
import type { AgentServer, WriteResult } from './agent-server.js';

interface Pending {
  commandId: string;
  text: string;
  started: boolean;
  /** Our user message is on the socket: what follows it is the receipt. */
  appended?: boolean;
}

/** The plain text of a user MessageEvent, as the append wrote it. */
function userText(event: Record<string, unknown>): string | undefined {
  if (event.kind !== 'MessageEvent' || event.source !== 'user') return undefined;
  const content = (event.llm_message as { content?: unknown } | undefined)?.content;
  if (!Array.isArray(content)) return undefined;
  return content
    .map((p) => ((p as { type?: unknown }).type === 'text' ? String((p as { text?: unknown }).text ?? '') : ''))
    .join('');
}

const failed = (r: Extract<WriteResult, { kind: 'http' | 'unreachable' }>): LaneOutcome =>
  r.kind === 'http'
    ? {
        ok: false,
        reason: 'refused',
        detail: `the agent server answered ${r.status}${r.detail ? `: ${r.detail}` : ''}`,
      }
    : { ok: false, reason: 'unreachable', detail: r.detail };

/** Statuses a start would not begin a fresh turn from: the person's pause, or a question open to them. */
const HELD: ReadonlySet<Status> = new Set(['paused', 'waiting_for_confirmation']);

export interface Starter {
  startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome>;
  facts$: Observable<LaneFact>;
}

export function openHandsStarter(
  server: AgentServer,
  status: (session: string) => Status | null | undefined,
  arrivals$: Observable<HookArrival>,
  now: () => number = Date.now,
): Starter {
  const pending = new Map<string, Pending>();

  function receipt(f: OpenHandsFrame): LaneFact[] {
    const p = pending.get(f.conversation_id);
    if (p === undefined || f.history === true) return [];
    if (!p.appended) {
      if (userText(f.event) === p.text) p.appended = true;
      return [];
    }
    const session = f.conversation_id;
    const base = { kind: 'delivered' as const, session, at: now(), commandId: p.commandId };
    if (p.started) {
      // The flip into running that opens the turn our message began.
      if (statusOf(f.event) !== 'running' || f.status_before === 'running' || f.run_after === undefined) return [];
      pending.delete(session);
      return [{ ...base, ref: f.run_after, started: true }];
    }
    // The running loop's next step read it: the agent's first event after it.
    if (f.event.source !== 'agent' || typeof f.event.id !== 'string') return [];
    pending.delete(session);
    return [{ ...base, ref: f.event.id }];
  }

  const facts$ = arrivals$.pipe(mergeMap((a) => receipt(a.body as unknown as OpenHandsFrame)));

  async function startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome> {
    const now = status(req.session);
    if (now === undefined || now === null)
      return { ok: false, reason: 'unreachable', detail: 'the bridge has not seen this conversation on its socket' };
    if (HELD.has(now))
      return {
        ok: false,
        reason: 'refused',
        detail: `the conversation is ${now}: answer or resume it in OpenHands first (a start would not begin a fresh turn)`,
      };
    const running = now === 'running';
    if (running && req.otherwise === 'queue')
      return {
        ok: false,
        reason: 'refused',
        detail:
          'a turn began meanwhile and OpenHands keeps no next-turn queue: send it again as a steer, or once it ends',
      };
    pending.set(req.session, { commandId: req.commandId, text: req.text, started: !running });
    const r = await (running ? server.sendMessage(req.session, req.text) : server.startWith(req.session, req.text));
    // No answer in time: the append may still land, and the socket's receipt stays the truth.
    if (r.kind === 'ok' || r.kind === 'timeout') return running ? { ok: true, became: 'steer' } : { ok: true };
    pending.delete(req.session);
    return failed(r);
  }

  return { startTurn, facts$ };
}
