// D45: the qwen serve lane of an adapter that spawns. A `qwen serve` daemon hosts sessions of one
// folder only (`workspace_mismatch` otherwise), so each worker runs a daemon of its own in its
// folder; this lane follows all of them under the one name `serve`, beside the daemon the person
// attached with `--serve URL` (if any). A call goes to the daemon that hosts its session; a
// worker's daemon that goes away detaches its own sessions only, never the others'.
import { concat, defer, EMPTY, from, merge, mergeMap, type Observable, Subject } from 'rxjs';
import type { LaneDone, LaneFact, LaneOutcome, LaneRequest, LaneWithdrawn, SteeringLane } from '../../streams/lane.js';

/** Makes the lane of one daemon (`qwenServeLane`), by its URL and token file. */
export type DaemonLane = (url: string, tokenFile?: string) => SteeringLane;

export class QwenServeLanes implements SteeringLane {
  readonly name = 'serve';
  readonly facts$: Observable<LaneFact>;
  /** Where the lane's fixed traits come from: the person's daemon's lane, or one never started. */
  private readonly model: SteeringLane;
  private readonly workers = new Set<SteeringLane>();
  private readonly added = new Subject<SteeringLane>();
  /** The sessions each worker's lane reaches, so its loss detaches those and no other. */
  private readonly reached = new Map<SteeringLane, Set<string>>();

  constructor(
    private readonly primary: SteeringLane | undefined,
    private readonly make: DaemonLane,
  ) {
    this.model = primary ?? make('http://127.0.0.1:1');
    const workers$ = defer(() => concat(from([...this.workers]), this.added)).pipe(
      mergeMap((l) => this.workerFacts(l)),
    );
    this.facts$ = merge(primary?.facts$ ?? EMPTY, workers$);
  }

  get deliveries(): readonly string[] {
    return this.model.deliveries;
  }
  get keepsUnread(): boolean | undefined {
    return this.model.keepsUnread;
  }
  get handsQueue(): SteeringLane['handsQueue'] {
    return this.model.handsQueue;
  }
  get how(): string {
    return this.model.how;
  }

  /** Follows a worker's daemon; the answer stops following it (before the daemon is stopped). */
  follow(url: string, tokenFile: string): () => Promise<void> {
    const lane = this.make(url, tokenFile);
    this.workers.add(lane);
    this.reached.set(lane, new Set());
    this.added.next(lane);
    let left: Promise<void> | undefined;
    return () =>
      (left ??= (async () => {
        this.workers.delete(lane);
        await lane.close();
        this.reached.delete(lane);
      })());
  }

  /** A worker lane's facts: its loss is a detach of its own sessions (the session ends with its worker). */
  private workerFacts(lane: SteeringLane): Observable<LaneFact> {
    const mine = (): Set<string> => this.reached.get(lane) ?? new Set();
    return lane.facts$.pipe(
      mergeMap((f): LaneFact[] => {
        if (f.kind === 'attached') mine().add(f.session);
        if (f.kind === 'detached') mine().delete(f.session);
        if (f.kind !== 'lost') return [f];
        const gone = [...mine()];
        mine().clear();
        return gone.map((session) => ({ kind: 'detached', session, at: f.at, detail: f.detail }));
      }),
    );
  }

  /** The lane of the daemon that hosts the session: the worker's that reached it, else the person's. */
  private laneOf(session: string): SteeringLane | undefined {
    for (const l of this.workers) if (this.reached.get(l)?.has(session) === true || l.reaches(session)) return l;
    return this.primary;
  }

  private none(session: string): { ok: false; reason: 'unreachable'; detail: string } {
    return { ok: false, reason: 'unreachable', detail: `no qwen serve daemon the adapter follows hosts ${session}` };
  }

  async open(): Promise<Record<string, unknown>> {
    return (await this.primary?.open?.()) ?? {};
  }

  reaches(session: string): boolean {
    return this.laneOf(session)?.reaches(session) === true;
  }

  steer(req: LaneRequest): Promise<LaneOutcome> {
    return this.laneOf(req.session)?.steer(req) ?? Promise.resolve(this.none(req.session));
  }

  queue(req: LaneRequest): Promise<LaneOutcome> {
    return this.laneOf(req.session)?.queue?.(req) ?? Promise.resolve(this.none(req.session));
  }

  startTurn(req: LaneRequest & { otherwise: 'steer' | 'queue' }): Promise<LaneOutcome> {
    return this.laneOf(req.session)?.startTurn?.(req) ?? Promise.resolve(this.none(req.session));
  }

  withdraw(req: Omit<LaneRequest, 'text'> & { text?: string }): Promise<LaneWithdrawn> {
    return this.laneOf(req.session)?.withdraw?.(req) ?? Promise.resolve({ error: this.none(req.session).detail });
  }

  interrupt(session: string, opts?: { killTools?: boolean }): Promise<LaneDone> {
    return this.laneOf(session)?.interrupt?.(session, opts) ?? Promise.resolve(this.none(session));
  }

  answer(session: string, approvalId: string, approved: boolean, reason?: string): Promise<LaneDone> {
    return this.laneOf(session)?.answer?.(session, approvalId, approved, reason) ?? Promise.resolve(this.none(session));
  }

  async close(): Promise<void> {
    this.added.complete();
    await Promise.all([...this.workers].map((l) => l.close()));
    this.workers.clear();
    await this.primary?.close();
    if (this.model !== this.primary) await this.model.close();
  }
}
