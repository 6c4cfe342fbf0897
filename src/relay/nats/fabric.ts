// What joins relay nodes beyond history: claims as leases in the claims bucket (claim-leases.ts),
// commands forwarded to the claimant's node through the commands stream (commands.ts), and
// copies that are fanned out but not stored (agent-scoped events, redeliveries, answers ahead of
// their stored copies) on core subjects, here.
import { headers } from '@nats-io/transport-node';
import type { JsMsg } from '@nats-io/jetstream';
import type { Principal } from '../acl.js';
import type { Fabric, FabricLocal, Peer } from '../types.js';
import { ClaimLeases, RemotePeer } from './claim-leases.js';
import { ForwardedCommands, NODE, type EarlyForward } from './commands.js';
import { untilReady, type Engine } from './engine.js';
import type { Faults } from './faults.js';
import type { Feed } from './feed.js';
import { sessionToken } from './subjects.js';

/** On a copy: an answer sent ahead of its stored copy (crossed.ts), not a redelivery. */
const ANSWER = 'Aep-Answer';

export class NatsFabric implements Fabric {
  private local: FabricLocal | undefined;
  private readonly connIds = new WeakMap<object, string>();
  private nextConn = 0;
  private readonly stops: (() => void)[] = [];
  private readonly feeds: Feed[] = [];
  private readonly claims: ClaimLeases;
  private readonly commands: ForwardedCommands;

  constructor(
    private readonly engine: Engine,
    readonly node: string,
    leaseMs: number,
    private readonly report: (err: Error) => void,
    private readonly faults: Faults,
    log: (line: string) => void = () => {},
  ) {
    this.claims = new ClaimLeases(
      engine,
      node,
      leaseMs,
      faults,
      {
        connId: (peer) => this.connId(peer),
        claimLeaseMs: () => this.local?.claimLeaseMs ?? 0,
        failed: (what) => this.failed(what),
        publishCommand: (r, text) => this.commands.publish(r, text),
      },
      log,
    );
    this.commands = new ForwardedCommands(
      engine,
      node,
      leaseMs,
      faults,
      {
        peers: () => this.local?.peers() ?? [],
        connIdOf: (peer) => this.connIds.get(peer),
        failed: (what) => this.failed(what),
        report: (err) => this.report(err),
        held: (id, pending) => this.local?.held?.(id, pending),
      },
      log,
    );
  }

  attach(local: FabricLocal): void {
    this.local = local;
  }

  /** What another node received: fanned out to this node's subscribers. */
  fanOut(line: string, via: 'stored' | 'copy' | 'answer'): void {
    this.local?.fanOut(line, via);
  }

  async start(): Promise<void> {
    const { nc, names } = this.engine;
    await untilReady(() => this.claims.renew());
    this.feeds.push(this.claims.openFeed());
    this.feeds.push(this.commands.openFeed());
    for (const f of this.feeds) await untilReady(() => f.start());

    const copies = nc.subscribe(names.allCopies, {
      callback: (err, m) => {
        if (err) return this.report(err);
        if (m.headers?.get(NODE) !== this.node) this.fanOut(m.string(), m.headers?.has(ANSWER) ? 'answer' : 'copy');
      },
    });
    this.stops.push(() => copies.unsubscribe());
    this.stops.push(this.commands.listenBack());
    this.claims.startRenewing();
  }

  /** The connection came back: feeds reopen, and the claims known count for one more lease. */
  reconnected(): void {
    this.claims.reconnected();
    for (const f of this.feeds) f.reconnected();
  }

  /** The claims feed's handler (claim-leases.ts), kept here for a test that feeds it messages. */
  private heard(m: JsMsg, key: string): void {
    this.claims.heard(m, key);
  }

  private connId(peer: object): string {
    let id = this.connIds.get(peer);
    if (id === undefined) {
      id = String(++this.nextConn);
      this.connIds.set(peer, id);
    }
    return id;
  }

  /** A failed fabric write, reported unless the store's outage (already said once) explains it. */
  private failed(what: string): (err: Error) => void {
    return (err) => {
      if (this.faults.reason() === undefined) this.report(new Error(`${what}: ${err.message}`));
    };
  }

  claim(p: Peer, session: string): void {
    this.claims.claim(p, session);
  }

  release(peer: Peer): void {
    this.claims.release(peer);
  }

  rival(session: string, who: Principal): string | undefined {
    return this.claims.rival(session, who);
  }

  ownerOf(session: string): string | undefined {
    return this.claims.ownerOf(session);
  }

  unheard(now = Date.now()): string | undefined {
    return this.claims.unheard(now);
  }

  remotePeers(): Iterable<Peer> {
    return this.claims.remotePeers();
  }

  share(line: string, e: { session?: string }, answer = false): void {
    const h = headers();
    h.set(NODE, this.node);
    if (answer) h.set(ANSWER, '1');
    this.engine.nc.publish(this.engine.names.copy(e.session === undefined ? 'agent' : sessionToken(e.session)), line, {
      headers: h,
    });
  }

  forward(target: Peer, frame: string, replyTo?: Peer): void {
    if (!(target instanceof RemotePeer)) {
      target.sendText(frame);
      return;
    }
    this.commands.publish(target.record, frame, replyTo === undefined ? undefined : this.connId(replyTo));
  }

  /**
   * D41: a command to another node's claimant goes there now (early.ts), ahead of its history
   * write; a local claimant gets it at once. Undefined for a local claimant: nothing follows.
   */
  forwardEarly(target: Peer, frame: string, replyTo?: Peer): EarlyForward | undefined {
    if (!(target instanceof RemotePeer)) {
      target.sendText(frame);
      return undefined;
    }
    return this.commands.forwardEarly(target.record, frame, replyTo === undefined ? undefined : this.connId(replyTo));
  }

  /** Claims held and other nodes seen, for `/healthz`. */
  state(): { claims: number; remoteClaims: number; nodes: number } {
    return this.claims.state();
  }

  async stop(): Promise<void> {
    this.claims.stopRenewing();
    for (const f of this.feeds) f.stop();
    for (const s of this.stops.splice(0)) s();
    await this.claims.withdraw();
    await this.commands.remove();
    this.claims.clear();
  }
}
