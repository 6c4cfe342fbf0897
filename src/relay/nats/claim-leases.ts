// Claims across relay nodes, as leases in the claims bucket (D19 on every node): this node puts
// its own claims and its node key, and renews them every third of the lease; it hears the
// others' through the bucket read as a stream. A claim lapses with its connection (closed, then
// kept through the claim lease), or a lease after its node stopped renewing it, measured by the
// bucket's own writes as this node hears them, never by the clock alone.
import { DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { Principal } from '../acl.js';
import type { Peer } from '../types.js';
import type { Engine } from './engine.js';
import type { Faults } from './faults.js';
import { ephemeral, Feed } from './feed.js';
import { sessionToken } from './subjects.js';

/**
 * The claims feed hears this node's own renewals every third of the lease and, idle, the
 * server's heartbeat every second: silent longer than this, it may be missing others' claims.
 * Three heartbeats: one late (a busy machine, a slow but healthy server) is no outage, two
 * missed are the client library's own sign of a lost pull, and the feed reopens (deaf then).
 */
export const CLAIMS_SILENT_MS = 3000;
const MIN_RENEW_WAIT_MS = 250;

/** A claim as the bucket holds it: what routing and the roster need of the claimant. */
export interface ClaimRecord {
  session: string;
  node: string;
  conn: string;
  role: Peer['role'];
  accepts?: readonly string[];
  identity: Peer['identity'];
  control?: unknown;
  emits?: unknown;
  /** The claimant's authenticated identity and whether it is a tokens-file one (D19). */
  owner: string;
  bound: boolean;
  /** Set when the connection closed: the claim keeps other identities out until `closedAt` + the claim lease. */
  closedAt?: number;
}

/** A claimant on another node; `sendText` forwards the frame, unchanged, to that node. */
export class RemotePeer implements Peer {
  readonly role: Peer['role'];
  readonly accepts: readonly string[] | undefined;
  readonly claims: Set<string>;
  readonly identity: Peer['identity'];
  readonly control: unknown;
  readonly emits: unknown;
  readonly principal: Principal;
  constructor(
    readonly record: ClaimRecord,
    private readonly send: (r: ClaimRecord, text: string) => void,
  ) {
    this.role = record.role;
    this.accepts = record.accepts;
    this.claims = new Set([record.session]);
    this.identity = record.identity;
    this.control = record.control;
    this.emits = record.emits;
    // Routing and the roster read this; what the remote party may do was decided on its node.
    this.principal = {
      identity: record.owner,
      commands: [],
      sessions: [],
      emit: [],
      bound: record.bound,
      authenticated: true,
    };
  }

  sendText(text: string): void {
    this.send(this.record, text);
  }
}

/** What the claim leases need of the fabric that holds them. */
export interface LeaseHost {
  /** The connection id a local peer's claims and forwarded commands name. */
  connId(peer: object): string;
  /** How long a closed claimant's claim keeps other identities out (0 before the core attached). */
  claimLeaseMs(): number;
  /** Reports a failed bucket write, unless the store's outage explains it. */
  failed(what: string): (err: Error) => void;
  /** Sends a command frame to another node's claimant. */
  publishCommand(r: ClaimRecord, text: string): void;
}

export class ClaimLeases {
  /** This node's claims: key in the bucket → record. */
  private readonly own = new Map<string, ClaimRecord>();
  private readonly byPeer = new Map<object, Set<string>>();
  /** Other nodes' claims and when each was last heard of (local clock). */
  private readonly remote = new Map<string, { peer: RemotePeer; heard: number; text: string }>();
  private readonly nodesHeard = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  /**
   * When this node could last not hear the bucket (a reconnect, a reopened feed): every claim
   * it knew counts for one more lease from then, while their nodes renew them, so a command is
   * not refused `no-route` for a claimant the outage only hid.
   */
  private deafUntil = 0;
  /**
   * When the bucket last took one of this node's own renewals, as the claims feed heard it (its
   * stream time). Claims lapse by the bucket's writes, not by the clock: a feed still hearing the
   * server's heartbeats while the bucket has no leader (an election) hears nobody's renewals,
   * which says nothing about whether the other nodes still renew theirs.
   */
  private ownHeardAt = 0;
  private claimsDeaf = false;
  private claimsFeed: Feed | undefined;
  private renewFailing = false;

  constructor(
    private readonly engine: Engine,
    private readonly node: string,
    private readonly leaseMs: number,
    private readonly faults: Faults,
    private readonly host: LeaseHost,
    private readonly log: (line: string) => void,
  ) {}

  /** The claims bucket read as its stream: one feed this node reopens itself (see feed.ts). */
  openFeed(): Feed {
    const { names } = this.engine;
    const { jsm } = this.engine.quick;
    const bucket = `KV_${names.claimsBucket}`;
    const prefix = `$KV.${names.claimsBucket}.`;
    this.claimsFeed = new Feed(
      {
        what: 'the claims feed',
        open: (from) => ephemeral(this.engine, bucket, `${prefix}>`, from, DeliverPolicy.LastPerSubject),
        lastSeq: async () => (await jsm.streams.info(bucket)).state.last_seq,
        onMessage: (m) => this.heard(m, m.subject.slice(prefix.length)),
      },
      this.log,
      (deaf) => {
        // Not hearing the bucket is no news of any claim: they hold until a lease after it is heard again.
        this.claimsDeaf = deaf;
        if (!deaf) this.deafUntil = Date.now();
      },
    );
    return this.claimsFeed;
  }

  /** Renews every third of the lease from now on. */
  startRenewing(): void {
    // Not while the connection is down (the client would hold the puts and time them out later);
    // a failed renewal while the store is down is that outage, already said once.
    const renewFailed = this.host.failed('claims not renewed');
    // While this node cannot renew its own claims, the others cannot renew theirs either (the
    // bucket has no leader): theirs hold until a lease after renewing works again.
    const renewed = () => {
      if (!this.renewFailing) return;
      this.renewFailing = false;
      this.deafUntil = Date.now();
    };
    const notRenewed = (err: Error) => {
      this.renewFailing = true;
      renewFailed(err);
    };
    let renewing = false;
    const renewNow = () => {
      if (this.faults.offline() !== undefined) return;
      // The last renewal is still out after a third of the lease: as good as failed, so far.
      if (renewing) {
        this.renewFailing = true;
        return;
      }
      renewing = true;
      this.renew()
        .then(renewed, notRenewed)
        .finally(() => (renewing = false));
    };
    this.timer = setInterval(renewNow, this.renewEveryMs());
    this.timer.unref();
  }

  /**
   * Puts this node's lease and every claim it holds again (the bucket TTL is the lease). Each put
   * waits at most a third of the lease: one sent while the bucket had no leader is not answered
   * by the next, and waiting it out would leave this node's claims unrenewed past the election.
   */
  async renew(): Promise<void> {
    const { kv } = this.engine;
    const opts = { timeout: Math.max(MIN_RENEW_WAIT_MS, Math.floor(this.leaseMs / 3)) };
    await kv.put(`n.${this.node}`, JSON.stringify({ node: this.node, at: Date.now() }), opts);
    await Promise.all([...this.own].map(([key, r]) => kv.put(key, JSON.stringify(r), opts)));
  }

  /** The connection came back: the claims known count for one more lease. */
  reconnected(): void {
    this.deafUntil = Date.now();
  }

  /** One message of the claims feed: a node's lease or a claim, put or deleted. */
  heard(m: JsMsg, key: string): void {
    const at = Math.min(Date.now(), Math.floor(m.info.timestampNanos / 1e6));
    const [kind, a, b] = key.split('.');
    const op = m.headers?.get('KV-Operation');
    const gone = op === 'DEL' || op === 'PURGE';
    if (kind === 'n') {
      if (a === this.node) {
        if (!gone) this.ownRenewal(at);
        return;
      }
      if (gone) this.nodesHeard.delete(a!);
      else this.nodesHeard.set(a!, at);
      return;
    }
    if (kind !== 'c' || b === this.node) return;
    if (gone) {
      this.remote.delete(key);
      return;
    }
    const text = m.string();
    const known = this.remote.get(key);
    if (known && known.text === text) known.heard = at;
    else
      this.remote.set(key, {
        peer: new RemotePeer(JSON.parse(text) as ClaimRecord, (r, t) => this.host.publishCommand(r, t)),
        heard: at,
        text,
      });
  }

  /**
   * The bucket took this node's renewal at `at`. Two renewal periods since the last one means it
   * took no one's meanwhile: every claim known counts for one more lease from here.
   */
  private ownRenewal(at: number): void {
    if (this.ownHeardAt > 0 && at - this.ownHeardAt > 2 * this.renewEveryMs())
      this.deafUntil = Math.max(this.deafUntil, at);
    this.ownHeardAt = Math.max(this.ownHeardAt, at);
  }

  private renewEveryMs(): number {
    return Math.max(100, Math.floor(this.leaseMs / 3));
  }

  claim(p: Peer, session: string): void {
    const peer: object = p;
    const conn = this.host.connId(peer);
    const key = `c.${sessionToken(session)}.${this.node}.${conn}`;
    const r: ClaimRecord = {
      session,
      node: this.node,
      conn,
      role: p.role,
      identity: { ...p.identity },
      owner: p.principal.identity,
      bound: p.principal.bound,
    };
    if (p.accepts !== undefined) r.accepts = [...p.accepts];
    if (p.control !== undefined) r.control = p.control;
    if (p.emits !== undefined) r.emits = p.emits;
    this.own.set(key, r);
    let keys = this.byPeer.get(peer);
    if (!keys) {
      keys = new Set();
      this.byPeer.set(peer, keys);
    }
    keys.add(key);
    this.engine.kv
      .put(key, JSON.stringify(r))
      .catch(this.host.failed(`claim of session ${session} not stored (renewed later)`));
  }

  release(peer: Peer): void {
    const keys = this.byPeer.get(peer);
    if (!keys) return;
    this.byPeer.delete(peer);
    const lease = this.host.claimLeaseMs();
    for (const key of keys) {
      const r = this.own.get(key);
      if (r === undefined) continue;
      // Closed, still renewed through the claim lease, then gone (D19 on every node).
      r.closedAt = Date.now();
      this.engine.kv.put(key, JSON.stringify(r)).catch(this.host.failed('closed claim not stored'));
      const drop = () => {
        if (this.own.get(key) !== r) return;
        this.own.delete(key);
        this.engine.kv.delete(key).catch(this.host.failed('lapsed claim not removed (its lease ends it)'));
      };
      if (lease <= 0) drop();
      else setTimeout(drop, lease).unref();
    }
  }

  /** Other nodes' claims of `session` that still count: live ones, and closed ones within their lease. */
  private *claimsOf(session: string): Iterable<{ r: ClaimRecord; live: boolean }> {
    const now = Date.now();
    const lease = this.host.claimLeaseMs();
    for (const c of this.remote.values()) {
      const r = c.peer.record;
      if (r.session !== session || !this.fresh(c.heard, r.node, now)) continue;
      if (r.closedAt === undefined) yield { r, live: true };
      else if (r.closedAt + lease > now) yield { r, live: false };
    }
  }

  rival(session: string, who: Principal): string | undefined {
    for (const { r, live } of this.claimsOf(session)) {
      if (live && (who.bound || r.owner !== who.identity))
        return `session ${session} is claimed by another live connection`;
      if (!live && r.owner !== who.identity) {
        const left = r.closedAt! + this.host.claimLeaseMs() - Date.now();
        return `session ${session} was claimed by another identity; its claim lapses in ${Math.ceil(left / 1000)} s`;
      }
    }
    return undefined;
  }

  ownerOf(session: string): string | undefined {
    for (const { r } of this.claimsOf(session)) return r.owner;
    return undefined;
  }

  /** This node cannot hear the bucket, or nobody can write it: no news of any claim. */
  private deaf(): boolean {
    return this.claimsDeaf || this.renewFailing;
  }

  /**
   * Why this node cannot tell now whether another node claims a session, or undefined: a
   * command it finds no claimant for is then refused `store-unavailable`, not `no-route`.
   */
  unheard(now = Date.now()): string | undefined {
    if (this.claimsDeaf) return 'the claims feed is reopening its consumer (a JetStream server went quiet)';
    if (this.renewFailing) return 'the claims bucket does not confirm writes (its stream has no leader)';
    const silent = now - (this.claimsFeed?.heardUntil() ?? now);
    if (silent > CLAIMS_SILENT_MS) return `the claims feed has heard nothing for ${(silent / 1000).toFixed(1)} s`;
    return undefined;
  }

  /**
   * A claim counts while it and its node's lease are fresh (a dead node's claims lapse with its
   * lease), measured up to when the claims feed last heard the bucket: a renewal it could not
   * hear is no sign that the claim lapsed.
   */
  private fresh(heard: number, node: string, now: number): boolean {
    const n = this.nodesHeard.get(node);
    if (this.deaf()) return n !== undefined;
    return this.since(heard, now) <= this.leaseMs && n !== undefined && this.since(n, now) <= this.leaseMs;
  }

  /**
   * How long the bucket has been heard taking writes since `t` (or since it could be heard again):
   * up to this node's last renewal the claims feed heard, and no later than the feed heard at all.
   */
  private since(t: number, now: number): number {
    const until = Math.min(now, this.claimsFeed?.heardUntil() ?? now, this.ownHeardAt > 0 ? this.ownHeardAt : now);
    return until - Math.max(t, this.deafUntil);
  }

  /** Live claims of other nodes: a claim counts while both it and its node's lease are fresh. */
  *remotePeers(): Iterable<Peer> {
    const now = Date.now();
    for (const [key, c] of this.remote) {
      if (!this.fresh(c.heard, c.peer.record.node, now)) {
        if (!this.deaf() && this.since(c.heard, now) > this.leaseMs) this.remote.delete(key);
        continue;
      }
      if (c.peer.record.closedAt === undefined) yield c.peer;
    }
  }

  /** Claims held and other nodes seen, for `/healthz`. */
  state(): { claims: number; remoteClaims: number; nodes: number } {
    const now = Date.now();
    let nodes = 1;
    for (const at of this.nodesHeard.values()) if (now - at <= this.leaseMs) nodes += 1;
    return { claims: this.own.size, remoteClaims: this.remote.size, nodes };
  }

  stopRenewing(): void {
    clearInterval(this.timer);
  }

  /** Takes this node's claims and lease out of the bucket (a stop): the other nodes need not wait out the lease. */
  async withdraw(): Promise<void> {
    const { kv } = this.engine;
    await Promise.all([...this.own.keys(), `n.${this.node}`].map((k) => kv.delete(k).catch(() => {})));
  }

  /** Forgets this node's claims once stopped. */
  clear(): void {
    this.own.clear();
  }
}
