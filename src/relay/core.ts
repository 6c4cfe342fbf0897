// The relay's one core, shared by its bindings (HTTP, SSE, WebSocket) and by every store (SQLite,
// memory, JetStream): the live connections, the one ingest path every binding feeds, commands,
// subscriptions and the roster (AEP-0003 §3.2, §5; aep-wire §6 items 1–4, 9). Each job it joins
// has one owner beside it: admission control (admission.ts), routing (routing.ts), the store
// writes (group-write.ts), fan-out (fan-out.ts, with the early answers of crossed.ts) and the
// roster (roster.ts).
import type { AepEvent } from '../protocol/envelope.js';
import { CAPTURE_LEVELS } from '../protocol/envelope.js';
import { isCommandType } from '../protocol/types.js';
import { ceilingFor, type AccessPolicy, type Principal } from './acl.js';
import { AdmissionControl } from './admission.js';
import { ClaimTable, DEFAULT_CLAIM_LEASE_MS } from './claims.js';
import { HeldAnswers } from './crossed.js';
import { FanOut } from './fan-out.js';
import { EARLY, GroupWrite } from './group-write.js';
import type { Hub, Sink } from './hub.js';
import { all, andThen } from './maybe.js';
import { roster, type RosterOptions } from './roster.js';
import { claimantsAcross, classify, forwardCommand, routeAcross, type Route } from './routing.js';
import type { FaultAwareStore, Maybe, Replay } from './session-store.js';
import { storeUnavailable } from './store-fault.js';
import { SessionSummaries } from './session-summary.js';
import { withSpawnParent } from './spawn-parent.js';
import { mayEndSession } from './session-end.js';
import type { SubscriptionSpec } from './subscription.js';
import type { Incoming, Peer, Refusal, RosterEntry } from './types.js';

export type { Incoming, Refusal } from './types.js';

export const SUPPORTED_VERSIONS = ['0.1'] as const;

export interface RelayLimits {
  /** Ingest body cap in bytes (`AEP_MAX_BODY`); over it, 413. */
  maxBody: number;
  /** Events per NDJSON POST (`AEP_MAX_BATCH`); over it, 413 and nothing ingested. */
  maxBatch: number;
  /** Resume positions per subscription (the reference relay's `AEP_MAX_FROM`; here the session cap). */
  maxFrom: number;
  /** Concurrent subscriptions per WS connection. */
  maxSubscriptions: number;
}

type ReplayJob = { session: string; r: Replay; marker: boolean };

const key = (e: Pick<AepEvent, 'source' | 'id'>): string => `${e.source}\u0000${e.id}`;

/** The outcome of one POSTed body: everything admitted, or the first refusal and nothing admitted. */
export type IngestResult =
  | { ok: true; accepted: number; stored: number; routed: string[] }
  | { ok: false; line: number; cause: string; refusal: Refusal; command: boolean };

export class RelayCore {
  readonly peers = new Set<Peer>();
  readonly counters = { ingested: 0, duplicates: 0, forwarded: 0, refused: 0 };
  readonly claims: ClaimTable<Peer>;
  private readonly admission: AdmissionControl;
  private readonly writes: GroupWrite;
  private readonly fanOut: FanOut;
  private readonly summaries: SessionSummaries;
  /** D41 across nodes: answers to commands other nodes handed here before writing them (crossed.ts). */
  private readonly heldAnswers = new HeldAnswers<Peer>((batch, origin) => this.accept(batch, origin));
  /** D47: how a reader checks the store's chains (discovery's `audit`), when the relay signs them. */
  audit: Record<string, unknown> | undefined;

  constructor(
    readonly store: FaultAwareStore,
    readonly hub: Hub,
    /** Replaced when the tokens file is read again (D39). */
    public policy: AccessPolicy,
    readonly limits: RelayLimits,
    /** A failed deferred write is reported, never thrown into the event loop. */
    private readonly report: (err: Error) => void = () => {},
    claimLeaseMs: number = DEFAULT_CLAIM_LEASE_MS,
  ) {
    this.claims = new ClaimTable<Peer>(claimLeaseMs);
    this.admission = new AdmissionControl(store, this.claims);
    this.writes = new GroupWrite(store, this.counters, report, (peer, session, pos) =>
      this.admission.holdBack(peer, session, pos),
    );
    // A store that answers later (JetStream) gives no history here: such a node summarises
    // what it sees from its start on.
    this.summaries = new SessionSummaries((session) => {
      if (this.store.committed !== undefined) return this.store.committed(session);
      const r = this.store.replay(session);
      if (!(r instanceof Promise)) return r.items;
      r.catch(() => {});
      return [];
    });
    this.fanOut = new FanOut(hub, this.summaries, store.fabric);
    store.fabric?.attach({
      fanOut: (line, via) => this.fanOut.remote(line, via),
      peers: () => this.peers,
      claimLeaseMs,
      held: (id, pending) => (pending ? this.heldAnswers.wait(id) : this.heldAnswers.go(id)),
    });
  }

  /** Every claimant a command may reach: this node's peers, then other nodes' (a fabric store). */
  claimants(): Iterable<Peer> {
    return claimantsAcross(this.peers, this.store.fabric?.remotePeers());
  }

  /** D19: whether `who` may publish `e` (over WebSocket, from `origin`); see admission.ts. */
  authorize(e: AepEvent, who: Principal, origin?: Peer): Refusal | undefined {
    return this.admission.authorize(e, who, origin);
  }

  /** One event from a WS connection: admitted (D19, D38), then fanned out and written. */
  publish(incoming: Incoming, origin: Peer): Refusal | undefined {
    const refused = this.admission.admit(incoming.event, origin);
    if (refused) {
      this.counters.refused += 1;
      return refused;
    }
    const now = this.heldAnswers.now([incoming], origin);
    if (now.length > 0) this.accept(now, origin);
    return undefined;
  }

  private route(sender: Principal, cmd: AepEvent): Route<Peer> {
    return routeAcross(sender, cmd, this.claimants(), this.store.fabric);
  }

  /** D45: a spawn carries the parent session the relay verified of its sender (spawn-parent.ts). */
  private stamp(sender: Principal, item: Incoming, origin?: Peer): Incoming | Refusal {
    const ends = mayEndSession(sender, item.event, (s) => this.summaries.about(s).spawnedBy?.identity);
    if (ends !== undefined) return ends;
    return withSpawnParent(sender, item, { own: origin?.claims, ownerOf: (s) => this.claims.ownerOf(s) });
  }

  /**
   * A POSTed body, decided whole before anything happens (reject-whole, aep-wire §8.6): every
   * event is authorized as over WebSocket, every command routed exactly as over WebSocket
   * (D17); the first refusal is the answer and nothing of the body is stored, fanned out or
   * forwarded. Otherwise events are admitted and each command goes to its one claimant.
   */
  ingest(body: readonly Incoming[], who: Principal): Maybe<IngestResult> {
    const first = body[0]!.event;
    const down = this.admission.unwritable();
    if (down) return this.unwritten(first, down);
    const targets: (Peer | undefined)[] = [];
    // As kept and forwarded: a spawn with the parent the relay named (D45).
    const batch: Incoming[] = [];
    for (const [line, item] of body.entries()) {
      const e = item.event;
      if (isCommandType(e.type)) {
        const route = this.route(who, e);
        const stamped: Incoming | Refusal =
          route.kind === 'forward' ? this.stamp(who, item) : { code: route.code, detail: route.detail };
        if ('code' in stamped) {
          this.counters.refused += 1;
          return { ok: false, line, cause: e.id, command: true, refusal: stamped };
        }
        batch.push(stamped);
        targets.push(route.kind === 'forward' ? route.target : undefined);
        continue;
      }
      const refused = this.authorize(e, who);
      if (refused) {
        this.counters.refused += 1;
        return { ok: false, line, cause: e.id, command: false, refusal: refused };
      }
      batch.push(item);
      targets.push(undefined);
    }
    this.flushSoon();
    this.accept(batch);
    // D41: on a local store the commands go to their targets now, written meanwhile; their
    // answers wait in the fan-out until the write ends. Across nodes they follow the write.
    const early = this.store.fabric === undefined ? this.forwardEarly(batch, targets) : [];
    const release = (): void => {
      for (const id of early) this.fanOut.written(id);
    };
    const routeAll = (stored: number): IngestResult => {
      const routed: string[] = [...early];
      for (const [i, item] of batch.entries()) {
        const target = targets[i];
        if (target === undefined || early.includes(item.event.id)) continue;
        target.sendText(item.line);
        this.counters.forwarded += 1;
        routed.push(item.event.id);
      }
      release();
      return { ok: true, accepted: batch.length, stored, routed };
    };
    // A write the store could not make now: the body is refused whole; resending it is safe
    // (dedupe). Nothing of it was forwarded, unless a command went early (D41): then whether it
    // took effect is unknown, and the refusal says so. Any other failure of a body that forwarded
    // nothing stays the caller's (an internal error).
    const failed = (err: Error): IngestResult => {
      if (!this.writes.unavailableWrite(err) && early.length === 0) throw err;
      this.report(err);
      // The answers go out after the refusal is on its way to the POST's sender.
      setImmediate(release);
      const refusal: Refusal = storeUnavailable(err.message);
      if (early.length > 0) Object.assign(refusal, { outcome: 'unknown', detail: `${refusal.detail}: ${EARLY}` });
      return this.unwritten(first, refusal);
    };
    let written: Maybe<number>;
    try {
      written = this.flush();
    } catch (err) {
      return failed(err as Error);
    }
    return written instanceof Promise ? written.then(routeAll, failed) : routeAll(written);
  }

  /** D41: hands a POSTed body's routed commands to their (local) targets before the write; their ids. */
  private forwardEarly(batch: readonly Incoming[], targets: readonly (Peer | undefined)[]): string[] {
    const ids: string[] = [];
    for (const [i, item] of batch.entries()) {
      const target = targets[i];
      if (target === undefined) continue;
      target.sendText(item.line);
      this.counters.forwarded += 1;
      this.fanOut.forwardedUnwritten(item.event.id);
      ids.push(item.event.id);
    }
    return ids;
  }

  private unwritten(first: AepEvent, refusal: Refusal): IngestResult {
    this.counters.refused += 1;
    return { ok: false, line: 0, cause: first.id, command: isCommandType(first.type), refusal };
  }

  /** The connection closed: its claims lapse (at once for its identity, after the lease for others). */
  leave(peer: Peer): void {
    this.peers.delete(peer);
    this.claims.release(peer);
    this.store.fabric?.release(peer);
    this.admission.leave(peer);
  }

  /**
   * Takes a batch already validated and authorized whole: what other nodes should hear at once
   * crosses to them, what is stored joins the group write, and all of it goes to this node's
   * subscribers without waiting for the store.
   */
  accept(batch: readonly Incoming[], origin?: Peer): void {
    for (const { event: e, line } of batch) {
      const cls = classify(e);
      this.fanOut.cross(line, e, cls);
      if (cls !== 'agent') this.writes.add(e, cls, line, origin);
    }
    this.writes.schedule();
    this.fanOut.local(batch);
  }

  /** Writes what is pending (see group-write.ts); returns how many were new. */
  flush(now = false, session?: string): Maybe<number> {
    return this.writes.flush(now, session);
  }

  /** Flushes without a caller to tell: a failed write is reported. */
  flushSoon(): void {
    this.writes.flushSoon();
  }

  /**
   * A command from a WS sender (D17): routed to its one claimant and forwarded as the raw frame,
   * then kept in the session history and fanned out; a refusal goes only to the sender.
   */
  command(cmd: Incoming, frame: string, sender: Principal, origin?: Peer): { refused?: Refusal } {
    // D38: with the store down, other nodes' claims cannot be known; never `no-route` for that.
    const down = this.admission.unwritable();
    const route = down === undefined ? this.route(sender, cmd.event) : undefined;
    if (route === undefined || route.kind === 'refuse') {
      this.counters.refused += 1;
      return { refused: route === undefined ? down : { code: route.code, detail: route.detail } };
    }
    const stamped = this.stamp(sender, cmd, origin);
    if ('code' in stamped) {
      this.counters.refused += 1;
      return { refused: stamped };
    }
    const sent = stamped === cmd ? frame : stamped.line;
    this.counters.forwarded += 1;
    this.accept([stamped], origin);
    // D41: handed to its target at once, written meanwhile (with its own session's pending
    // events ahead of it, the rest left for the group write); the target's answer waits for
    // the write, and a write that fails after the forward is told to the sender as `unknown`.
    // Across nodes the target's node gets a copy now and the stream copy once the write is
    // confirmed, and holds the answer until then (nats/early.ts).
    const fabric = this.store.fabric;
    let early: { written(): void; ended(): void } | undefined;
    if (fabric?.forwardEarly !== undefined) early = fabric.forwardEarly(route.target, sent, origin);
    else forwardCommand(route.target, sent, origin, this.peers, fabric);
    const id = cmd.event.id;
    this.writes.forwarded(id);
    this.fanOut.forwardedUnwritten(id);
    this.writes.afterFlush(
      () => early?.written(),
      true,
      cmd.event.session,
      () => {
        early?.ended();
        this.writes.settled(id);
        this.fanOut.written(id);
      },
    );
    return {};
  }

  /**
   * Replays what `spec.from` asks for, then delivers live (AEP-0003 §5). The sink's ceiling is
   * first lowered to what its party may see (D20), on both paths. A live sink is registered
   * before the history is read and holds what arrives meanwhile; after the replay it gets what
   * the replay did not already carry, so a store that answers later loses nothing.
   */
  subscribe(
    sink: Sink,
    spec: SubscriptionSpec,
    opts: { live: boolean; alsoSession?: string; viewer: Principal },
  ): Maybe<void> {
    const ceiling = ceilingFor(opts.viewer, spec.ceiling);
    if (ceiling !== undefined) spec.ceiling = ceiling;
    const held: [string, AepEvent][] = [];
    const write = sink.write;
    if (opts.live) {
      sink.write = (text, e) => void held.push([text, e]);
      this.hub.add(sink);
    }
    const finish = (jobs: ReplayJob[]): void => {
      sink.write = write;
      const seen = new Set<string>();
      for (const j of jobs) {
        this.hub.replay(sink, j.session, j.r, j.marker);
        if (held.length > 0) for (const raw of j.r.items) seen.add(key(JSON.parse(raw) as AepEvent));
      }
      for (const [text, e] of held) if (!seen.has(key(e))) sink.write(text, e);
    };
    // Answers sent here ahead of their stored copies (crossed.ts) are in what this read gives.
    const read = () => andThen(this.fanOut.settled(), () => this.replays(spec, opts));
    return andThen(this.writes.flushForRead(), () => andThen(read(), (jobs) => andThen(all(jobs), finish)));
  }

  private replays(spec: SubscriptionSpec, opts: { alsoSession?: string }): Maybe<Maybe<ReplayJob>[]> {
    const one = (session: string, marker: boolean, after?: { epoch: number; seq: number }): Maybe<ReplayJob> =>
      andThen(this.store.replay(session, after), (r) => ({ session, r, marker }));
    const from = spec.from;
    const extra = () => {
      // `live=0` with a session filter and no position for it replays that whole session (aep timeline).
      const s = opts.alsoSession;
      return s !== undefined && (from === undefined || (from !== 'all' && !from.some((p) => p.session === s)))
        ? [one(s, false)]
        : [];
    };
    if (from === 'all')
      return andThen(this.store.sessionIds(), (ids) => [...ids.map((s) => one(s, false)), ...extra()]);
    const jobs = from === undefined ? [] : from.map((entry) => one(entry.session, true, entry.after));
    return [...jobs, ...extra()];
  }

  /** The roster as `viewer` may see it (roster.ts); with `offline`, sessions nobody claims too (D37). */
  roster(opts: RosterOptions = {}): Maybe<RosterEntry[]> {
    this.flushSoon();
    return roster(this.claimants(), this.summaries, () => this.store.sessionIds(), opts);
  }

  /** The capabilities block of discovery and of the relay's `hello` (AEP-0003 §3.4, §4). */
  capabilities(): Record<string, unknown> {
    return {
      filters: ['attr-match'],
      replay: { buffer: this.store.bufferCap, all: true },
      capture: [...CAPTURE_LEVELS],
      // The relay itself executes no command; the block says it routes them (AEP-0004 §4).
      control: { accepts: [] },
      roster: {},
      // D19: how long a closed claimant's claim keeps other identities out of its sessions.
      claims: { lease_ms: this.claims.leaseMs },
    };
  }

  discovery(): Record<string, unknown> {
    return {
      aep: [...SUPPORTED_VERSIONS],
      role: 'relay',
      endpoints: { events: '/events', stream: '/stream', socket: '/socket' },
      capabilities: this.capabilities(),
      ...(this.audit !== undefined ? { audit: this.audit } : {}),
    };
  }
}

/**
 * Line breaks only ever sit between JSON tokens, so dropping them keeps the event and lets SSE carry it on one `data:`
 * line.
 */
export const oneLine = (text: string): string =>
  text.indexOf('\n') < 0 && text.indexOf('\r') < 0 ? text : text.replace(/[\r\n]+/g, '');
