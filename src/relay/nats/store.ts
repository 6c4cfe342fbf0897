// The relay's store on NATS JetStream (`--nats`): history, claims and command routing in the
// engine, so any number of relay nodes serve one steering fabric behind the one relay core.
import { randomBytes } from 'node:crypto';
import { SteeringError } from '../../protocol/errors.js';
import type { Admission, Position, Replay, SessionStore, StoreHealth } from '../session-store.js';
import { StoreUnavailableError, type StoreFaults } from '../store-fault.js';
import { DEFAULT_BUFFER, DEFAULT_MAX_SESSIONS } from '../session-store.js';
import { DEFAULT_LEASE_MS, openEngine, type Engine, type NatsStoreOptions } from './engine.js';
import { NatsFabric } from './fabric.js';
import { NatsHistory } from './history.js';
import { describe, Faults, STORE_ADVICE } from './faults.js';

export type { NatsStoreOptions };

export class NatsStore implements SessionStore, StoreFaults {
  readonly bufferCap: number;
  readonly path: string;
  readonly fabric: NatsFabric;
  readonly advice = STORE_ADVICE;
  private connected = true;
  private timer: NodeJS.Timeout | undefined;
  /**
   * Admissions handed to JetStream and not settled yet. A read waits for those made before it
   * (the core's rule: every read flushes first): an adapter learns what the relay holds by a
   * replay, and takes an event it sent before asking and not refused by the answer as stored,
   * so a refusal that came after the answer would leave a hole its resend skips.
   */
  private readonly writing = new Set<Promise<void>>();

  private constructor(
    private readonly engine: Engine,
    readonly node: string,
    private readonly history: NatsHistory,
    fabric: NatsFabric,
    private readonly replicas: number,
    private readonly faults: Faults,
  ) {
    this.fabric = fabric;
    this.bufferCap = history.bufferCap;
    this.path = `nats ${engine.servers.join(',')} (${engine.names.namespace}, node ${node})`;
  }

  static async open(opts: NatsStoreOptions): Promise<NatsStore> {
    const node = randomBytes(6).toString('hex');
    const log = opts.log ?? (() => {});
    const report = (err: Error) => log(`relay: nats: ${err.message}`);
    const bufferCap = opts.bufferCap ?? DEFAULT_BUFFER;
    const engine = await openEngine({ ...opts, bufferCap, connectionName: `aep-relay ${node}` });
    const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
    // The probe: the stream answers with a leader (a write would be taken).
    const faults = new Faults(log, async (stream) => {
      const name = stream === 'commands' ? engine.names.commandsStream : engine.names.eventsStream;
      const info = await engine.quick.probe.streams.info(name);
      if (info.cluster !== undefined && !info.cluster.leader) throw new Error('no leader');
    });
    const fabric = new NatsFabric(engine, node, leaseMs, report, faults, log);
    const sessionCap = opts.sessionCap ?? DEFAULT_MAX_SESSIONS;
    const history = new NatsHistory(
      engine,
      node,
      bufferCap,
      sessionCap,
      (line) => fabric.fanOut(line, 'stored'),
      report,
      faults,
      () => faults.offline(),
      log,
    );
    const store = new NatsStore(engine, node, history, fabric, engine.replicas, faults);
    try {
      await history.start();
      await fabric.start();
    } catch (err) {
      await store.close();
      if (err instanceof SteeringError) throw err;
      throw new SteeringError(
        'RELAY_UNREACHABLE',
        `JetStream at ${engine.servers.join(', ')} did not answer the relay's start: ${(err as Error).message}; check that every server runs with -js and the cluster has a leader`,
        { cause: err },
      );
    }
    store.watchStatus(log);
    // Counts are for /healthz: a failed refresh while the store is down is that outage, already said.
    const recountFailed = (err: Error) => {
      if (faults.reason() === undefined) report(new Error(`event count not refreshed: ${err.message}`));
    };
    store.timer = setInterval(() => void history.recount().catch(recountFailed), Math.max(1000, leaseMs));
    store.timer.unref();
    return store;
  }

  private watchStatus(log: (line: string) => void): void {
    void (async () => {
      for await (const s of this.engine.nc.status()) {
        if (s.type === 'disconnect') {
          this.connected = false;
          log(`relay: nats: disconnected from ${s.server}; reconnecting`);
          this.faults.lostConnection(s.server);
        } else if (s.type === 'reconnect') {
          this.connected = true;
          log(`relay: nats: reconnected to ${s.server}`);
          this.faults.reconnected();
          this.fabric.reconnected();
          this.history.reopen();
        }
      }
    })().catch(() => {});
  }

  admitAll(list: readonly Admission[]): Promise<boolean[]> {
    // A redelivery is not stored again, yet every node's subscribers get the copy (AEP-0003 §5).
    const p = this.history
      .admitAll(list, (a) => this.fabric.share(a.raw, a))
      .catch((err: Error) => {
        throw new StoreUnavailableError(describe(err), { cause: err });
      });
    // Registered before the caller's handlers, so a refusal reaches its sender before a read
    // waiting on this write answers.
    const settled = p.then(
      () => {},
      () => {},
    );
    this.writing.add(settled);
    void settled.then(() => this.writing.delete(settled));
    return p;
  }

  /**
   * Refused at once only while the connection is down. While writes fail with the connection up
   * (a leader lost until the cluster elects another) each write still tries, within its deadline,
   * so the first one after the election is taken.
   */
  unavailable(): string | undefined {
    return this.engine.nc.isClosed() ? 'the NATS connection is closed' : this.faults.offline();
  }

  replay(session: string, after?: Position): Promise<Replay> {
    // Refused at once while the store is down, not after a request timeout: an adapter learns
    // what the relay holds by a replay, and sends nothing (not even its claims) until answered.
    const read = (): Promise<Replay> => {
      const down = this.unavailable() ?? this.faults.reason('events');
      if (down !== undefined) return Promise.reject(new Error(down));
      return this.history.replay(session, after);
    };
    // Writes made before it settle first (each within the write deadline).
    return this.writing.size === 0 ? read() : Promise.all([...this.writing]).then(read);
  }

  holdsFrom(session: string, pos: Position): boolean {
    return this.history.holdsFrom(session, pos);
  }

  sessionIds(): string[] {
    return this.history.sessionIds();
  }

  counts(): { sessions: number; events: number } {
    return this.history.counts();
  }

  health(): StoreHealth {
    const nc = this.engine.nc;
    return {
      engine: 'nats-jetstream',
      ok: this.connected && !nc.isClosed() && this.faults.reason() === undefined,
      ...(this.faults.reason() === undefined ? {} : { reason: this.faults.reason() }),
      server: nc.getServer(),
      version: nc.info?.version,
      node: this.node,
      namespace: this.engine.names.namespace,
      replicas: this.replicas,
      ...this.fabric.state(),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    this.faults.stop();
    this.history.stop();
    await this.fabric.stop().catch(() => {});
    await this.engine.nc.drain().catch(() => this.engine.nc.close());
  }
}
