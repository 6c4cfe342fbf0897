// The Qwen Code `qwen serve` native lane (D30–D33): finds the daemon's live sessions, follows
// each over SSE, and carries steer (a mid-turn message, read at the next model request of the
// running turn), queue (a prompt of its own: the daemon's next turn), withdraw, interrupt (cancel)
// and permission answers over its HTTP API. The command id is the daemon's `messageId`.
// A daemon that stops answering is one `lost` fact and one message; the lane retries with
// backoff and attaches again when it is back.
import { Observable, Subject, type Subscription } from 'rxjs';
import { SteeringError } from '../../../protocol/errors.js';
import type { LaneFact, LaneOutcome, LaneRequest, LaneWithdrawn, SteeringLane } from '../../../streams/lane.js';
import { liveSessions, serveClient, type ServeClient } from './client.js';
import {
  factsOf,
  optionsOf,
  permissionAnswer,
  queueOutcome,
  removedOf,
  steerOutcome,
  type ServeEvent,
  type SessionView,
} from './maps.js';
import { followSession } from './sse.js';
import { gatherPerStep } from './gather.js';
import {
  DELIVERED_KEPT,
  ENDED_KEPT,
  REMOVED_WAIT_MS,
  type Followed,
  type Health,
  type Held,
  type InterruptResult,
  type QwenServeLaneOptions,
  queuedIn,
  standing,
  type Standing,
} from './lane-state.js';

const enc = encodeURIComponent;

export class QwenServeLane implements SteeringLane {
  readonly name = 'serve';
  // D31 `queue` is the daemon's prompt queue, always (`queue()` says why); the hook lane has none.
  readonly deliveries = ['steer', 'queue'] as const;
  // An uninjected mid-turn message runs as the next prompt; `pending_prompt_started` is its receipt (0.24.4).
  readonly keepsUnread = true;
  // D44: pending prompts cannot be edited or moved; what waits goes over at a turn's end as one prompt.
  readonly handsQueue = { take: 'all', as: 'queue' } as const;
  readonly how = 'host the session on a `qwen serve` daemon and start the adapter with `--serve URL`';
  readonly facts$: Observable<LaneFact>;
  private readonly client: ServeClient;
  private readonly subject = new Subject<LaneFact>();
  private readonly sessions = new Map<string, Followed>();
  private readonly held = new Map<string, Held>();
  /** The commands each daemon reference carries: one, or a queue handed over as one prompt (D44). */
  private readonly byRef = new Map<string, string[]>();
  private readonly delivered = new Map<string, string>();
  /** Queued prompts the daemon has not answered yet: a withdraw waits for the prompt id. */
  private readonly sending = new Map<string, Promise<LaneOutcome>>();
  /** Queued prompts taken back, awaiting the stream's word (`pending_prompt_completed`). */
  private readonly removing = new Map<string, () => void>();
  /** D43: prompts sent to start a turn, by command id, with the turn ending when each was sent. */
  private readonly starting = new Map<string, string | undefined>();
  /** Prompts the daemon queued behind a running turn (`pending_prompt_added`), by prompt id. */
  private readonly queued = new Set<string>();
  /** Withdraws under way, by command id. */
  private readonly withdrawing = new Map<string, Promise<{ removed: boolean } | { error: string }>>();
  private health: Health = { kind: 'starting' };
  private workspace: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retry: number;
  private started = false;
  private closed = false;
  private polling: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly report: (e: SteeringError) => void;

  constructor(private readonly o: QwenServeLaneOptions) {
    this.client = serveClient(o);
    this.now = o.now ?? Date.now;
    this.retry = o.retryMs ?? 250;
    this.report = o.onError ?? ((e) => process.stderr.write(`aep-steer adapter: ${e.code}: ${e.message}\n`));
    // Discovery starts with the first subscriber, so no fact is emitted before anyone listens.
    this.facts$ = new Observable<LaneFact>((sub) => {
      const s = this.subject.subscribe(sub);
      this.start();
      return s;
    });
  }

  /** Starts discovery (the first subscription to `facts$` does this too). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    void this.tick();
  }

  /** `aep-steer run qwen-code`: where the daemon is, so the run opens a session of its own there. */
  async open(): Promise<Record<string, unknown>> {
    return { url: this.client.url, ...(this.o.tokenFile === undefined ? {} : { tokenFile: this.o.tokenFile }) };
  }

  reaches(session: string): boolean {
    return this.health.kind === 'up' && this.sessions.get(session)?.attached === true;
  }

  async steer(req: LaneRequest): Promise<LaneOutcome> {
    const done = this.delivered.get(req.commandId);
    // The daemon dedupes on the id too, but after the receipt a resend would only be acknowledged.
    if (done !== undefined) return { ok: true, ref: done };
    const down = await this.unreached(req.session);
    if (down !== undefined) return down;
    const running = this.sessions.get(req.session)?.turn !== undefined;
    // The id is known before the answer: a receipt that overtakes the answer still finds its command.
    const before = this.held.get(req.commandId);
    this.hold(req, 'steer', req.commandId);
    const r = await this.call('POST', `/session/${enc(req.session)}/mid-turn-message`, {
      message: req.text,
      messageId: req.commandId,
    });
    const out = 'reason' in r ? r : steerOutcome(r, req.commandId, running);
    if (!out.ok && this.held.get(req.commandId)?.text === req.text) {
      this.release(req.commandId);
      if (before !== undefined) this.hold({ ...req, text: before.text }, before.via, before.ref);
    }
    return out;
  }

  /**
   * D31 `queue` is a prompt of its own (`POST /session/:id/prompt`): the daemon runs it as the next
   * turn, or now if none runs; either way the text is the first model request of the turn it
   * starts, once. The receipt is that turn's start (`pending_prompt_started`, or the prompt's
   * echo), named by the daemon's prompt id.
   */
  async queue(req: LaneRequest): Promise<LaneOutcome> {
    const done = this.delivered.get(req.commandId);
    if (done !== undefined) return { ok: true, ref: done };
    const mine = this.held.get(req.commandId);
    if (mine !== undefined)
      return mine.text === req.text && mine.via === 'queue'
        ? { ok: true, ref: mine.ref }
        : { ok: false, reason: 'refused', detail: `instruction ${req.commandId} is already held with another text` };
    const inFlight = this.sending.get(req.commandId);
    if (inFlight !== undefined) return inFlight;
    const sent = this.gather(req.session, req).finally(() => this.sending.delete(req.commandId));
    this.sending.set(req.commandId, sent);
    return sent;
  }

  /** The queues one step hands over, as one prompt, their texts in order (gather.ts). */
  private readonly gather = gatherPerStep((reqs: LaneRequest[]) => this.sendPrompt(reqs));

  private async sendPrompt(reqs: LaneRequest[]): Promise<LaneOutcome> {
    const session = reqs[0]!.session;
    const down = await this.unreached(session);
    if (down !== undefined) return down;
    const text = reqs.map((q) => q.text).join('\n\n');
    const r = await this.call('POST', `/session/${enc(session)}/prompt`, { prompt: [{ type: 'text', text }] });
    if ('reason' in r) return r;
    const out = queueOutcome(r);
    if (!out.ok) return out;
    for (const req of reqs) this.hold(req, 'queue', out.ref!);
    // The prompt may have started before its answer came back: its start was the receipt.
    const s = this.sessions.get(session);
    if (s !== undefined && (s.turn === out.ref || s.ended.has(out.ref!)))
      this.receipt({ kind: 'delivered', session, at: this.now(), commandId: reqs[0]!.commandId, ref: out.ref! });
    return out;
  }

  /**
   * D43: a prompt of its own starts the turn (the daemon's prompt route). The daemon queues a
   * prompt that arrives while any turn runs, one the stream has not shown yet too: the daemon's
   * queue says whether it waits, and behind which turn.
   */
  async startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome> {
    // A start is asked only once the session's hooks said its turn ended (Stop): a turn the lane
    // still sees running now is that one, finishing on the daemon (observed: about 0.65 s on 0.24.4).
    const ending = this.sessions.get(req.session)?.turn;
    this.starting.set(req.commandId, ending);
    const o = await this.queue(req);
    const waits = o.ok ? await this.waits(req.session, o.ref!, ending) : 'no';
    if (!o.ok || waits === 'behind-other') this.starting.delete(req.commandId);
    // A turn begun meanwhile (the person's): the prompt waits behind it, whatever the sender's
    // delivery: the daemon has no way to fold a queued prompt into the running turn.
    return o.ok && waits === 'behind-other' ? { ...o, became: 'queue' } : o;
  }

  /** D43: where a start's prompt stands (`standing`), from the daemon's queue, else from what the stream showed. */
  private async waits(session: string, promptId: string, ending?: string): Promise<Standing> {
    const r = await this.call('GET', `/session/${enc(session)}/pending-prompts`);
    const stream = { queued: this.queued.has(promptId), before: this.before(session, promptId) };
    return standing('reason' in r ? undefined : r.body, promptId, ending, stream);
  }

  /**
   * Two withdraws of one instruction at once (an interrupt's and a user's) share one attempt: a
   * second removal would find nothing, and its wait for the stream's word would replace the
   * first's, which then waited out `REMOVED_WAIT_MS`.
   */
  withdraw({ session, commandId }: { session: string; commandId: string }): Promise<LaneWithdrawn> {
    const running = this.withdrawing.get(commandId);
    if (running !== undefined) return running;
    const attempt = this.withdrawOnce(session, commandId).finally(() => this.withdrawing.delete(commandId));
    this.withdrawing.set(commandId, attempt);
    return attempt;
  }

  private async withdrawOnce(session: string, commandId: string): Promise<{ removed: boolean } | { error: string }> {
    // A queued prompt whose answer is still awaited has no prompt id yet: the answer comes first.
    await this.sending.get(commandId);
    if (this.delivered.has(commandId)) return { removed: false };
    const h = this.held.get(commandId);
    if (h?.via === 'queue') return this.withdrawPrompt(session, commandId, h);
    const r = await this.call('DELETE', `/session/${enc(session)}/mid-turn-messages/${enc(h?.ref ?? commandId)}`);
    if ('reason' in r) return { error: r.detail };
    const out = removedOf(r);
    if ('removed' in out && out.removed) this.release(commandId);
    return out;
  }

  /**
   * A queued prompt is taken back only while it waits: removing one that started aborts its turn.
   * It may start between the look and the removal; the daemon then still answers `removed`, so
   * the stream decides: its `pending_prompt_completed {state: "removed"}` comes after the
   * prompt's start if it started (the receipt, so `already-delivered`), and alone if it did not.
   */
  private async withdrawPrompt(
    session: string,
    commandId: string,
    h: Held,
  ): Promise<{ removed: boolean } | { error: string }> {
    const others = (this.byRef.get(h.ref)?.length ?? 1) - 1;
    if (others > 0)
      return { error: `it went to qwen serve with ${others} more as one prompt, which cannot be taken back in part` };
    const list = await this.call('GET', `/session/${enc(session)}/pending-prompts`);
    if ('reason' in list) return { error: list.detail };
    if (!queuedIn(list.body, h.ref)) return { removed: false };
    const said = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, REMOVED_WAIT_MS);
      this.removing.set(h.ref, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    const r = await this.call('DELETE', `/session/${enc(session)}/pending-prompts/${enc(h.ref)}`);
    const out = 'reason' in r ? { error: r.detail } : removedOf(r);
    // Nothing removed: the stream will say nothing of it.
    if (!('removed' in out) || !out.removed) this.removing.get(h.ref)?.();
    await said;
    this.removing.delete(h.ref);
    if (this.delivered.has(commandId)) return { removed: false };
    if ('removed' in out && out.removed) this.release(commandId);
    return out;
  }

  /**
   * Cancels the running turn. A mid-turn message still waiting at a cancel is not dropped by the
   * daemon: it runs as a new prompt. So what the lane holds for the session is withdrawn first,
   * and the result names it (`withdrawn`); what could not be taken back was already read.
   */
  async interrupt(session: string): Promise<InterruptResult> {
    const down = await this.unreached(session);
    if (down !== undefined && !down.ok) return { ok: false, detail: down.detail };
    // The daemon answers 204 to a cancel with nothing running: that stopped nothing.
    if (this.sessions.get(session)?.turn === undefined)
      return { ok: false, detail: 'no turn runs in this qwen serve session; nothing to stop' };
    const withdrawn: string[] = [];
    for (const [commandId, h] of [...this.held]) {
      if (h.session !== session) continue;
      const w = await this.withdraw({ session, commandId });
      if ('removed' in w && w.removed) withdrawn.push(commandId);
    }
    const r = await this.call('POST', `/session/${enc(session)}/cancel`, {});
    if ('reason' in r) return { ok: false, detail: r.detail };
    if (r.status !== 204 && r.status !== 200)
      return { ok: false, detail: `qwen serve answered the cancel with HTTP ${r.status}` };
    return { ok: true, withdrawn };
  }

  async answer(
    session: string,
    approvalId: string,
    approved: boolean,
  ): Promise<{ ok: true } | { ok: false; detail: string }> {
    const options = this.sessions.get(session)?.options.get(approvalId);
    if (options === undefined) return { ok: false, detail: `no pending qwen serve permission request ${approvalId}` };
    const r = await this.call(
      'POST',
      `/session/${enc(session)}/permission/${enc(approvalId)}`,
      permissionAnswer(options, approved),
    );
    if ('reason' in r) return { ok: false, detail: r.detail };
    if (r.status !== 200)
      return { ok: false, detail: `qwen serve answered the permission with HTTP ${r.status} (already answered?)` };
    return { ok: true };
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    for (const s of this.sessions.values()) s.sub.unsubscribe();
    this.sessions.clear();
    await this.polling?.catch(() => {});
    this.subject.complete();
  }

  /** One HTTP call; a failure is the lane outcome it means (unreachable, or refused on a 401). */
  private async call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: unknown } | { ok: false; reason: 'unreachable' | 'refused'; detail: string }> {
    try {
      return await this.client.request(method, path, body);
    } catch (err) {
      const e = err instanceof SteeringError ? err : new SteeringError('SOURCE_UNREACHABLE', String(err));
      return { ok: false, reason: e.code === 'SOURCE_UNREACHABLE' ? 'unreachable' : 'refused', detail: e.message };
    }
  }

  /** Why the lane cannot reach the session now; undefined when it can (a new session is looked for once). */
  private async unreached(session: string): Promise<LaneOutcome | undefined> {
    if (!this.reaches(session)) await this.poll();
    if (this.reaches(session)) return undefined;
    const h = this.health;
    if (h.kind === 'refused') return { ok: false, reason: 'refused', detail: h.error.message };
    if (h.kind === 'down') return { ok: false, reason: 'unreachable', detail: h.error.message };
    return { ok: false, reason: 'unreachable', detail: `qwen serve at ${this.client.url} hosts no session ${session}` };
  }

  /** The turn that ran just before this prompt's, once it began. */
  private before(session: string, promptId: string): string | undefined {
    const s = this.sessions.get(session);
    return s?.turn === promptId ? [...s.ended].at(-1) : undefined;
  }

  private hold(req: LaneRequest, via: Held['via'], ref: string): void {
    this.held.set(req.commandId, { session: req.session, text: req.text, via, ref });
    this.byRef.set(ref, [...(this.byRef.get(ref) ?? []).filter((c) => c !== req.commandId), req.commandId]);
  }

  private release(commandId: string): void {
    const h = this.held.get(commandId);
    if (h === undefined) return;
    this.held.delete(commandId);
    const rest = (this.byRef.get(h.ref) ?? []).filter((c) => c !== commandId);
    if (rest.length === 0) this.byRef.delete(h.ref);
    else this.byRef.set(h.ref, rest);
  }

  private async tick(): Promise<void> {
    if (this.closed) return;
    await this.poll();
    if (this.closed) return;
    const up = this.health.kind === 'up';
    const wait = up ? (this.o.pollMs ?? 1000) : this.retry;
    this.retry = up ? (this.o.retryMs ?? 250) : Math.min(this.retry * 2, this.o.maxRetryMs ?? 10_000);
    this.timer = setTimeout(() => void this.tick(), wait);
  }

  /** Lists the daemon's live sessions once (concurrent callers share the one in flight). */
  private poll(): Promise<void> {
    this.polling ??= this.list().finally(() => {
      this.polling = undefined;
    });
    return this.polling;
  }

  private async list(): Promise<void> {
    try {
      const found = await liveSessions(this.client, this.health.kind === 'up' ? this.workspace : undefined);
      const live = found.live;
      this.workspace = found.workspace;
      if (this.closed) return;
      this.become({ kind: 'up' });
      for (const id of live) if (!this.sessions.has(id)) this.follow(id);
      for (const id of [...this.sessions.keys()]) if (!live.has(id)) this.detach(id, 'qwen serve no longer hosts it');
    } catch (err) {
      const e = err instanceof SteeringError ? err : new SteeringError('SOURCE_UNREACHABLE', String(err));
      if (this.closed) return;
      this.become({ kind: e.code === 'SOURCE_UNREACHABLE' ? 'down' : 'refused', error: e });
    }
  }

  /** A change of the daemon's state: said once, and `lost` once when a reachable daemon goes. */
  private become(next: Health): void {
    const prev = this.health;
    this.health = next;
    if (next.kind !== 'down' && next.kind !== 'refused') return;
    const same = (prev.kind === 'down' || prev.kind === 'refused') && prev.error.message === next.error.message;
    if (same) return;
    if (prev.kind !== 'up') {
      this.report(next.error);
      return;
    }
    // Said once, here, with what it means for the sessions; the `lost` fact carries the same words.
    const detail = `${next.error.message}; its sessions are hook-lane only until it answers again`;
    this.report(new SteeringError(next.error.code, detail));
    for (const s of this.sessions.values()) s.sub.unsubscribe();
    this.sessions.clear();
    this.subject.next({ kind: 'lost', at: this.now(), detail, said: true });
  }

  private follow(session: string): void {
    const s: Followed = {
      sub: undefined as unknown as Subscription,
      attached: false,
      ended: new Set(),
      options: new Map(),
    };
    this.sessions.set(session, s);
    s.sub = followSession(this.client, session, {
      onOpen: () => {
        if (s.attached) return;
        s.attached = true;
        this.subject.next({ kind: 'attached', session, at: this.now() });
        void this.syncTurn(session, s);
      },
    }).subscribe({
      next: (e) => this.observe(session, s, e),
      complete: () => this.detach(session, 'its event stream closed (session_died)'),
    });
  }

  /** A turn already running when the lane attached shows in no frame it replays: ask for it once. */
  private async syncTurn(session: string, s: Followed): Promise<void> {
    const r = await this.call('GET', `/session/${enc(session)}/turns/current`);
    const b = 'reason' in r ? undefined : (r.body as { state?: unknown; promptId?: unknown } | undefined);
    const id = b?.promptId;
    if (b?.state !== 'running' || typeof id !== 'string' || s.turn !== undefined || s.ended.has(id)) return;
    this.observe(session, s, { type: 'pending_prompt_started', promptId: id, data: { promptId: id } });
  }

  private detach(session: string, detail: string): void {
    const s = this.sessions.get(session);
    if (s === undefined) return;
    s.sub.unsubscribe();
    this.sessions.delete(session);
    if (s.attached) this.subject.next({ kind: 'detached', session, at: this.now(), detail });
  }

  /** The receipt of a prompt is each of its commands' own, in the order they were handed over. */
  private receipt(f: Extract<LaneFact, { kind: 'delivered' }>): void {
    const all = this.byRef.get(f.ref);
    for (const commandId of all?.includes(f.commandId) === true ? [...all] : [f.commandId])
      this.receiptOf({ ...f, commandId });
  }

  private receiptOf(f: Extract<LaneFact, { kind: 'delivered' }>): void {
    if (this.delivered.has(f.commandId)) return;
    // A prompt the daemon queued first (`pending_prompt_added`) began no turn, unless all it
    // waited for was the turn ending when it was sent (the one that ran just before it).
    const ending = this.starting.get(f.commandId);
    if (this.starting.delete(f.commandId)) {
      const after = ending !== undefined && this.before(f.session, f.ref) === ending;
      f = { ...f, started: !this.queued.has(f.ref) || after };
    }
    this.release(f.commandId);
    this.delivered.set(f.commandId, f.ref);
    if (this.delivered.size > DELIVERED_KEPT) this.delivered.delete(this.delivered.keys().next().value!);
    this.subject.next(f);
  }

  private observe(session: string, s: Followed, e: ServeEvent): void {
    if (e.type === 'permission_request' && typeof e.data?.requestId === 'string')
      s.options.set(e.data.requestId, optionsOf(e));
    const prompt = typeof e.data?.promptId === 'string' ? e.data.promptId : e.promptId;
    if (e.type === 'pending_prompt_added' && prompt !== undefined) {
      this.queued.add(prompt);
      if (this.queued.size > DELIVERED_KEPT) this.queued.delete(this.queued.values().next().value!);
    }
    if (e.type === 'pending_prompt_completed' && prompt !== undefined) {
      // One taken back before it started: its `turn_complete` that follows ends no turn.
      if (e.data?.state === 'removed' && prompt !== s.turn) s.ended.add(prompt);
      this.removing.get(prompt)?.();
    }
    const view: SessionView = {
      ...(s.turn === undefined ? {} : { turn: s.turn }),
      ended: s.ended,
      commandOf: (ref) => this.byRef.get(ref)?.[0],
      optionsOf: (id) => s.options.get(id),
    };
    for (const f of factsOf(session, e, view, this.now())) {
      if (f.kind === 'turn.started') s.turn = f.turnId;
      if (f.kind === 'turn.ended') {
        if (s.turn === f.turnId) delete s.turn;
        s.ended.add(f.turnId);
        if (s.ended.size > ENDED_KEPT) s.ended.delete(s.ended.values().next().value!);
      }
      if (f.kind === 'delivered') {
        this.receipt(f);
        continue;
      }
      if (f.kind === 'approval.resolved') s.options.delete(f.approvalId);
      this.subject.next(f);
    }
  }
}

export function qwenServeLane(o: QwenServeLaneOptions): QwenServeLane {
  return new QwenServeLane(o);
}
