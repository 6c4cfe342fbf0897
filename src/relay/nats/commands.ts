// Commands forwarded between relay nodes (D17 across nodes): a command whose claimant is on
// another node goes through the commands stream to that node's durable consumer, which hands
// it to the local connection the claim names. A claimant that left meanwhile, or a publish
// JetStream did not confirm (D38), is answered back to the sender's node on a core subject.
// D41: a copy on a core subject goes ahead of both writes, and the target's node keeps the first
// of the two copies to come (early.ts).
import { randomBytes } from 'node:crypto';
import { headers, nanos, type MsgHdrs } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { RelayRefusalCode } from '../../protocol/errors.js';
import type { Peer } from '../types.js';
import type { ClaimRecord } from './claim-leases.js';
import type { Engine } from './engine.js';
import { describe, WRITE_DEADLINE_MS, type Faults } from './faults.js';
import { EarlyCopies } from './early.js';
import { Feed, startAt, type FeedStart } from './feed.js';
import { sessionToken } from './subjects.js';

/** Headers: the sending node, the claimant's connection, and where a refusal goes back to. */
export const NODE = 'Aep-Node';
const CONN = 'Aep-Conn';
const BACK_NODE = 'Aep-Back-Node';
const BACK_CONN = 'Aep-Back-Conn';
/** D41: one forward's id, on both its copies; and, alone, the sender's node saying its writes ended. */
const FWD = 'Aep-Fwd';
const ENDED = 'Aep-Ended';

/** What a sender is told when the stream write fails after the early copy went (D41). */
const EARLY_UNKNOWN =
  "the command was handed to its target's node before, so whether it took effect is unknown; it may have, " +
  'or may still reach its target: send the same command again with the same id, and its target answers ' +
  'with what it recorded';

/** D41: a command forwarded ahead of its history write; the stream copy follows it, or its end is told. */
export interface EarlyForward {
  /** The history write was confirmed: the stream copy goes now. */
  written(): void;
  /** The history write ended (after `written`, nothing more to do). */
  ended(): void;
}

/** A forwarded command's id and session, from a frame a node parsed already ({} if unreadable). */
function commandOf(text: string): { id?: unknown; session?: unknown } {
  try {
    return JSON.parse(text) as { id?: unknown; session?: unknown };
  } catch {
    return {};
  }
}

/** What the forwarded commands need of the fabric that holds them. */
export interface CommandHost {
  /** This node's live connections, each known by its connection id. */
  peers(): Iterable<Peer>;
  connIdOf(peer: object): string | undefined;
  /** Reports a failed write, unless the store's outage explains it. */
  failed(what: string): (err: Error) => void;
  report(err: Error): void;
  /** D41: answers to a command handed on early wait (`pending`) or go. */
  held(commandId: string, pending: boolean): void;
}

export class ForwardedCommands {
  private readonly early: EarlyCopies;
  private feed: Feed | undefined;
  /** Stream copies missed in a row (early.ts): the first reopens the consumer, the second makes it anew. */
  private misses = 0;

  constructor(
    private readonly engine: Engine,
    private readonly node: string,
    private readonly leaseMs: number,
    private readonly faults: Faults,
    private readonly host: CommandHost,
    private readonly log: (line: string) => void,
  ) {
    this.early = new EarlyCopies(
      (id, pending) => this.host.held(id, pending),
      (since) => this.missed(since),
    );
  }

  /**
   * A command's stream copy did not come although its early copy did: the consumer may hear its
   * server yet get nothing (a durable the cluster stopped delivering from after losing a
   * server). Reopened first; missed again, it is removed and made anew after the last command
   * read (what comes twice is dropped by its forward id, or answered once by its target). Only
   * a consumer read without a break since the early copy came counts: one reopened meanwhile
   * (an election) may still bring the copy, and making it anew then would only slow it.
   */
  private missed(since: number): void {
    const feed = this.feed;
    const open = feed?.openSince();
    if (feed === undefined || open === undefined || open > since) return;
    this.misses += 1;
    if (this.misses < 2) {
      feed.restart("a command's stream copy did not come");
      return;
    }
    this.misses = 0;
    this.log('relay: nats: the forwarded-commands consumer missed commands twice; making it anew');
    void this.engine.quick.jsm.consumers
      .delete(this.engine.names.commandsStream, this.durableName())
      .catch(() => false)
      .then(() => feed.restart('made anew'));
  }

  private durableName(): string {
    return `${this.engine.names.namespace}_cmd_${this.node}`;
  }

  /**
   * Forwarded commands: a durable consumer with the streams' replicas, so losing one server
   * of a cluster moves it to another (its new leader) instead of losing it; one found gone is
   * made again from the last command read.
   */
  openFeed(): Feed {
    const { names } = this.engine;
    const { js, jsm } = this.engine.quick;
    const durable = this.durableName();
    const make = (from: FeedStart | undefined) =>
      jsm.consumers.add(names.commandsStream, {
        durable_name: durable,
        filter_subject: names.commandsFor(this.node),
        ack_policy: AckPolicy.Explicit,
        // Unacked (its pull lost with a server), a command comes again after this; the adapter dedupes.
        ack_wait: nanos(2000),
        ...startAt(from, DeliverPolicy.New),
        num_replicas: this.engine.replicas,
        // A node that died leaves its consumer behind; the server removes it.
        inactive_threshold: nanos(Math.max(60_000, this.leaseMs * 6)),
      });
    this.feed = new Feed(
      {
        what: 'the forwarded-commands consumer',
        durable: true,
        lastSeq: async () => (await jsm.streams.info(names.commandsStream)).state.last_seq,
        open: async (from) => {
          try {
            return await js.consumers.get(names.commandsStream, durable);
          } catch (err) {
            if (!/consumer not found/i.test((err as Error).message)) throw err;
          }
          await make(from);
          return js.consumers.get(names.commandsStream, durable);
        },
        onMessage: (m: JsMsg) => {
          this.misses = 0;
          const fwd = m.headers?.get(FWD);
          if (!fwd || this.early.arrived(fwd, 'stream')) this.take(m.headers, m.subject, m.string());
          m.ack();
        },
      },
      this.log,
    );
    return this.feed;
  }

  /** A copy of a command for a local claimant (its subject's fourth token is the session's); whether it went to it. */
  private take(h: MsgHdrs | undefined, subject: string, text: string): boolean {
    return this.deliver(h?.get(CONN) ?? '', subject.split('.')[3] ?? '', text, h?.get(BACK_NODE), h?.get(BACK_CONN));
  }

  /**
   * Refusals sent back to this node's senders, and the early copies of commands for its
   * claimants (with their writes' ends); returns how to stop hearing them.
   */
  listenBack(): () => void {
    const { nc, names } = this.engine;
    const back = nc.subscribe(names.back(this.node), {
      callback: (err, m) => {
        if (err) return this.host.report(err);
        const conn = m.headers?.get(CONN);
        this.sendTo(conn, m.string());
      },
    });
    const early = nc.subscribe(names.earlyFor(this.node), {
      callback: (err, m) => {
        if (err) return this.host.report(err);
        const fwd = m.headers?.get(FWD);
        if (!fwd) return;
        if (m.headers?.has(ENDED)) return this.early.ended(fwd);
        if (!this.early.arrived(fwd, 'early')) return;
        const text = m.string();
        const { id } = commandOf(text);
        if (this.take(m.headers, m.subject, text) && typeof id === 'string') this.early.handedOn(fwd, id);
      },
    });
    return () => {
      back.unsubscribe();
      early.unsubscribe();
      this.early.clear();
    };
  }

  private sendTo(conn: string | undefined, text: string): void {
    for (const p of this.host.peers()) if (this.host.connIdOf(p) === conn) p.sendText(text);
  }

  private headersFor(r: ClaimRecord, replyConn?: string, fwd?: string): MsgHdrs {
    const h = headers();
    h.set(NODE, this.node);
    h.set(CONN, r.conn);
    if (replyConn !== undefined) {
      h.set(BACK_NODE, this.node);
      h.set(BACK_CONN, replyConn);
    }
    if (fwd !== undefined) h.set(FWD, fwd);
    return h;
  }

  publish(r: ClaimRecord, text: string, replyConn?: string, fwd?: string): void {
    const report = this.host.failed(`a command for session ${r.session} was not confirmed forwarded`);
    const subject = this.engine.names.command(r.node, sessionToken(r.session));
    const h = this.headersFor(r, replyConn, fwd);
    this.engine.js.publish(subject, text, { headers: h, timeout: WRITE_DEADLINE_MS }).then(
      () => this.faults.writeConfirmed('commands'),
      (err: Error) => {
        report(err);
        this.faults.writeFailed(err, 'commands');
        // The sender hears it before the answer its target's node held until now.
        if (replyConn !== undefined) this.unconfirmed(replyConn, text, err, fwd !== undefined);
        if (fwd !== undefined) this.endedEarly(r, fwd);
      },
    );
  }

  /**
   * D41: the command to its claimant's node now, on a core subject, while its history write is
   * under way; the stream copy follows once that write is confirmed (the target keeps the first
   * to come), or the target hears that the writes ended without it.
   */
  forwardEarly(r: ClaimRecord, text: string, replyConn?: string): EarlyForward {
    const fwd = randomBytes(9).toString('base64url');
    const subject = this.engine.names.early(r.node, sessionToken(r.session));
    this.engine.nc.publish(subject, text, { headers: this.headersFor(r, replyConn, fwd) });
    let done = false;
    return {
      written: () => {
        done = true;
        this.publish(r, text, replyConn, fwd);
      },
      ended: () => {
        if (done) return;
        done = true;
        this.endedEarly(r, fwd);
      },
    };
  }

  /** Tells the target's node that forward `fwd` has no stream copy coming: its answers go. */
  private endedEarly(r: ClaimRecord, fwd: string): void {
    const h = headers();
    h.set(FWD, fwd);
    h.set(ENDED, '1');
    this.engine.nc.publish(this.engine.names.early(r.node, 'end'), '', { headers: h });
  }

  /**
   * D38: the sender (this node's connection `conn`) hears that JetStream did not confirm its
   * command within the write deadline. A publish that timed out may still have been stored and
   * reach the target, so the answer says "not confirmed", not "not sent": the same command sent
   * again is answered once by its target (D4), whichever copy arrives.
   */
  private unconfirmed(conn: string, text: string, err: Error, early: boolean): void {
    const { id } = commandOf(text);
    const reason = this.faults.reason('commands') ?? `JetStream did not confirm the command: ${describe(err)}`;
    const code: RelayRefusalCode = 'store-unavailable';
    const detail =
      `the relay's store did not confirm the command within ${WRITE_DEADLINE_MS / 1000} s (${reason}); ` +
      (early
        ? EARLY_UNKNOWN
        : 'it may still reach its target: send the same command again shortly (its target answers it once)');
    const cause = typeof id === 'string' ? { cause: id } : {};
    const frame = JSON.stringify({ type: 'error', ...cause, code, ...(early ? { outcome: 'unknown' } : {}), detail });
    this.sendTo(conn, frame);
  }

  /** A command forwarded here: to the local connection it names, if it still claims the session. */
  private deliver(conn: string, token: string, text: string, backNode?: string, backConn?: string): boolean {
    for (const p of this.host.peers()) {
      if (this.host.connIdOf(p) !== conn) continue;
      for (const s of p.claims) {
        if (sessionToken(s) === token) {
          p.sendText(text);
          return true;
        }
      }
    }
    // Its claimant left after the sender's node routed it: the single-node answer, to the sender.
    if (backNode !== undefined && backConn !== undefined) {
      const cmd = commandOf(text);
      const h = headers();
      h.set(CONN, backConn);
      const frame = {
        type: 'error',
        cause: cmd.id,
        code: 'no-route',
        detail: `no live connection claims session ${String(cmd.session)}`,
      };
      this.engine.nc.publish(this.engine.names.back(backNode), JSON.stringify(frame), { headers: h });
    }
    return false;
  }

  /** Removes this node's durable consumer (a stop). */
  async remove(): Promise<void> {
    await this.engine.jsm.consumers.delete(this.engine.names.commandsStream, this.durableName()).catch(() => {});
  }
}
