// The opencode server lane (D50, on the D30–D33 contract): steer and queue map to the V2 prompt
// route's `delivery`, start on idle (D43) to a prompt, cancel to `interrupt` (V1 `abort` where
// the server lacks it), and permission requests to held requests answered on the server. The
// receipt for each prompt is `session.next.prompted` naming its message id: the loop folded it
// in. opencode 1.18.33 has no way to take an admitted prompt back, so a queued instruction
// stays with the lane (D44: the adapter keeps an item until it must hand it over) until the
// running turn ends, and only then goes to the server's queue; until then withdraw removes it.
import { type Observable, Subject, merge, map, mergeMap, type Subscription } from 'rxjs';
import type { LaneFact, LaneOutcome, LaneRequest, LaneWithdrawn, SteeringLane } from '../../streams/lane.js';
import { toolPermissionHold } from '../table.js';
import {
  PERMISSION_ASKED,
  PERMISSION_REPLIED,
  PROMPTED,
  SESSION_SEEN,
  TURN_ENDED,
  TURN_STARTED,
  rec,
  str,
  type OpencodeEvent,
} from './frames.js';
import { messageIdFor } from './ids.js';
import type { OpencodeServer } from './server.js';

const TOKEN = 'opencode';
const enc = encodeURIComponent;
/** Receipts remembered, so a resend after one is answered without sending again (the core dedupes too, D4). */
const KEPT = 4096;

interface Sent {
  session: string;
  commandId: string;
  text: string;
  /** D43: sent to start a turn; its receipt says whether it began one. */
  starting: boolean;
}

interface Waiting {
  commandId: string;
  text: string;
  ref: string;
}

export class OpencodeLane implements SteeringLane {
  readonly name = 'serve';
  readonly deliveries = ['steer', 'queue'] as const;
  readonly keepsQueued = true;
  readonly how =
    'host the session on `opencode serve` (or `aep-steer run opencode`) and start the adapter with `--serve URL`';
  readonly facts$: Observable<LaneFact>;
  /** Prompts the server admitted, by message id, until their receipt. */
  private readonly sent = new Map<string, Sent>();
  private readonly byCommand = new Map<string, string>();
  private readonly delivered = new Map<string, string>();
  /** Queued instructions the lane keeps while a turn runs, per session, in order. */
  private readonly waiting = new Map<string, Waiting[]>();
  private readonly local = new Subject<LaneFact>();
  private readonly sub: Subscription;

  constructor(private readonly server: OpencodeServer) {
    const facts = merge(
      server.events$.pipe(mergeMap((e) => this.factsOf(e))),
      server.lost$.pipe(map((detail): LaneFact => ({ kind: 'lost', at: Date.now(), detail, said: true }))),
      this.local,
    );
    // One subscription to the server, shared by every subscriber (the core subscribes once).
    const out = new Subject<LaneFact>();
    this.sub = facts.subscribe(out);
    this.facts$ = out.asObservable();
  }

  reaches(session: string): boolean {
    return this.server.hosts(session);
  }

  async steer(req: LaneRequest): Promise<LaneOutcome> {
    const done = this.answered(req);
    if (done !== undefined) return done;
    if (!(await this.found(req.session)))
      return { ok: false, reason: 'unreachable', detail: this.unreachable(req.session) };
    if (this.server.turnOf(req.session) === undefined)
      return { ok: false, reason: 'idle', detail: 'no turn runs in this opencode session; a steer never starts one' };
    return this.post(req, 'steer', false);
  }

  /** D31 `queue`: kept by the lane while a turn runs (see the head of the file); sent at once when none does. */
  async queue(req: LaneRequest): Promise<LaneOutcome> {
    const done = this.answered(req);
    if (done !== undefined) return done;
    const kept = this.waiting.get(req.session)?.find((w) => w.commandId === req.commandId);
    if (kept !== undefined) return { ok: true, ref: kept.ref };
    if (!(await this.found(req.session)))
      return { ok: false, reason: 'unreachable', detail: this.unreachable(req.session) };
    if (this.server.turnOf(req.session) === undefined) return this.post(req, 'queue', false);
    const ref = messageIdFor(req.commandId, Date.now());
    this.waiting.set(req.session, [...(this.waiting.get(req.session) ?? []), { ...req, ref }]);
    return { ok: true, ref };
  }

  /** D43: a prompt on an idle session starts its turn; a turn begun meanwhile takes it as `otherwise`. */
  async startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome> {
    const done = this.answered(req);
    if (done !== undefined) return done;
    if (!(await this.found(req.session)))
      return { ok: false, reason: 'unreachable', detail: this.unreachable(req.session) };
    if (this.server.turnOf(req.session) !== undefined) {
      const o = req.otherwise === 'steer' ? await this.steer(req) : await this.queue(req);
      return o.ok ? { ...o, became: req.otherwise } : o;
    }
    return this.post(req, 'steer', true);
  }

  async withdraw({ session, commandId }: { session: string; commandId: string }): Promise<LaneWithdrawn> {
    const list = this.waiting.get(session) ?? [];
    const i = list.findIndex((w) => w.commandId === commandId);
    if (i >= 0) {
      list.splice(i, 1);
      return { removed: true };
    }
    const ref = this.byCommand.get(commandId);
    if (ref !== undefined && this.sent.has(ref))
      return {
        error:
          'opencode 1.18.33 admitted this prompt and has no way to take it back (no inbox route); it runs at the ' +
          'next step or turn',
      };
    return { removed: false };
  }

  /** D33: `POST /api/session/:id/interrupt`; the AEP mapping's `session.abort` (V1) where that route is missing. */
  async interrupt(session: string): Promise<{ ok: true } | { ok: false; detail: string }> {
    if (!this.server.hosts(session)) return { ok: false, detail: this.unreachable(session) };
    if (this.server.turnOf(session) === undefined)
      return { ok: false, detail: 'no turn runs in this opencode session; nothing to stop' };
    this.server.stopping(session);
    try {
      const r = await this.server.client.request('POST', `/api/session/${enc(session)}/interrupt`);
      if (r.status === 204 || r.status === 200) return { ok: true };
      if (r.status !== 404 && r.status !== 405)
        return { ok: false, detail: `opencode answered the interrupt with HTTP ${r.status}` };
      const v1 = await this.server.client.request('POST', `/session/${enc(session)}/abort`);
      return v1.status === 200
        ? { ok: true }
        : { ok: false, detail: `opencode answered the abort with HTTP ${v1.status}` };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  async answer(
    session: string,
    approvalId: string,
    approved: boolean,
    reason?: string,
  ): Promise<{ ok: true } | { ok: false; detail: string }> {
    try {
      const r = await this.server.client.request(
        'POST',
        `/api/session/${enc(session)}/permission/${enc(approvalId)}/reply`,
        { reply: approved ? 'once' : 'reject', ...(reason === undefined || approved ? {} : { message: reason }) },
      );
      if (r.status === 204 || r.status === 200) return { ok: true };
      return { ok: false, detail: `opencode answered the permission reply with HTTP ${r.status} (already answered?)` };
    } catch (err) {
      return { ok: false, detail: (err as Error).message };
    }
  }

  async close(): Promise<void> {
    this.sub.unsubscribe();
    this.local.complete();
  }

  // ---- sending ---------------------------------------------------------------------------------

  /** A resend of a command already delivered or in flight is answered without sending again. */
  private answered(req: LaneRequest): LaneOutcome | undefined {
    const done = this.delivered.get(req.commandId) ?? this.byCommand.get(req.commandId);
    return done === undefined ? undefined : { ok: true, ref: done };
  }

  private async found(session: string): Promise<boolean> {
    return this.server.hosts(session) || (await this.server.find(session));
  }

  private unreachable(session: string): string {
    const h = this.server.state();
    if (h.kind === 'down' || h.kind === 'refused') return h.error.message;
    return `the opencode server at ${this.server.client.url} hosts no session ${session}`;
  }

  private async post(
    req: LaneRequest,
    delivery: 'steer' | 'queue',
    starting: boolean,
    ref = messageIdFor(req.commandId, Date.now()),
  ): Promise<LaneOutcome> {
    // Known before the answer: a receipt that overtakes the answer still finds its command.
    this.sent.set(ref, { session: req.session, commandId: req.commandId, text: req.text, starting });
    this.byCommand.set(req.commandId, ref);
    const forget = () => {
      this.sent.delete(ref);
      this.byCommand.delete(req.commandId);
    };
    try {
      const r = await this.server.client.request('POST', `/api/session/${enc(req.session)}/prompt`, {
        id: ref,
        prompt: { text: req.text },
        delivery,
      });
      if (r.status === 200) return { ok: true, ref };
      forget();
      const message = str(rec(r.body)?.message) ?? '';
      const detail = `opencode answered the prompt with HTTP ${r.status}${message === '' ? '' : `: ${message}`}`;
      return { ok: false, reason: r.status === 404 || r.status >= 500 ? 'unreachable' : 'refused', detail };
    } catch (err) {
      forget();
      return { ok: false, reason: 'unreachable', detail: (err as Error).message };
    }
  }

  /** A turn ended normally: what the lane kept goes to the server's queue, in order (the first starts the next turn). */
  private async flush(session: string): Promise<void> {
    const list = this.waiting.get(session);
    if (list === undefined || list.length === 0) return;
    this.waiting.delete(session);
    for (const w of list) {
      const o = await this.post({ session, commandId: w.commandId, text: w.text }, 'queue', false, w.ref);
      // Not taken: kept again for the next turn's end, where the core's TTL still bounds it.
      if (!o.ok) this.waiting.set(session, [...(this.waiting.get(session) ?? []), w]);
    }
  }

  // ---- facts ------------------------------------------------------------------------------------

  private receipt(session: string, ref: string, started: boolean): LaneFact[] {
    const s = this.sent.get(ref);
    if (s === undefined) return [];
    this.sent.delete(ref);
    this.byCommand.delete(s.commandId);
    this.delivered.set(s.commandId, ref);
    if (this.delivered.size > KEPT) this.delivered.delete(this.delivered.keys().next().value!);
    return [
      {
        kind: 'delivered',
        session,
        at: Date.now(),
        commandId: s.commandId,
        ref,
        ...(s.starting ? { started } : {}),
      },
    ];
  }

  private factsOf(e: OpencodeEvent): LaneFact[] {
    const session = e.session;
    if (session === undefined) return [];
    const at = Date.now();
    const turnId = str(e.data.turnId);
    switch (e.type) {
      case SESSION_SEEN:
        return [{ kind: 'attached', session, at }];
      case TURN_STARTED:
        return turnId === undefined ? [] : [{ kind: 'turn.started', session, at, turnId }];
      case PROMPTED: {
        const ref = str(e.data.messageID);
        return ref === undefined ? [] : this.receipt(session, ref, this.server.turnOf(session) === ref);
      }
      case TURN_ENDED: {
        if (turnId === undefined) return [];
        const interrupted = e.data.interrupted === true;
        // What waits stays kept after a stop (opencode parks its own queue too); it goes at the next turn's end.
        if (!interrupted) void this.flush(session);
        const status = interrupted ? 'interrupted' : 'completed';
        return [{ kind: 'turn.ended', session, at, turnId, status, interrupted }];
      }
      case PERMISSION_ASKED:
        return this.asked(session, e, at);
      case PERMISSION_REPLIED: {
        const approvalId = str(e.data.requestID);
        if (approvalId === undefined) return [];
        return [{ kind: 'approval.resolved', session, at, approvalId, approved: e.data.reply !== 'reject' }];
      }
      default:
        return [];
    }
  }

  /** `permission.v2.asked {id, action, resources, source: {callID}}` as a held request (D34, D35: what it asks). */
  private asked(session: string, e: OpencodeEvent, at: number): LaneFact[] {
    const approvalId = str(e.data.id);
    if (approvalId === undefined) return [];
    const tool = str(e.data.action) ?? 'a tool';
    const resources = Array.isArray(e.data.resources) ? e.data.resources.filter((r) => typeof r === 'string') : [];
    const detail = resources.length === 0 ? undefined : resources.join('; ');
    const { request } = toolPermissionHold(
      TOKEN,
      tool,
      { requestID: approvalId, callID: str(rec(e.data.source)?.callID) ?? '' },
      undefined,
      detail,
    );
    // First responder wins: the person's attached TUI may answer it too.
    return [{ kind: 'approval', session, at, approvalId, request: { ...request, respondVia: ['control', 'oob'] } }];
  }
}
