// The relay's state shared by its bindings: store, fan-out, live connections, and the
// one ingest path every binding feeds (AEP-0003 §3.2, §5; aep-wire §6 items 1–4, 9).
import type { AepEvent } from '../protocol/envelope.js';
import { CAPTURE_LEVELS } from '../protocol/envelope.js';
import type { RelayRefusalCode } from '../protocol/errors.js';
import type { AccessPolicy, Principal } from './acl.js';
import type { Hub, Sink } from './hub.js';
import { classify, claimsSession, routeCommand, type Claimant } from './routing.js';
import type { Admission, Maybe, Replay, SessionStore } from './store.js';
import type { SubscriptionSpec } from './subscription.js';

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

/** A live duplex connection as routing and the roster see it. */
export interface Peer extends Claimant {
  claims: Set<string>;
  identity: { agent?: string; instance?: string };
  /** `hello.capabilities.control`, verbatim for the roster (AEP-0003 §4.1). */
  control: unknown;
  emits: unknown;
  /** Sends text as one frame, unchanged (byte-identical forwarding, AEP-0004 §4). */
  sendText(text: string): void;
}

export interface RosterEntry {
  session: string;
  agent?: string;
  instance?: string;
  control?: unknown;
  emits?: unknown;
}

export interface Incoming {
  event: AepEvent;
  /** The event as served: the received text with line breaks removed. */
  line: string;
}

/** Runs `f` on a value now, or when its promise settles: one code path for both kinds of store. */
export function then<T, R>(v: Maybe<T>, f: (t: T) => Maybe<R>): Maybe<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}

type ReplayJob = { session: string; r: Replay; marker: boolean };

const key = (e: Pick<AepEvent, 'source' | 'id'>): string => `${e.source}\u0000${e.id}`;

export class RelayCore {
  readonly peers = new Set<Peer>();
  readonly counters = { ingested: 0, duplicates: 0, forwarded: 0, refused: 0 };
  private pending: Admission[] = [];
  private scheduled = false;

  constructor(
    readonly store: SessionStore,
    readonly hub: Hub,
    readonly policy: AccessPolicy,
    readonly limits: RelayLimits,
    /** A failed deferred write is reported, never thrown into the event loop. */
    private readonly report: (err: Error) => void = () => {},
  ) {
    store.fabric?.attach({
      fanOut: (line) => this.hub.fanOut(JSON.parse(line) as AepEvent, line),
      peers: () => this.peers,
    });
  }

  /** Every claimant a command may reach: this node's peers, then other nodes' (a fabric store). */
  claimants(): Iterable<Peer> {
    const remote = this.store.fabric?.remotePeers();
    return remote === undefined ? this.peers : [...this.peers, ...remote];
  }

  /** A connection went away: it leaves routing and its claims lapse. */
  leave(peer: Peer): void {
    this.peers.delete(peer);
    this.store.fabric?.release(peer);
  }

  /**
   * Admits and fans out a batch already validated whole; `origin` is the WS peer that sent it.
   * Admissions are written in one transaction per turn of the event loop (events arriving on
   * sockets in the same turn share it); every read of the store flushes first, so a replay
   * never misses an event that was already fanned out.
   */
  accept(batch: readonly Incoming[], origin?: Peer): void {
    for (const { event: e, line } of batch) {
      const cls = classify(e);
      if (cls === 'agent') {
        this.store.fabric?.share(line, e);
        continue;
      }
      const a: Admission = { session: e.session!, source: e.source, id: e.id, raw: line };
      if (cls === 'positioned') {
        a.epoch = e.epoch ?? 0;
        a.seq = e.seq!;
      }
      this.pending.push(a);
    }
    if (this.pending.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        try {
          const done = this.flush();
          if (done instanceof Promise) done.catch((err: Error) => this.report(err));
        } catch (err) {
          this.report(err as Error);
        }
      });
    }
    for (const { event: e, line } of batch) {
      const claim = origin === undefined ? undefined : claimsSession(e);
      if (claim !== undefined && !origin!.claims.has(claim)) {
        origin!.claims.add(claim);
        this.store.fabric?.claim(origin!, claim);
      }
      this.hub.fanOut(e, line);
    }
  }

  /** Writes pending admissions; returns how many were new (not redeliveries). */
  flush(): Maybe<number> {
    this.scheduled = false;
    if (this.pending.length === 0) return 0;
    const list = this.pending;
    this.pending = [];
    return then(this.store.admitAll(list), (results) => {
      let fresh = 0;
      for (const f of results) {
        if (f) fresh += 1;
        this.counters[f ? 'ingested' : 'duplicates'] += 1;
      }
      return fresh;
    });
  }

  /**
   * A command from a WS sender (D17): routed to its one claimant and forwarded as the raw frame,
   * then kept in the session history and fanned out; a refusal goes only to the sender.
   */
  command(cmd: Incoming, frame: string, sender: Principal | undefined): { refused?: { code: RelayRefusalCode; detail: string } } {
    const route = routeCommand(sender, cmd.event, this.claimants());
    if (route.kind === 'refuse') {
      this.counters.refused += 1;
      return { refused: { code: route.code, detail: route.detail } };
    }
    route.target.sendText(frame);
    this.counters.forwarded += 1;
    this.accept([cmd]);
    return {};
  }

  /**
   * Replays what `spec.from` asks for, then delivers live (AEP-0003 §5). A live sink is
   * registered before the history is read and holds what arrives meanwhile; after the replay it
   * gets what the replay did not already carry, so a store that answers later loses nothing.
   */
  subscribe(sink: Sink, spec: SubscriptionSpec, opts: { live: boolean; alsoSession?: string }): Maybe<void> {
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
    return then(this.flush(), () => then(this.replays(spec, opts), (jobs) => then(all(jobs), finish)));
  }

  private replays(spec: SubscriptionSpec, opts: { alsoSession?: string }): Maybe<Maybe<ReplayJob>[]> {
    const one = (session: string, marker: boolean, after?: { epoch: number; seq: number }): Maybe<ReplayJob> =>
      then(this.store.replay(session, after), (r) => ({ session, r, marker }));
    const from = spec.from;
    const extra = () => {
      // `live=0` with a session filter and no position for it replays that whole session (aep timeline).
      const s = opts.alsoSession;
      return s !== undefined && (from === undefined || (from !== 'all' && !from.some((p) => p.session === s))) ? [one(s, false)] : [];
    };
    if (from === 'all') return then(this.store.sessionIds(), (ids) => [...ids.map((s) => one(s, false)), ...extra()]);
    const jobs = from === undefined ? [] : from.map((entry) => one(entry.session, true, entry.after));
    return [...jobs, ...extra()];
  }

  /** One entry per live (connection, claimed session) pair, never merged (AEP-0003 §4.1). */
  roster(): RosterEntry[] {
    const entries: RosterEntry[] = [];
    for (const p of this.claimants()) {
      if (p.role === 'consumer') continue;
      for (const session of p.claims) {
        const e: RosterEntry = { session };
        if (p.identity.agent !== undefined) e.agent = p.identity.agent;
        if (p.identity.instance !== undefined) e.instance = p.identity.instance;
        if (p.control !== undefined) e.control = p.control;
        if (p.emits !== undefined) e.emits = p.emits;
        entries.push(e);
      }
    }
    return entries;
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

/** Line breaks only ever sit between JSON tokens, so dropping them keeps the event and lets SSE carry it on one `data:` line. */
export const oneLine = (text: string): string => (/[\r\n]/.test(text) ? text.replace(/[\r\n]+/g, '') : text);
