// `aep-steer relay`: parses flags and environment, starts the relay, stops it on a signal.
import { join } from 'node:path';
import type { Command } from 'commander';
import { stateDir } from '../protocol/state-dir.js';
import { SteeringError } from '../protocol/errors.js';
import { loadTokensFile } from '../relay/acl.js';
import { DEFAULT_CLAIM_LEASE_MS } from '../relay/claims.js';
import { parseAllowedOrigins } from '../relay/origin.js';
import { DEFAULT_HOST, DEFAULT_PORT, startRelay, type RelayOptions } from '../relay/server.js';
import { ensureLocalToken } from '../relay/local-token.js';
import { defaultSigningKeyPath } from '../relay/signing-key.js';
import { DEFAULT_BUFFER, DEFAULT_MAX_SESSIONS } from '../relay/store.js';
import { DEFAULT_LEASE_MS, type NatsStoreOptions } from '../relay/nats/engine.js';
import { NatsStore } from '../relay/nats/store.js';
import { explainListenError } from '../services/port-holder.js';
import { exitOnSignal } from './exit-on-signal.js';

/** `AEP_STATE_DIR/relay.db`, beside the local token and the adapters' logs. */
export const defaultStore = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'relay.db');

interface RelayFlags {
  host: string;
  port: string;
  /** A token, or false for `--no-token` (watch-only). */
  token?: string | false;
  tokens?: string;
  store: string;
  memory?: boolean;
  buffer: string;
  maxSessions: string;
  maxBody?: string;
  maxBatch?: string;
  allowOrigin?: string[];
  allowHost?: string[];
  claimLease?: string;
  nats?: string;
  natsReplicas?: string;
  natsLeaseMs?: string;
  natsNamespace?: string;
  signingKey?: string;
}

/** D21: an empty environment variable counts as unset (`AEP_HOST=` never binds all interfaces). */
const envOf = (env: NodeJS.ProcessEnv, name: string): string | undefined => (env[name] === '' ? undefined : env[name]);
const listOf = (v: string | undefined): string[] =>
  (v ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
const collect = (v: string, prev: string[] = []): string[] => [...prev, ...listOf(v)];

function count(name: string, v: string, min: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new SteeringError('CONFIG_INVALID', `${name} must be an integer >= ${min}, got "${v}"`);
  return n;
}

/** Turns flags (which already fell back to the environment) into relay options. */
export function relayOptions(f: RelayFlags): RelayOptions {
  const o: RelayOptions = {
    host: f.host === '' ? DEFAULT_HOST : f.host,
    port: count('--port', f.port, 0),
    storePath: f.memory ? ':memory:' : f.store,
    bufferCap: count('--buffer', f.buffer, 1),
    sessionCap: count('--max-sessions', f.maxSessions, 1),
    limits: {},
  };
  if (typeof f.token === 'string' && f.token !== '') o.token = f.token;
  if (f.tokens !== undefined && f.tokens !== '') {
    o.tokens = loadTokensFile(f.tokens);
    // D39: read again on change and on SIGHUP.
    o.tokensFile = f.tokens;
  }
  if (f.maxBody !== undefined) o.limits!.maxBody = count('--max-body', f.maxBody, 1);
  if (f.maxBatch !== undefined) o.limits!.maxBatch = count('--max-batch', f.maxBatch, 1);
  if (f.allowOrigin !== undefined && f.allowOrigin.length > 0) o.allowOrigins = parseAllowedOrigins(f.allowOrigin);
  if (f.allowHost !== undefined && f.allowHost.length > 0) o.allowHosts = f.allowHost;
  if (f.claimLease !== undefined) o.claimLeaseMs = count('--claim-lease-ms', f.claimLease, 0);
  return o;
}

/**
 * `--nats` given: the JetStream store's options (history, claims and routing in the engine), else undefined (SQLite).
 */
export function natsOptions(f: RelayFlags, o: RelayOptions): NatsStoreOptions | undefined {
  if (f.nats === undefined || f.nats.trim() === '') return undefined;
  const n: NatsStoreOptions = {
    servers: f.nats,
    namespace: f.natsNamespace ?? 'aep',
    leaseMs: count('--nats-lease-ms', f.natsLeaseMs ?? String(DEFAULT_LEASE_MS), 300),
  };
  // Unset: as many as the cluster has servers, up to 3 (D38).
  if (f.natsReplicas !== undefined) n.replicas = count('--nats-replicas', f.natsReplicas, 1);
  if (o.bufferCap !== undefined) n.bufferCap = o.bufferCap;
  if (o.sessionCap !== undefined) n.sessionCap = o.sessionCap;
  return n;
}

/**
 * Zero-config local use: without `--token`, a tokens file or `--no-token`, the relay uses the local
 * token, created on first start (mode 600) where local adapters and consumer commands find it.
 */
export function withLocalToken(
  o: RelayOptions,
  f: Pick<RelayFlags, 'token'>,
  env: NodeJS.ProcessEnv = process.env,
): { options: RelayOptions; note?: string } {
  if (o.token !== undefined || o.tokens !== undefined || f.token === false) return { options: o };
  const local = ensureLocalToken(env);
  return {
    options: { ...o, token: local.token },
    note: `relay: local token ${local.created ? 'created in' : 'read from'} ${local.path} (adapters and commands on this machine use it)`,
  };
}

export function registerRelay(program: Command): void {
  const env = process.env;
  program
    .command('relay')
    .description('Run the AEP relay: HTTP ingest, SSE and WebSocket fan-out, command routing to one claimant (D17)')
    .option('--host <host>', 'bind address (AEP_HOST)', envOf(env, 'AEP_HOST') ?? DEFAULT_HOST)
    .option('--port <port>', 'port, 0 for any free one (AEP_PORT)', envOf(env, 'AEP_PORT') ?? String(DEFAULT_PORT))
    .option(
      '--token <token>',
      'shared bearer token with full control rights (AEP_TOKEN; default: the local token in AEP_STATE_DIR/token, created on first start)',
      envOf(env, 'AEP_TOKEN'),
    )
    .option('--no-token', 'no token at all: the relay is watch-only and refuses every command')
    .option(
      '--tokens <file>',
      'tokens file (mode 600) mapping tokens to identities, command, emit and capture rights (AEP_TOKENS_FILE, D18–D20)',
      envOf(env, 'AEP_TOKENS_FILE'),
    )
    .option(
      '--store <file>',
      'SQLite history file (AEP_STORE; default AEP_STATE_DIR/relay.db)',
      envOf(env, 'AEP_STORE') ?? defaultStore(env),
    )
    .option('--memory', 'keep history in memory only (nothing survives a restart)')
    .option('--buffer <n>', 'events kept per session (AEP_BUFFER)', envOf(env, 'AEP_BUFFER') ?? String(DEFAULT_BUFFER))
    .option(
      '--max-sessions <n>',
      'sessions kept; least recently written evicted (AEP_MAX_SESSIONS)',
      envOf(env, 'AEP_MAX_SESSIONS') ?? String(DEFAULT_MAX_SESSIONS),
    )
    .option('--max-body <bytes>', 'ingest body cap (AEP_MAX_BODY, default 16 MiB)', envOf(env, 'AEP_MAX_BODY'))
    .option('--max-batch <n>', 'events per NDJSON POST (AEP_MAX_BATCH, default 10000)', envOf(env, 'AEP_MAX_BATCH'))
    .option(
      '--allow-origin <origin>',
      'a browser origin allowed to connect, repeatable or comma-separated (AEP_ALLOW_ORIGIN; default none, D21)',
      collect,
      listOf(envOf(env, 'AEP_ALLOW_ORIGIN')),
    )
    .option(
      '--allow-host <name>',
      'a Host name served besides IP literals, localhost and --host, repeatable (AEP_ALLOW_HOST, D21)',
      collect,
      listOf(envOf(env, 'AEP_ALLOW_HOST')),
    )
    .option(
      '--claim-lease-ms <ms>',
      `how long a closed claimant's sessions stay closed to other identities (AEP_CLAIM_LEASE_MS, default ${DEFAULT_CLAIM_LEASE_MS}, D19)`,
      envOf(env, 'AEP_CLAIM_LEASE_MS'),
    )
    .option(
      '--nats <urls>',
      'keep history, claims and routing in NATS JetStream instead of SQLite: nats://host:4222[,...] (AEP_NATS); run several relays on one',
      envOf(env, 'AEP_NATS'),
    )
    .option(
      '--nats-replicas <n>',
      'replicas of the streams, claims bucket and command consumers (AEP_NATS_REPLICAS; default the cluster size, at most 3)',
      envOf(env, 'AEP_NATS_REPLICAS'),
    )
    .option(
      '--nats-lease-ms <ms>',
      "node lease: a dead relay node's claims lapse after it (AEP_NATS_LEASE_MS)",
      envOf(env, 'AEP_NATS_LEASE_MS') ?? String(DEFAULT_LEASE_MS),
    )
    .option(
      '--nats-namespace <name>',
      'prefix of the streams, bucket and subjects (AEP_NATS_NAMESPACE)',
      envOf(env, 'AEP_NATS_NAMESPACE') ?? 'aep',
    )
    .option(
      '--signing-key <file>',
      "Ed25519 key (PEM, mode 600) that signs the history's chain checkpoints (AEP_SIGNING_KEY; default AEP_STATE_DIR/relay-signing-key.pem, made on first start, D47)",
      envOf(env, 'AEP_SIGNING_KEY'),
    )
    .action(async (flags: RelayFlags) => {
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const { options, note } = withLocalToken(relayOptions(flags), flags);
      if (note !== undefined) log(note);
      const nats = natsOptions(flags, options);
      // D47: a kept history is signed; a memory one ends with the process and has no one to show it to.
      if (flags.signingKey !== undefined || (!flags.memory && !nats))
        options.signingKey = flags.signingKey ?? defaultSigningKeyPath(env);
      if (nats) options.store = await NatsStore.open({ ...nats, log });
      const relay = await startRelay({ ...options, log, reloadSignal: 'SIGHUP' }).catch((err: unknown) => {
        throw explainListenError(
          err,
          'relay port',
          options.port ?? DEFAULT_PORT,
          options.host ?? DEFAULT_HOST,
          '--port (AEP_PORT)',
        );
      });
      log(`relay: socket ${relay.socketUrl}`);
      // Graceful: SSE `: shutting-down`, WS close 1001, exit 0; forced exit 1 after 5 s.
      exitOnSignal(() => relay.close(), 5000);
    });
}
