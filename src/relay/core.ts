// The relay's state shared by its bindings: store, fan-out, live connections, and the
// one ingest path every binding feeds (AEP-0003 §3.2, §5; aep-wire §6 items 1–4, 9).
import type { AepEvent } from '../protocol/envelope.js';
import { CAPTURE_LEVELS, captureRank } from '../protocol/envelope.js';
import { isCommandType } from '../protocol/types.js';
import type { RelayRefusalCode } from '../protocol/errors.js';
import { ceilingFor, mayEmit, type AccessPolicy, type Principal } from './acl.js';
import { ClaimTable, DEFAULT_CLAIM_LEASE_MS } from './claims.js';
import type { Hub, Sink } from './hub.js';
import { classify, claimsSession, isOutcomeType, routeCommand, type Route } from './routing.js';
import type { Admission, Maybe, Replay } from './store.js';
import { isStoreUnavailable, storeUnavailable } from './store-fault.js';
import type { FaultAwareStore } from './store.js';
import { SessionSummaries } from './session-summary.js';
import { Unstored } from './unstored.js';
import { CrossedAnswers, SETTLE_MS } from './crossed.js';
import type { SubscriptionSpec } from './subscription.js';
import type { Peer, RosterEntry } from './types.js';

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

export interface Incoming {
  event: AepEvent;
  /** The event as served: the received text with line breaks removed. */
  line: string;
  /** `line` as the UTF-8 bytes received (a WebSocket frame without line breaks), forwarded as they are. */
  bytes?: Buffer;
}

/** Runs `f` on a value now, or when its promise settles: one code path for both kinds of store. */
export function then<T, R>(v: Maybe<T>, f: (t: T) => Maybe<R>): Maybe<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}

const NOW = { now: true } as const;

type ReplayJob = { session: string; r: Replay; marker: boolean };

const key = (e: Pick<AepEvent, 'source' | 'id'>): string => `${e.source}\u0000${e.id}`;

/** A refusal on the relay's side: an `error` frame on WebSocket, an HTTP error on ingest. */
export interface Refusal {
  code: RelayRefusalCode;
  detail: string;
  /** False when sending the same event again cannot change the answer (the token lacks the right). */
  retry?: false;
}

/** The outcome of one POSTed body: everything admitted, or the first refusal and nothing admitted. */
export type IngestResult =
  | { ok: true; accepted: number; stored: number; routed: string[] }
  | { ok: false; line: number; cause: string; refusal: Refusal; command: boolean };

export class RelayCore {
  readonly peers = new Set<Peer>();
  readonly counters = { ingested: 0, duplicates: 0, forwarded: 0, refused: 0 };
  readonly claims: ClaimTable<Peer>;
  private pending: Admission[] = [];
  /** Per pending admission, the connection that sent it: told `store-unavailable` if the write fails (D38). */
  private pendingFrom: (Peer | undefined)[] = [];
  /** D38: per connection, a session's first event refused for now; its later ones wait for it. */
  private readonly unstored = new Unstored<Peer>();
  private scheduled = false;
  private readonly summaries: SessionSummaries;
  /** A fabric store: what of other nodes' sessions went out here, answers early and in order (crossed.ts). */
  private readonly crossed = new CrossedAnswers();

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
    // A store that answers later (JetStream) gives no history here: such a node summarises
    // what it sees from its start on.
    this.summaries = new SessionSummaries((session) => {
      if (this.store.committed !== undefined) return this.store.committed(session);
      const r = this.store.replay(session);
      if (!(r instanceof Promise)) return r.items;
      r.catch(() => {});
      return [];
    });
    store.fabric?.attach({
      fanOut: (line, via) => {
        const e = JSON.parse(line) as AepEvent;
        // An answer arrives twice, early and stored (accept, below): one of the two goes out, in order.
        if (!this.crossed.goesOut(e, via)) return;
        this.summaries.observe(e);
        this.hub.fanOut(e, line);
      },
      peers: () => this.peers,
      claimLeaseMs,
    });
  }

  /** Every claimant a command may reach: this node's peers, then other nodes' (a fabric store). */
  claimants(): Iterable<Peer> {
    const remote = this.store.fabric?.remotePeers();
    return remote === undefined ? this.peers : [...this.peers, ...remote];
  }

  /**
   * D19, the one place that decides whether a party may publish a non-command event: it needs
   * emit rights for the event's agent and session; over WebSocket a sequenced event claims the
   * session for its connection (refused while another owns it); over HTTP, which never claims,
   * it may not speak for a session another identity owns; outcome events of the control loop
   * come only from the session's claimant. A refusal leaves no trace: no claim, no admission.
   */
  authorize(e: AepEvent, who: Principal, origin?: Peer): Refusal | undefined {
    const emit = mayEmit(who, e.agent, e.session);
    // Only a new tokens file changes this answer; a claim refusal below lapses with its lease.
    if (!emit.ok) return { code: 'unauthorized', detail: emit.detail, retry: false };
    const session = e.session;
    if (session === undefined) return undefined;
    if (origin !== undefined) {
      if (claimsSession(e) !== undefined) {
        // Another node's claim counts as this node's own would (a fabric store).
        const rival = origin.claims.has(session) ? undefined : this.store.fabric?.rival(session, who);
        if (rival !== undefined) return { code: 'unauthorized', detail: rival };
        const v = this.claims.claim(session, origin);
        if (!v.ok) return { code: 'unauthorized', detail: v.detail };
        if (v.fresh) this.store.fabric?.claim(origin, session);
      }
      if (isOutcomeType(e.type) && !this.claims.holds(session, origin)) {
        return {
          code: 'unauthorized',
          detail: `${e.type} for session ${session} is accepted only from the session's claimant`,
        };
      }
      return undefined;
    }
    const owner = this.claims.ownerOf(session) ?? this.store.fabric?.ownerOf(session);
    if (owner !== undefined && owner !== who.identity) {
      return { code: 'unauthorized', detail: `session ${session} is owned by another identity's claim` };
    }
    // A one-user relay (shared token, no token) may import history for a session nobody claims.
    if (isOutcomeType(e.type) && owner === undefined && who.bound) {
      return {
        code: 'unauthorized',
        detail: `${e.type} for session ${session} is accepted only from the session's claimant, and it has none`,
      };
    }
    return undefined;
  }

  /** One event from a WS connection: authorized (D19), then admitted and fanned out. */
  publish(incoming: Incoming, origin: Peer): Refusal | undefined {
    // The claim is taken even while the store is down, so commands find the session's claimant
    // once it is back; agent-scoped events are not stored and go out meanwhile.
    const e = incoming.event;
    const cls = classify(e);
    const stored = cls !== 'agent';
    const pos = () => ({ epoch: e.epoch ?? 0, seq: e.seq! });
    const held = cls === 'positioned' && this.unstored.any();
    const waits = held ? this.unstored.waits(origin, e.session!, pos()) : undefined;
    const refused =
      this.authorize(e, origin.principal, origin) ??
      (stored ? (this.unwritable() ?? (waits === undefined ? undefined : storeUnavailable(waits))) : undefined);
    if (refused) {
      this.counters.refused += 1;
      if (cls === 'positioned' && refused.code === 'store-unavailable') this.holdBack(origin, e.session!, pos());
      return refused;
    }
    // Taken in order: what follows it is written after it (a failed write refuses both again).
    if (held) this.unstored.taken(origin, e.session!, pos());
    this.accept([incoming], origin);
    return undefined;
  }

  /**
   * D17 routing over every claimant; D38: no claimant found while other nodes' claims cannot be
   * read (a JetStream election) is the store's outage, not `no-route`: the sender retries.
   */
  private route(sender: Principal, cmd: AepEvent): Route<Peer> {
    const route = routeCommand(sender, cmd, this.claimants());
    if (route.kind !== 'refuse' || route.code !== 'no-route') return route;
    const unheard = this.store.fabric?.unheard?.();
    return unheard === undefined ? route : { kind: 'refuse', ...storeUnavailable(unheard, "read other nodes' claims") };
  }

  /** D38: the store says it cannot write now, so nothing that needs it is taken (the sender retries). */
  private unwritable(): Refusal | undefined {
    const reason = this.store.unavailable?.();
    return reason === undefined ? undefined : storeUnavailable(reason);
  }

  /**
   * A POSTed body, decided whole before anything happens (reject-whole, aep-wire §8.6): every
   * event is authorized as over WebSocket, every command routed exactly as over WebSocket
   * (D17); the first refusal is the answer and nothing of the body is stored, fanned out or
   * forwarded. Otherwise events are admitted and each command goes to its one claimant.
   */
  ingest(batch: readonly Incoming[], who: Principal): Maybe<IngestResult> {
    const first = batch[0]!.event;
    const down = this.unwritable();
    if (down) return this.unwritten(first, down);
    const targets: (Peer | undefined)[] = [];
    for (const [line, item] of batch.entries()) {
      const e = item.event;
      if (isCommandType(e.type)) {
        const route = this.route(who, e);
        if (route.kind === 'refuse') {
          this.counters.refused += 1;
          return { ok: false, line, cause: e.id, command: true, refusal: { code: route.code, detail: route.detail } };
        }
        targets.push(route.target);
        continue;
      }
      const refused = this.authorize(e, who);
      if (refused) {
        this.counters.refused += 1;
        return { ok: false, line, cause: e.id, command: false, refusal: refused };
      }
      targets.push(undefined);
    }
    this.flushSoon();
    this.accept(batch);
    const routeAll = (stored: number): IngestResult => {
      const routed: string[] = [];
      for (const [i, item] of batch.entries()) {
        const target = targets[i];
        if (target === undefined) continue;
        target.sendText(item.line);
        this.counters.forwarded += 1;
        routed.push(item.event.id);
      }
      return { ok: true, accepted: batch.length, stored, routed };
    };
    // A write the store could not make now: the body is refused whole, nothing of it forwarded;
    // resending it is safe (dedupe). Any other failure stays the caller's (an internal error).
    const failed = (err: Error): IngestResult => {
      if (!this.unavailableWrite(err)) throw err;
      this.report(err);
      return this.unwritten(first, storeUnavailable(err.message));
    };
    let written: Maybe<number>;
    try {
      written = this.flush();
    } catch (err) {
      return failed(err as Error);
    }
    return written instanceof Promise ? written.then(routeAll, failed) : routeAll(written);
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
    this.unstored.leave(peer);
  }

  /**
   * Admits and fans out a batch already validated and authorized whole.
   * Admissions are written as one batch per `GROUP_WRITE_MS` (events arriving on sockets
   * meanwhile share it); every read of the store flushes first, so a replay never misses an
   * event that was already fanned out, and an HTTP ingest flushes its own batch at once.
   */
  accept(batch: readonly Incoming[], origin?: Peer): void {
    const fabric = this.store.fabric;
    for (const { event: e, line } of batch) {
      const cls = classify(e);
      if (cls === 'agent') {
        fabric?.share(line, e);
        continue;
      }
      // An answer to a command also crosses to the other nodes at once, beside its write: a
      // sender waiting on another node hears it as soon as one here, whose fan-out never waits
      // for the store either, unless it would overtake its session's events there (crossed.ts).
      if (fabric !== undefined && isOutcomeType(e.type)) fabric.share(line, e, true);
      const a: Admission = { session: e.session!, source: e.source, id: e.id, raw: line };
      if (cls === 'positioned') {
        a.epoch = e.epoch ?? 0;
        a.seq = e.seq!;
      }
      this.pending.push(a);
      this.pendingFrom.push(origin);
    }
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      const wait = this.store.groupWriteMs ?? 0;
      if (wait > 0) setTimeout(() => this.flushSoon(), wait);
      else setImmediate(() => this.flushSoon());
    }
    for (const { event: e, line, bytes } of batch) {
      this.summaries.observe(e);
      this.hub.fanOut(e, line, bytes);
    }
  }

  /**
   * Writes pending admissions; returns how many were new (not redeliveries). `now`: a caller
   * waits on this write (a command to forward, a read), so a store that batches its writes
   * takes it at once. A POST's body does not: it joins the next batch (its group write).
   * `session`: that session's pending admissions only (a command's), the rest left pending.
   */
  flush(now = false, session?: string): Maybe<number> {
    if (this.pending.length === 0) {
      this.scheduled = false;
      return 0;
    }
    const { list, from } = session === undefined ? this.takeAll() : this.takeSession(session);
    const counted = (results: boolean[]): number => {
      let fresh = 0;
      for (const f of results) {
        if (f) fresh += 1;
        this.counters[f ? 'ingested' : 'duplicates'] += 1;
      }
      return fresh;
    };
    const refuse = (err: Error): never => {
      if (this.unavailableWrite(err)) this.refuseUnwritten(list, from, err);
      throw err;
    };
    let written: Maybe<boolean[]>;
    try {
      written = this.store.admitAll(list, now ? NOW : undefined);
    } catch (err) {
      return refuse(err as Error);
    }
    return written instanceof Promise ? written.then(counted, refuse) : counted(written);
  }

  private takeAll(): { list: Admission[]; from: (Peer | undefined)[] } {
    const taken = { list: this.pending, from: this.pendingFrom };
    this.pending = [];
    this.pendingFrom = [];
    this.scheduled = false;
    return taken;
  }

  /**
   * A session's pending admissions, in arrival order, out of what is pending; the rest stays for
   * the group write, whose timer is still set. Replays are per session, so what other sessions
   * have pending need not be written first.
   */
  private takeSession(session: string): { list: Admission[]; from: (Peer | undefined)[] } {
    const list: Admission[] = [];
    const from: (Peer | undefined)[] = [];
    let kept = 0;
    for (let i = 0; i < this.pending.length; i += 1) {
      const a = this.pending[i]!;
      if (a.session === session) {
        list.push(a);
        from.push(this.pendingFrom[i]);
      } else {
        this.pending[kept] = a;
        this.pendingFrom[kept] = this.pendingFrom[i];
        kept += 1;
      }
    }
    this.pending.length = kept;
    this.pendingFrom.length = kept;
    if (kept === 0) this.scheduled = false;
    return { list, from };
  }

  private unavailableWrite(err: Error): boolean {
    return isStoreUnavailable(err) || this.store.unavailable?.() !== undefined;
  }

  /**
   * D38: a write the store did not confirm. Each sender still connected hears `store-unavailable`
   * for its events, so it sends them again (an adapter from its log, D23); what the store did
   * keep of the batch is deduped on the resend.
   */
  private refuseUnwritten(list: readonly Admission[], from: readonly (Peer | undefined)[], err: Error): void {
    const { code, detail } = storeUnavailable(err.message);
    for (const [i, a] of list.entries()) {
      const peer = from[i];
      if (peer === undefined) continue;
      if (a.seq !== undefined) this.holdBack(peer, a.session, { epoch: a.epoch ?? 0, seq: a.seq });
      this.counters.refused += 1;
      peer.sendText(JSON.stringify({ type: 'error', cause: a.id, code, detail }));
    }
  }

  /**
   * A positioned event refused for now holds back its session's later ones from `peer`, unless
   * the store holds its position or a later one already (a claim's redelivery of the last event,
   * a repeated ack): the sender's resend starts after that anyway, and would never fill the hold.
   */
  private holdBack(peer: Peer, session: string, pos: { epoch: number; seq: number }): void {
    if (this.store.holdsFrom?.(session, pos) !== true) this.unstored.refused(peer, session, pos);
  }

  /** Runs `f` once what is pending is written; a failed write is reported and `f` does not run. */
  private afterFlush(f: () => void, now = false, session?: string): void {
    try {
      const done = then(this.flush(now, session), f);
      if (done instanceof Promise) done.catch((err: Error) => this.report(err));
    } catch (err) {
      this.report(err as Error);
    }
  }

  /** A read waits for what is pending; a failed write was told to its senders and is no reason to refuse the read. */
  private flushForRead(): Maybe<number> {
    const failed = (err: Error): number => {
      this.report(err);
      return 0;
    };
    try {
      const f = this.flush(true);
      return f instanceof Promise ? f.catch(failed) : f;
    } catch (err) {
      return failed(err as Error);
    }
  }

  /** Flushes without a caller to tell: a failed write is reported. */
  flushSoon(): void {
    this.afterFlush(() => {});
  }

  /**
   * A command from a WS sender (D17): routed to its one claimant and forwarded as the raw frame,
   * then kept in the session history and fanned out; a refusal goes only to the sender.
   */
  command(cmd: Incoming, frame: string, sender: Principal, origin?: Peer): { refused?: Refusal } {
    // D38: with the store down, other nodes' claims cannot be known; never `no-route` for that.
    const down = this.unwritable();
    const route = down === undefined ? this.route(sender, cmd.event) : undefined;
    if (route === undefined || route.kind === 'refuse') {
      this.counters.refused += 1;
      return { refused: route === undefined ? down : { code: route.code, detail: route.detail } };
    }
    this.counters.forwarded += 1;
    // D22-D24: forwarded only once it is in history, so an answer means it was kept. Not
    // written: not forwarded, and `origin` is told `store-unavailable`. Written at once (not
    // after the group write's wait), with its own session's pending events ahead of it; other
    // sessions' stay for the group write, so a busy stream elsewhere adds nothing to its commit.
    // A target on another node that left before the frame got there is refused `no-route` back to `origin`.
    this.accept([cmd], origin);
    const fabric = this.store.fabric;
    this.afterFlush(
      () =>
        fabric !== undefined && !this.peers.has(route.target)
          ? fabric.forward(route.target, frame, origin)
          : route.target.sendText(frame),
      true,
      cmd.event.session,
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
    const read = () => then(this.crossed.settled(SETTLE_MS), () => this.replays(spec, opts));
    return then(this.flushForRead(), () => then(read(), (jobs) => then(all(jobs), finish)));
  }

  private replays(spec: SubscriptionSpec, opts: { alsoSession?: string }): Maybe<Maybe<ReplayJob>[]> {
    const one = (session: string, marker: boolean, after?: { epoch: number; seq: number }): Maybe<ReplayJob> =>
      then(this.store.replay(session, after), (r) => ({ session, r, marker }));
    const from = spec.from;
    const extra = () => {
      // `live=0` with a session filter and no position for it replays that whole session (aep timeline).
      const s = opts.alsoSession;
      return s !== undefined && (from === undefined || (from !== 'all' && !from.some((p) => p.session === s)))
        ? [one(s, false)]
        : [];
    };
    if (from === 'all') return then(this.store.sessionIds(), (ids) => [...ids.map((s) => one(s, false)), ...extra()]);
    const jobs = from === undefined ? [] : from.map((entry) => one(entry.session, true, entry.after));
    return [...jobs, ...extra()];
  }

  /**
   * One entry per live (connection, claimed session) pair, never merged (AEP-0003 §4.1). With
   * `offline`, also one entry per session the relay holds history of and no one claims (D37).
   * `title` is redacted-class: only a viewer whose ceiling allows `redacted` gets it.
   */
  roster(opts: { viewer?: Principal; offline?: boolean; now?: number } = {}): Maybe<RosterEntry[]> {
    this.flushSoon();
    const now = opts.now ?? Date.now();
    const titles =
      opts.viewer === undefined || captureRank(ceilingFor(opts.viewer, undefined) ?? 'full') >= captureRank('redacted');
    const entries: RosterEntry[] = [];
    const claimed = new Set<string>();
    for (const p of this.claimants()) {
      if (p.role === 'consumer') continue;
      for (const session of p.claims) {
        claimed.add(session);
        const e: RosterEntry = { session };
        if (p.identity.agent !== undefined) e.agent = p.identity.agent;
        if (p.identity.instance !== undefined) e.instance = p.identity.instance;
        if (p.control !== undefined) e.control = p.control;
        if (p.emits !== undefined) e.emits = p.emits;
        entries.push(this.summarised(e, now, titles));
      }
    }
    if (opts.offline !== true) return entries;
    return then(this.store.sessionIds(), (ids) => {
      for (const session of ids) {
        if (claimed.has(session)) continue;
        const agent = this.summaries.about(session).agent;
        entries.push(
          this.summarised({ session, ...(agent === undefined ? {} : { agent }), offline: true }, now, titles),
        );
      }
      return entries;
    });
  }

  /** An entry with what the session's events say about it (D26, D37). */
  private summarised(e: RosterEntry, now: number, titles: boolean): RosterEntry {
    const summary = this.summaries.get(e.session);
    const about = this.summaries.about(e.session);
    e.state = summary.state;
    if (summary.lastEventAt !== undefined) e.last_event_at = summary.lastEventAt;
    e.queued = summary.queued;
    if (about.cwd !== undefined) e.cwd = about.cwd;
    if (titles && about.title !== undefined) e.title = about.title;
    if (about.lanes !== undefined) e.lanes = about.lanes;
    if (about.staleAfterMs !== undefined) {
      e.stale_after_ms = about.staleAfterMs;
      const last = summary.lastEventAt === undefined ? Number.NaN : Date.parse(summary.lastEventAt);
      if (summary.state === 'live' && now - last > about.staleAfterMs) e.stale = true;
    }
    return e;
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
    };
  }
}

/** All values, now when every one is ready, else as one promise (order kept). */
function all<T>(list: Maybe<T>[]): Maybe<T[]> {
  return list.some((v) => v instanceof Promise) ? Promise.all(list) : (list as T[]);
}

/**
 * Line breaks only ever sit between JSON tokens, so dropping them keeps the event and lets SSE carry it on one `data:`
 * line.
 */
export const oneLine = (text: string): string =>
  text.indexOf('\n') < 0 && text.indexOf('\r') < 0 ? text : text.replace(/[\r\n]+/g, '');
