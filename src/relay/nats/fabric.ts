// What joins relay nodes beyond history: claims as leases in the claims bucket (a node renews
// its own and its node key; a claim lapses with its connection, or a lease after its node
// died), commands forwarded to the claimant's node through the commands stream, and copies that
// are fanned out but not stored (agent-scoped events, redeliveries) on core subjects.
import { headers } from '@nats-io/transport-node';
import { DeliverPolicy } from '@nats-io/jetstream';
import type { KvWatchEntry } from '@nats-io/kv';
import type { Peer } from '../core.js';
import type { Fabric, FabricLocal } from '../store.js';
import type { Engine } from './engine.js';
import { sessionToken } from './subjects.js';

const NODE = 'Aep-Node';
const CONN = 'Aep-Conn';

/** A claim as the bucket holds it: what routing and the roster need of the claimant. */
interface ClaimRecord {
  session: string;
  node: string;
  conn: string;
  role: Peer['role'];
  accepts?: readonly string[];
  identity: Peer['identity'];
  control?: unknown;
  emits?: unknown;
}

/** A claimant on another node; `sendText` forwards the frame, unchanged, to that node. */
class RemotePeer implements Peer {
  readonly role: Peer['role'];
  readonly accepts: readonly string[] | undefined;
  readonly claims: Set<string>;
  readonly identity: Peer['identity'];
  readonly control: unknown;
  readonly emits: unknown;
  constructor(readonly record: ClaimRecord, private readonly forward: (r: ClaimRecord, text: string) => void) {
    this.role = record.role;
    this.accepts = record.accepts;
    this.claims = new Set([record.session]);
    this.identity = record.identity;
    this.control = record.control;
    this.emits = record.emits;
  }

  sendText(text: string): void {
    this.forward(this.record, text);
  }
}

export class NatsFabric implements Fabric {
  private local: FabricLocal | undefined;
  private readonly connIds = new WeakMap<object, string>();
  private nextConn = 0;
  /** This node's claims: key in the bucket → record. */
  private readonly own = new Map<string, ClaimRecord>();
  private readonly byPeer = new Map<object, Set<string>>();
  /** Other nodes' claims and when each was last heard of (local clock). */
  private readonly remote = new Map<string, { peer: RemotePeer; heard: number }>();
  private readonly nodesHeard = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private readonly stops: (() => void)[] = [];

  constructor(
    private readonly engine: Engine,
    readonly node: string,
    private readonly leaseMs: number,
    private readonly report: (err: Error) => void,
  ) {}

  attach(local: FabricLocal): void {
    this.local = local;
  }

  /** A copy another node received: fanned out to this node's subscribers. */
  fanOut(line: string): void {
    this.local?.fanOut(line);
  }

  async start(): Promise<void> {
    const { kv, js, nc, names } = this.engine;
    await this.renew();
    const watch = await kv.watch({ key: '>' });
    this.stops.push(() => watch.stop());
    void (async () => {
      for await (const e of watch) this.heard(e);
    })().catch((err: Error) => this.report(err));

    const commands = await js.consumers.get(names.commandsStream, { filter_subjects: names.commandsFor(this.node), deliver_policy: DeliverPolicy.New });
    const msgs = await commands.consume();
    this.stops.push(() => msgs.stop());
    void (async () => {
      for await (const m of msgs) this.deliverCommand(m.headers?.get(CONN) ?? '', m.subject.split('.')[3] ?? '', m.string());
    })().catch((err: Error) => this.report(err));

    const copies = nc.subscribe(names.allCopies, {
      callback: (err, m) => {
        if (err) return this.report(err);
        if (m.headers?.get(NODE) !== this.node) this.fanOut(m.string());
      },
    });
    this.stops.push(() => copies.unsubscribe());

    this.timer = setInterval(() => void this.renew().catch((err: Error) => this.report(err)), Math.max(100, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /** Puts this node's lease and every claim it holds again (the bucket TTL is the lease). */
  private async renew(): Promise<void> {
    const { kv } = this.engine;
    await kv.put(`n.${this.node}`, JSON.stringify({ node: this.node, at: Date.now() }));
    await Promise.all([...this.own].map(([key, r]) => kv.put(key, JSON.stringify(r))));
  }

  private heard(e: KvWatchEntry): void {
    const at = Math.min(Date.now(), e.created.getTime());
    const [kind, a, b] = e.key.split('.');
    const gone = e.operation !== 'PUT';
    if (kind === 'n') {
      if (a === this.node) return;
      if (gone) this.nodesHeard.delete(a!);
      else this.nodesHeard.set(a!, at);
      return;
    }
    if (kind !== 'c' || b === this.node) return;
    if (gone) {
      this.remote.delete(e.key);
      return;
    }
    const known = this.remote.get(e.key);
    if (known) known.heard = at;
    else this.remote.set(e.key, { peer: new RemotePeer(JSON.parse(e.string()) as ClaimRecord, (r, text) => this.forward(r, text)), heard: at });
  }

  private connId(peer: object): string {
    let id = this.connIds.get(peer);
    if (id === undefined) {
      id = String(++this.nextConn);
      this.connIds.set(peer, id);
    }
    return id;
  }

  claim(peer: object, session: string): void {
    const p = peer as Peer;
    const conn = this.connId(peer);
    const key = `c.${sessionToken(session)}.${this.node}.${conn}`;
    const r: ClaimRecord = { session, node: this.node, conn, role: p.role, identity: { ...p.identity } };
    if (p.accepts !== undefined) r.accepts = [...p.accepts];
    if (p.control !== undefined) r.control = p.control;
    if (p.emits !== undefined) r.emits = p.emits;
    this.own.set(key, r);
    let keys = this.byPeer.get(peer);
    if (!keys) this.byPeer.set(peer, (keys = new Set()));
    keys.add(key);
    this.engine.kv.put(key, JSON.stringify(r)).catch((err: Error) => this.report(err));
  }

  release(peer: object): void {
    const keys = this.byPeer.get(peer);
    if (!keys) return;
    this.byPeer.delete(peer);
    for (const key of keys) {
      this.own.delete(key);
      this.engine.kv.delete(key).catch((err: Error) => this.report(err));
    }
  }

  share(line: string, e: { session?: string }): void {
    const h = headers();
    h.set(NODE, this.node);
    this.engine.nc.publish(this.engine.names.copy(e.session === undefined ? 'agent' : sessionToken(e.session)), line, { headers: h });
  }

  /** Live claims of other nodes: a claim counts while both it and its node's lease are fresh. */
  *remotePeers(): Iterable<Peer> {
    const now = Date.now();
    for (const [key, c] of this.remote) {
      const node = this.nodesHeard.get(c.peer.record.node);
      if (now - c.heard > this.leaseMs || node === undefined || now - node > this.leaseMs) {
        if (now - c.heard > this.leaseMs) this.remote.delete(key);
        continue;
      }
      yield c.peer;
    }
  }

  private forward(r: ClaimRecord, text: string): void {
    const h = headers();
    h.set(NODE, this.node);
    h.set(CONN, r.conn);
    this.engine.js.publish(this.engine.names.command(r.node, sessionToken(r.session)), text, { headers: h }).catch((err: Error) => this.report(err));
  }

  /** A command forwarded here: to the local connection it names, if it still claims the session. */
  private deliverCommand(conn: string, token: string, text: string): void {
    for (const p of this.local?.peers() ?? []) {
      if (this.connIds.get(p) !== conn) continue;
      for (const s of p.claims) {
        if (sessionToken(s) === token) {
          p.sendText(text);
          return;
        }
      }
    }
    this.report(new Error(`a forwarded command found no claimant here (connection ${conn} left); its sender's retry routes it anew`));
  }

  /** Claims held and other nodes seen, for `/healthz`. */
  state(): { claims: number; remoteClaims: number; nodes: number } {
    return { claims: this.own.size, remoteClaims: this.remote.size, nodes: this.nodesHeard.size + 1 };
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const s of this.stops.splice(0)) s();
    const { kv } = this.engine;
    await Promise.all([...this.own.keys(), `n.${this.node}`].map((k) => kv.delete(k).catch(() => {})));
    this.own.clear();
  }
}
