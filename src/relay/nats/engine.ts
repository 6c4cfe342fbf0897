// The connection to JetStream and what the relay keeps there, created on first start: the
// events stream (one ring per session and kind, `max_msgs_per_subject` = `AEP_BUFFER`), the
// commands stream (short-lived, each node reads its own subject) and the claims bucket (its
// bucket TTL is the lease, the 2.9 floor has no per-key TTL).
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  DiscardPolicy,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { SteeringError } from '../../protocol/errors.js';
import { names, type Names } from './subjects.js';

export interface NatsStoreOptions {
  /** `nats://host:port`, several comma-separated or as a list (`--nats`, `AEP_NATS`). */
  servers: string | string[];
  /** Prefix of every stream, bucket and subject (several relay fabrics on one engine). */
  namespace?: string;
  bufferCap?: number;
  sessionCap?: number;
  /** Stream, bucket and command-consumer replicas (`AEP_NATS_REPLICAS`); default the cluster size, at most 3. */
  replicas?: number;
  /** Claim and node lease (`AEP_NATS_LEASE_MS`): a dead node's claims lapse after it. */
  leaseMs?: number;
  /** `duplicate_window` of the events stream: admission dedupe by `(source, id)` within it. */
  dedupeWindowMs?: number;
  log?: (line: string) => void;
}

export interface Engine {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  kv: KV;
  names: Names;
  servers: string[];
  /** Replicas of every stream, the bucket and the durable consumers. */
  replicas: number;
  /**
   * The same connection with a short request timeout, for what is retried anyway (reopening a
   * feed, the health probe): a request sent while a stream has no leader is not answered when
   * one is elected, so a long timeout would add itself to the cluster's election time.
   */
  quick: { js: JetStreamClient; jsm: JetStreamManager; probe: JetStreamManager };
}

/** The health probe's request timeout (it repeats every quarter second while writes fail). */
const PROBE_REQUEST_MS = 750;

/** The request timeout of `Engine.quick`. */
const QUICK_REQUEST_MS = 1000;

/** The replicas a cluster allows: one per server it gossips, at most 3 (a single server: 1). */
function clusterReplicas(nc: NatsConnection, given: number): number {
  const info = nc.info;
  if (info?.cluster === undefined) return 1;
  return Math.min(3, Math.max(1, info.connect_urls?.length ?? 1, given));
}

export const DEFAULT_LEASE_MS = 10_000;
const DEFAULT_DEDUPE_WINDOW_MS = 10 * 60_000;
/** A forwarded command is read within moments or its sender retries; older ones are dead weight. */
const COMMAND_MAX_AGE_MS = 5 * 60_000;

function parseServers(servers: string | string[]): string[] {
  const list = (Array.isArray(servers) ? servers : servers.split(',')).map((s) => s.trim()).filter((s) => s !== '');
  if (list.length === 0)
    throw new SteeringError('CONFIG_INVALID', 'no NATS server given: pass --nats nats://host:4222[,nats://host2:4222]');
  for (const s of list) {
    if (!/^(nats|tls):\/\/[^/\s]+$|^[^/\s:]+:\d+$/.test(s))
      throw new SteeringError('CONFIG_INVALID', `not a NATS server address: "${s}" (use nats://host:port)`);
  }
  return list;
}

async function ensureStream(
  jsm: JetStreamManager,
  cfg: Partial<StreamConfig> & { name: string },
  log: (l: string) => void,
): Promise<void> {
  try {
    const info = await jsm.streams.info(cfg.name);
    const c = info.config;
    const ring = cfg.max_msgs_per_subject ?? c.max_msgs_per_subject;
    const replicas = cfg.num_replicas ?? c.num_replicas;
    if (
      c.max_msgs_per_subject !== ring ||
      c.duplicate_window !== (cfg.duplicate_window ?? c.duplicate_window) ||
      c.num_replicas !== replicas
    ) {
      await jsm.streams.update(cfg.name, {
        max_msgs_per_subject: ring,
        duplicate_window: cfg.duplicate_window ?? c.duplicate_window,
        num_replicas: replicas,
      });
      log(
        `relay: stream ${cfg.name} updated (per-session ring ${ring}, ${replicas} replica${replicas === 1 ? '' : 's'})`,
      );
    }
  } catch (err) {
    if (!/stream not found/i.test((err as Error).message)) throw err;
    await jsm.streams.add(cfg);
    log(`relay: stream ${cfg.name} created (${cfg.num_replicas} replica${cfg.num_replicas === 1 ? '' : 's'})`);
  }
}

/** Retries `f` while JetStream says it is not ready yet (no leader, no peers yet), up to `ms`. */
export async function untilReady<T>(f: () => Promise<T>, ms = 30_000): Promise<T> {
  const until = Date.now() + ms;
  for (let wait = 100; ; wait = Math.min(1000, wait * 2)) {
    try {
      return await f();
    } catch (err) {
      const m = (err as Error).message;
      if (
        Date.now() > until ||
        !/temporarily unavailable|no suitable peers|insufficient resources|timeout|no responders|not ready|not enabled|no leader/i.test(
          m,
        )
      )
        throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

export async function openEngine(opts: NatsStoreOptions & { connectionName: string }): Promise<Engine> {
  const log = opts.log ?? (() => {});
  const servers = parseServers(opts.servers);
  const n = names(opts.namespace);
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers,
      name: opts.connectionName,
      noEcho: true,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      timeout: 5000,
    });
  } catch (err) {
    throw new SteeringError(
      'RELAY_UNREACHABLE',
      `cannot reach NATS at ${servers.join(', ')}: ${(err as Error).message}; start nats-server -js or fix --nats`,
      { cause: err },
    );
  }
  // Given replicas count as asked; unset, the cluster's size decides (R3 on three servers).
  const replicas = opts.replicas ?? clusterReplicas(nc, servers.length);
  try {
    // A cluster that has just started elects its JetStream leader first: retry for a while, from
    // the manager's own account check on (it times out while no meta leader answers).
    const jsm = await untilReady(() => jetstreamManager(nc, { timeout: 10_000 }));
    await untilReady(() =>
      ensureStream(
        jsm,
        {
          name: n.eventsStream,
          subjects: [n.allEvents],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          discard: DiscardPolicy.Old,
          max_msgs_per_subject: opts.bufferCap,
          duplicate_window: nanos(opts.dedupeWindowMs ?? DEFAULT_DEDUPE_WINDOW_MS),
          num_replicas: replicas,
        },
        log,
      ),
    );
    await untilReady(() =>
      ensureStream(
        jsm,
        {
          name: n.commandsStream,
          subjects: [`${n.namespace}.cmd.>`],
          retention: RetentionPolicy.Limits,
          storage: StorageType.File,
          max_age: nanos(COMMAND_MAX_AGE_MS),
          max_msgs_per_subject: -1,
          duplicate_window: nanos(60_000),
          num_replicas: replicas,
        },
        log,
      ),
    );
    // A bucket made with fewer replicas gets more (its stream is `KV_<bucket>`).
    await untilReady(() =>
      jsm.streams.info(`KV_${n.claimsBucket}`).then(
        (info) =>
          info.config.num_replicas === replicas
            ? undefined
            : ensureStream(jsm, { name: `KV_${n.claimsBucket}`, num_replicas: replicas }, log),
        (err: Error) => {
          if (!/stream not found/i.test(err.message)) throw err;
        },
      ),
    );
    const kv = await untilReady(() =>
      new Kvm(nc).create(n.claimsBucket, { ttl: opts.leaseMs ?? DEFAULT_LEASE_MS, history: 1, replicas }),
    );
    const quick = {
      js: jetstream(nc, { timeout: QUICK_REQUEST_MS }),
      jsm: await jetstreamManager(nc, { timeout: QUICK_REQUEST_MS, checkAPI: false }),
      probe: await jetstreamManager(nc, { timeout: PROBE_REQUEST_MS, checkAPI: false }),
    };
    return { nc, js: jetstream(nc, { timeout: 10_000 }), jsm, kv, names: n, servers, replicas, quick };
  } catch (err) {
    await nc.close().catch(() => {});
    throw new SteeringError(
      'CONFIG_INVALID',
      `NATS at ${servers.join(', ')} has no usable JetStream: ${(err as Error).message} (run nats-server with -js; replicas ${replicas} need that many servers)`,
      { cause: err },
    );
  }
}
