// The opencode server lane (D50, on the D30–D33 contract): steer and queue map to the V2 prompt
// route's `delivery`, start on idle (D43) to a prompt, cancel to `interrupt` (V1 `abort` where
// the server lacks it), and permission requests to held requests answered on the server. The
// receipt for each prompt is `session.next.prompted` naming its message id: the loop folded it
// in. opencode 1.18.33 has no way to edit, reorder or take back a prompt it admitted, so the lane
// takes a `queue` only between turns (its hand-over row): one sent while a turn runs waits in the
// session's own queue, where the D44 verbs work on it, and is handed over when the turn ends
// (machines/queue-handover.ts); the lane posts what it is handed in order, one after another.
import { type Observable, Subject, merge, map, mergeMap, type Subscription } from 'rxjs';
import type { LaneFact, LaneOutcome, LaneRequest, LaneWithdrawn, SteeringLane } from '../../streams/lane.js';
import { toolPermissionHold } from '../table.js';
import {
  MESSAGE_UPDATED,
  PERMISSION_ASKED,
  PERMISSION_REPLIED,
  PROMPTED,
  SESSION_SEEN,
  TURN_ENDED,
  TURN_STARTED,
  rec,
  stepParentOf,
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
  /** The commands the prompt carries: one, or a queue handed over in one step (their texts joined). */
  commandIds: string[];
  /** D43: sent to start a turn; its receipt says whether it began one. */
  starting: boolean;
  /** A steer into the V1 loop: it runs next even when the turn ends first, so that end keeps it. */
  v1?: boolean;
}

interface Batched {
  req: LaneRequest;
  resolve: (o: LaneOutcome) => void;
}

export class OpencodeLane implements SteeringLane {
  readonly name = 'serve';
  readonly deliveries = ['steer', 'queue'] as const;
  readonly handsQueue = { take: 'all', as: 'queue' } as const;
  readonly how =
    'host the session on `opencode serve` (or `aep-steer run opencode`) and start the adapter with `--serve URL`';
  readonly facts$: Observable<LaneFact>;
  /** Prompts the server admitted, by message id, until their receipt. */
  private readonly sent = new Map<string, Sent>();
  private readonly byCommand = new Map<string, string>();
  private readonly delivered = new Map<string, string>();
  /** The last queue post per session: the next waits for it, so the server admits them in order. */
  private readonly posting = new Map<string, Promise<unknown>>();
  /** Queues handed over in one step of the core, gathered per session until the step's calls are in. */
  private readonly batches = new Map<string, Batched[]>();
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
    if (!(await this.server.busyNow(req.session)))
      return { ok: false, reason: 'idle', detail: 'no turn runs in this opencode session; a steer never starts one' };
    return this.post([req], 'steer', false);
  }

  /**
   * D31 `queue`: the server's next-turn queue. The queues the core hands over at a turn's end come
   * in one step; they go as one prompt, their texts in order, since a first prompt on an idle
   * session starts a turn at once and the ones behind it would wait for the turn after (observed
   * on 1.18.33). Each session's posts wait for the one before, so the server admits them in order.
   */
  queue(req: LaneRequest): Promise<LaneOutcome> {
    const done = this.answered(req);
    if (done !== undefined) return Promise.resolve(done);
    const batch = this.batches.get(req.session);
    return new Promise((resolve) => {
      if (batch !== undefined) return void batch.push({ req, resolve });
      this.batches.set(req.session, [{ req, resolve }]);
      // The step's other calls are made in this turn of the event loop.
      setImmediate(() => this.sendBatch(req.session));
    });
  }

  private sendBatch(session: string): void {
    const batch = this.batches.get(session) ?? [];
    this.batches.delete(session);
    const send = async (): Promise<LaneOutcome> => {
      if (!(await this.found(session))) return { ok: false, reason: 'unreachable', detail: this.unreachable(session) };
      return this.post(
        batch.map((b) => b.req),
        'queue',
        false,
      );
    };
    const next = (this.posting.get(session) ?? Promise.resolve()).then(send);
    const tail = next.catch(() => undefined);
    this.posting.set(session, tail);
    void tail.then((o) => {
      if (this.posting.get(session) === tail) this.posting.delete(session);
      const outcome: LaneOutcome = o ?? { ok: false, reason: 'unreachable', detail: 'the queue post failed' };
      for (const b of batch) b.resolve(outcome);
    });
  }

  /** D43: a prompt on an idle session starts its turn; a turn begun meanwhile takes it as `otherwise`. */
  async startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome> {
    const done = this.answered(req);
    if (done !== undefined) return done;
    if (!(await this.found(req.session)))
      return { ok: false, reason: 'unreachable', detail: this.unreachable(req.session) };
    if (await this.server.busyNow(req.session)) {
      const o = req.otherwise === 'steer' ? await this.steer(req) : await this.queue(req);
      return o.ok ? { ...o, became: req.otherwise } : o;
    }
    return this.post([req], 'steer', true);
  }

  /**
   * D32: a prompt the server admitted is the agent's: it runs at the loop's next step or turn.
   * 1.18.33 has no route to take back a V2 prompt, and V1 `DELETE /session/:id/message/:id`
   * refuses while the session is busy (409 `SessionBusyError`, the only time a steer waits there)
   * and would delete a message the model already read once it is idle. So nothing is taken back:
   * the core answers `already-delivered`, and the receipt still follows when the loop reads it.
   */
  async withdraw(_req: { session: string; commandId: string }): Promise<LaneWithdrawn> {
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

  /**
   * One prompt carrying these commands (one, or a queue handed over together), answered by their
   * receipt. A steer into a turn the V1 loop runs (a TUI's prompt) goes through V1 `prompt_async`:
   * a V2 prompt reaches that loop too, but no `prompted` receipt ever names it (observed on
   * 1.18.33, e2e/opencode-tui), while the V1 loop's next step names a V1 prompt as its parent.
   */
  private async post(reqs: LaneRequest[], delivery: 'steer' | 'queue', starting: boolean): Promise<LaneOutcome> {
    const session = reqs[0]!.session;
    const v1 = delivery === 'steer' && !starting && this.server.v1Turn(session);
    const commandIds = reqs.map((r) => r.commandId);
    const ref = messageIdFor(commandIds[0]!, Date.now());
    // Known before the answer: a receipt that overtakes the answer still finds its commands.
    this.sent.set(ref, { session, commandIds, starting, ...(v1 ? { v1 } : {}) });
    for (const id of commandIds) this.byCommand.set(id, ref);
    const forget = () => {
      this.sent.delete(ref);
      for (const id of commandIds) this.byCommand.delete(id);
    };
    const text = reqs.map((q) => q.text).join('\n\n');
    try {
      const r = v1
        ? await this.server.client.request('POST', `/session/${enc(session)}/prompt_async`, {
            messageID: ref,
            parts: [{ type: 'text', text }],
          })
        : await this.server.client.request('POST', `/api/session/${enc(session)}/prompt`, {
            id: ref,
            prompt: { text },
            delivery,
          });
      if (r.status === 200 || (v1 && r.status === 204)) return { ok: true, ref };
      forget();
      const message = str(rec(r.body)?.message) ?? '';
      const detail = `opencode answered the prompt with HTTP ${r.status}${message === '' ? '' : `: ${message}`}`;
      return { ok: false, reason: r.status === 404 || r.status >= 500 ? 'unreachable' : 'refused', detail };
    } catch (err) {
      forget();
      return { ok: false, reason: 'unreachable', detail: (err as Error).message };
    }
  }

  // ---- facts ------------------------------------------------------------------------------------

  /** `started`: the prompt began the turn; said when it was sent to start one, or began one anyway. */
  private receipt(session: string, ref: string, started: boolean): LaneFact[] {
    const s = this.sent.get(ref);
    if (s === undefined) return [];
    this.sent.delete(ref);
    for (const id of s.commandIds) {
      this.byCommand.delete(id);
      this.delivered.set(id, ref);
    }
    while (this.delivered.size > KEPT) this.delivered.delete(this.delivered.keys().next().value!);
    return s.commandIds.map(
      (commandId): LaneFact => ({
        kind: 'delivered',
        session,
        at: Date.now(),
        commandId,
        ref,
        ...(s.starting || (s.v1 === true && started) ? { started } : {}),
      }),
    );
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
      case MESSAGE_UPDATED: {
        // The server opened a turn named by the message this step answers: it began that turn.
        const ref = stepParentOf(e);
        return ref === undefined ? [] : this.receipt(session, ref, this.server.turnOf(session) === ref);
      }
      case TURN_ENDED: {
        if (turnId === undefined) return [];
        const interrupted = e.data.interrupted === true;
        const status = interrupted ? 'interrupted' : 'completed';
        // A V1 steer not read yet is the V1 loop's next prompt: it runs, and its receipt comes later.
        const kept = interrupted
          ? []
          : [...this.sent.values()].filter((x) => x.session === session && x.v1 === true).flatMap((x) => x.commandIds);
        return [{ kind: 'turn.ended', session, at, turnId, status, interrupted, ...(kept.length ? { kept } : {}) }];
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
