// Commands forwarded between relay nodes (D17 across nodes): a command whose claimant is on
// another node goes through the commands stream to that node's durable consumer, which hands
// it to the local connection the claim names. A claimant that left meanwhile, or a publish
// JetStream did not confirm (D38), is answered back to the sender's node on a core subject.
import { headers, nanos } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import type { RelayRefusalCode } from '../../protocol/errors.js';
import type { Peer } from '../types.js';
import type { ClaimRecord } from './claim-leases.js';
import type { Engine } from './engine.js';
import { describe, WRITE_DEADLINE_MS, type Faults } from './faults.js';
import { Feed, startAt, type FeedStart } from './feed.js';
import { sessionToken } from './subjects.js';

/** Headers: the sending node, the claimant's connection, and where a refusal goes back to. */
export const NODE = 'Aep-Node';
const CONN = 'Aep-Conn';
const BACK_NODE = 'Aep-Back-Node';
const BACK_CONN = 'Aep-Back-Conn';

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
}

export class ForwardedCommands {
  constructor(
    private readonly engine: Engine,
    private readonly node: string,
    private readonly leaseMs: number,
    private readonly faults: Faults,
    private readonly host: CommandHost,
    private readonly log: (line: string) => void,
  ) {}

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
    return new Feed(
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
          this.deliver(
            m.headers?.get(CONN) ?? '',
            m.subject.split('.')[3] ?? '',
            m.string(),
            m.headers?.get(BACK_NODE),
            m.headers?.get(BACK_CONN),
          );
          m.ack();
        },
      },
      this.log,
    );
  }

  /** Refusals sent back to this node's senders; returns how to stop hearing them. */
  listenBack(): () => void {
    const back = this.engine.nc.subscribe(this.engine.names.back(this.node), {
      callback: (err, m) => {
        if (err) return this.host.report(err);
        const conn = m.headers?.get(CONN);
        this.sendTo(conn, m.string());
      },
    });
    return () => back.unsubscribe();
  }

  private sendTo(conn: string | undefined, text: string): void {
    for (const p of this.host.peers()) if (this.host.connIdOf(p) === conn) p.sendText(text);
  }

  publish(r: ClaimRecord, text: string, replyConn?: string): void {
    const h = headers();
    h.set(NODE, this.node);
    h.set(CONN, r.conn);
    if (replyConn !== undefined) {
      h.set(BACK_NODE, this.node);
      h.set(BACK_CONN, replyConn);
    }
    const report = this.host.failed(`a command for session ${r.session} was not confirmed forwarded`);
    const subject = this.engine.names.command(r.node, sessionToken(r.session));
    this.engine.js.publish(subject, text, { headers: h, timeout: WRITE_DEADLINE_MS }).then(
      () => this.faults.writeConfirmed('commands'),
      (err: Error) => {
        report(err);
        this.faults.writeFailed(err, 'commands');
        if (replyConn !== undefined) this.unconfirmed(replyConn, text, err);
      },
    );
  }

  /**
   * D38: the sender (this node's connection `conn`) hears that JetStream did not confirm its
   * command within the write deadline. A publish that timed out may still have been stored and
   * reach the target, so the answer says "not confirmed", not "not sent": the same command sent
   * again is answered once by its target (D4), whichever copy arrives.
   */
  private unconfirmed(conn: string, text: string, err: Error): void {
    const { id } = commandOf(text);
    const reason = this.faults.reason('commands') ?? `JetStream did not confirm the command: ${describe(err)}`;
    const code: RelayRefusalCode = 'store-unavailable';
    const detail =
      `the relay's store did not confirm the command within ${WRITE_DEADLINE_MS / 1000} s (${reason}); ` +
      'it may still reach its target: send the same command again shortly (its target answers it once)';
    const frame = JSON.stringify({ type: 'error', ...(typeof id === 'string' ? { cause: id } : {}), code, detail });
    this.sendTo(conn, frame);
  }

  /** A command forwarded here: to the local connection it names, if it still claims the session. */
  private deliver(conn: string, token: string, text: string, backNode?: string, backConn?: string): void {
    for (const p of this.host.peers()) {
      if (this.host.connIdOf(p) !== conn) continue;
      for (const s of p.claims) {
        if (sessionToken(s) === token) {
          p.sendText(text);
          return;
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
  }

  /** Removes this node's durable consumer (a stop). */
  async remove(): Promise<void> {
    await this.engine.jsm.consumers.delete(this.engine.names.commandsStream, this.durableName()).catch(() => {});
  }
}
