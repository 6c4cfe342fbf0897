// The Cline hub as the adapter's lane `hub`, the vendor's user-plane channel (D28): send_input is hub
// `session.send_input {prompt, delivery}` on the hook session's id (`rootSessionId`), the hub's
// `session.pending_prompt_submitted` reports each consumption, `run.abort` cancels the active run,
// a withdraw finds the input among `session.pending_prompts` by its text (the hub's reply to
// send_input names no prompt id; the gate keeps pending texts distinct) and takes it out with
// `session.remove_pending_prompt`, whose `removed` says whether the hub still held it, and the
// approval loop (`approval.requested` / `approval.respond` / `approval.resolved`) becomes
// attention requests answered through the same socket. D43: a start is a queued send_input the hub
// begins a turn with when the session is idle (starts.ts).
import { filter, map, merge, mergeMap, tap, type Observable } from 'rxjs';
import type { Lane, LaneDone, LaneFact, LaneOutcome, LaneRequest, LaneWithdrawn } from '../../../streams/lane.js';
import type { HubConnection, HubEvent, HubReply } from './connection.js';
import { startBook } from './starts.js';
import { toolDetail } from '../../tool-detail.js';

const TOKEN = 'cline';
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The hub's `inputJson`, parsed; undefined when absent or not JSON. */
function parsed(json: string | undefined): unknown {
  if (json === undefined) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

const promptOf = (e: HubEvent): string | undefined => {
  const p = e.payload.prompt;
  return typeof p === 'object' && p !== null ? str((p as Record<string, unknown>).prompt) : undefined;
};

const outcome = (reply: HubReply): LaneOutcome =>
  reply.ok ? { ok: true } : { ok: false, reason: 'refused', detail: reply.error?.code ?? 'hub refused' };
/** A start the hub did not take: down or unanswered is unreachable, the rest its refusal. */
const notTaken = (reply: HubReply): LaneOutcome => {
  const code = reply.error?.code ?? 'hub refused';
  return {
    ok: false,
    reason: code === 'hub_unreachable' || code === 'hub_timeout' ? 'unreachable' : 'refused',
    detail: code,
  };
};
const done = (reply: HubReply): LaneDone =>
  reply.ok ? { ok: true } : { ok: false, detail: reply.error?.code ?? 'hub refused' };

/** The id of the pending prompt holding `text`, from a `session.pending_prompts` reply. */
function pendingIdOf(reply: HubReply, text: string): string | undefined {
  const prompts = Array.isArray(reply.payload?.prompts) ? (reply.payload.prompts as unknown[]) : [];
  for (const p of prompts) {
    const entry = typeof p === 'object' && p !== null ? (p as Record<string, unknown>) : {};
    if (entry.prompt === text) return str(entry.id);
  }
  return undefined;
}

/** One hub event as the facts it carries (none for the rest of the hub's 48 events). */
function factsOf(e: HubEvent, at: number): LaneFact[] {
  const session = e.sessionId;
  if (session === undefined) return [];
  switch (e.event) {
    case 'session.pending_prompt_submitted': {
      const text = promptOf(e);
      return text === undefined ? [] : [{ kind: 'consumed', session, at, text }];
    }
    case 'approval.requested': {
      const approvalId = str(e.payload.approvalId);
      if (approvalId === undefined) return [];
      const tool = str(e.payload.toolName) ?? 'a tool';
      // D35: what the tool will do rides as `detail` (redacted-class); the tool input itself stays out.
      const detail = toolDetail(parsed(str(e.payload.inputJson)));
      return [
        {
          kind: 'approval',
          session,
          at,
          approvalId,
          request: {
            kind: 'permission',
            prompt: `${TOKEN} requests permission to use ${tool}`,
            subject: tool,
            options: [
              { id: 'approve', label: 'Approve' },
              { id: 'deny', label: 'Deny' },
            ],
            respondVia: ['control', 'oob'],
            context: { toolCallId: str(e.payload.toolCallId) ?? '' },
            ...(detail === undefined ? {} : { detail }),
          },
        },
      ];
    }
    case 'approval.resolved': {
      const approvalId = str(e.payload.approvalId);
      if (approvalId === undefined) return [];
      const cancelled = e.payload.cancelled === true || typeof e.payload.approved !== 'boolean';
      return [
        cancelled
          ? { kind: 'approval.resolved', session, at, approvalId }
          : { kind: 'approval.resolved', session, at, approvalId, approved: e.payload.approved === true },
      ];
    }
    default:
      return [];
  }
}

export function hubLane(hub: HubConnection, now: () => number = Date.now): Lane & { hub: HubConnection } {
  const events$: Observable<LaneFact> = hub.events$.pipe(mergeMap((e) => factsOf(e, now())));
  const starts = startBook(hub, now);
  // The connection says itself why the hub went away (and when it is back).
  const lost$: Observable<LaneFact> = hub.up$.pipe(
    filter((up) => !up),
    tap(() => starts.clear()),
    map((): LaneFact => ({ kind: 'lost', at: now(), detail: 'the Cline hub connection dropped', said: true })),
  );
  // A withdraw racing its own send waits for the hub's answer to it: only then is the prompt listed.
  const sending = new Map<string, Promise<unknown>>();

  /**
   * D43: the prompt goes in queued; the hub begins a turn with it at once if the agent is idle
   * (its submission comes before the reply), else holds it for the next turn. Held, it is the
   * start's `otherwise`: `queue` as it stands, `steer` once the hub is asked to fold it into the
   * running turn (`session.update_pending_prompt`, as Cline's own "steer" on a queued prompt).
   */
  async function startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome> {
    const { requestId, reply } = hub.issue('session.send_input', req.session, { prompt: req.text, delivery: 'queue' });
    const s = starts.open(req, requestId);
    sending.set(req.commandId, reply);
    let answer: HubReply;
    try {
      answer = await reply;
    } finally {
      sending.delete(req.commandId);
    }
    s.replied = true;
    const ref = s.promptId === undefined ? {} : { ref: s.promptId };
    if (!answer.ok || s.submitted) {
      starts.close(s);
      return answer.ok ? { ok: true, ...ref } : notTaken(answer);
    }
    if (req.otherwise === 'queue' || s.promptId === undefined) return { ok: true, ...ref, became: 'queue' };
    const steered = await hub.command('session.update_pending_prompt', req.session, {
      promptId: s.promptId,
      delivery: 'steer',
    });
    if (steered.ok && steered.payload?.updated === true) return { ok: true, ...ref, became: 'steer' };
    // Not held any more: the running turn ended and the hub began the next with it; or the steer
    // was refused and it still waits for the next turn.
    if (s.submitted || !steered.ok) return { ok: true, ...ref, became: 'queue' };
    starts.close(s);
    return { ok: false, reason: 'refused', detail: 'the hub no longer holds the prompt' };
  }
  return {
    hub,
    name: 'hub',
    deliveries: [],
    how: 'run Cline with its hub (`cline hub ensure`) and the adapter with `--user-plane-control`',
    // The hub reaches every session of the Cline it serves; send_input is refused while it is down.
    reaches: () => hub.ready(),
    ready: () => hub.ready(),
    async send(req): Promise<LaneOutcome> {
      const payload: Record<string, unknown> = { prompt: req.text };
      if (req.delivery !== undefined) payload.delivery = req.delivery;
      const reply = hub.command('session.send_input', req.session, payload);
      sending.set(req.commandId, reply);
      try {
        return outcome(await reply);
      } finally {
        sending.delete(req.commandId);
      }
    },
    async withdraw(req): Promise<LaneWithdrawn> {
      await sending.get(req.commandId);
      const listed = await hub.command('session.pending_prompts', req.session, {});
      if (!listed.ok) return { error: listed.error?.code ?? 'session.pending_prompts refused' };
      const promptId = pendingIdOf(listed, req.text ?? '');
      // Not listed: the agent took it already (its pending_prompt_submitted reports that).
      if (promptId === undefined) return { removed: false };
      const removed = await hub.command('session.remove_pending_prompt', req.session, { promptId });
      if (!removed.ok) return { error: removed.error?.code ?? 'session.remove_pending_prompt refused' };
      return { removed: removed.payload?.removed === true };
    },
    async interrupt(session) {
      return done(await hub.command('run.abort', session, {}));
    },
    async answer(session, approvalId, approved, reason) {
      return done(
        await hub.command('approval.respond', session, {
          approvalId,
          approved,
          ...(reason === undefined ? {} : { reason }),
        }),
      );
    },
    startTurn,
    facts$: merge(events$, starts.facts$, lost$),
    close: () => hub.close(),
  };
}
