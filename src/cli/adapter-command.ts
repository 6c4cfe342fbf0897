// `aep-steer adapter <vendor>`: runs one vendor's adapter daemon. Parses flags (each with its
// environment variable, D16), connects to the relay without ever waiting on it, and starts the
// session runtime with the vendor's surface from the registry. The flags only some vendors take
// are their tables' options (adapters/<vendor>/options.ts), registered and read generically.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { tableFor, vendorTables, vendorTokens } from '../adapters/registry.js';
import { optionFor, surfaceFrom } from '../adapters/surface-from.js';
import { adapterOptions, vendorSettings, type VendorSettings } from '../adapters/vendor-settings.js';
import { ensureSecret } from '../adapters/install.js';
import { loadPolicy } from '../adapters/risk-policy.js';
import { stateDir } from '../protocol/state-dir.js';
import { adapterKeyPath } from '../protocol/key-file.js';
import { describeOutage } from '../adapters/shim-trace.js';
import { SteeringError } from '../protocol/errors.js';
import { ensureLocalToken, isLoopbackUrl } from '../relay/local-token.js';
import { connectRelay } from '../relay/ws-connection.js';
import { archivedGenerations, readEventLog, segmentPath, type WriteFn } from '../streams/log.js';
import type { AepEvent } from '../protocol/envelope.js';
import { relayReporter, type RelayReporter } from './relay-status.js';
import { explainListenError } from '../services/port-holder.js';
import { acceptsFor, startAdapter, type AdapterHandle, type AdapterOptions } from '../streams/run.js';
import { createInspector, DEFAULT_INSPECT_PORT, type InspectorHandle } from '../streams/inspect.js';
import type { VendorSurface } from '../streams/surface.js';
import { steers, type Lane } from '../streams/lane.js';
import type { BridgeSource } from '../adapters/table.js';
import { adapterSpawner, collectRoots, spawnConfig, type SpawnConfig } from './adapter-spawn.js';

export const DEFAULT_RELAY_URL = 'ws://127.0.0.1:8787/socket';

export interface AdapterFlags {
  port?: string;
  secret?: string;
  log?: string;
  instruct?: boolean;
  attentionTimeoutMs?: string;
  instructTtlMs?: string;
  logSegmentBytes?: string;
  logKeepSegments?: string;
  resumeWindowMs?: string;
  /** `--policy FILE`: D48 risk rules added to the built-in ones. */
  policy?: string;
  /** `--quiet`: no user-visible notice in delivering replies (D27). */
  quiet?: boolean;
  /** A URL, or false for `--no-relay` (commander sets true when only the negation is defined). */
  relay?: string | boolean;
  token?: string;
  inspect?: string | boolean;
  /** D45: `--spawn-root` (repeatable: the roots joined by NUL, which no path holds) and `--max-spawned`. */
  spawnRoot?: string;
  maxSpawned?: string;
  /** A vendor's own options (its table's `options`), by commander's property name (`hubUrl`). */
  [vendorOption: string]: string | boolean | undefined;
}

const truthy = (v: string | undefined): boolean => v === '1' || v === 'true' || v === 'yes';

function integer(name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new SteeringError('CONFIG_INVALID', `${name} must be an integer ${min}-${max}, got "${v}"`);
  return n;
}

export interface AdapterConfig {
  surface: VendorSurface;
  port: number;
  secret: string;
  logPath: string;
  /** D30: the environment the vendor's native lanes run with; absent: the vendor has none. */
  laneEnv?: NodeJS.ProcessEnv;
  /** Where the hook secret lives and the shims leave their trace of hooks that failed open. */
  stateDir?: string;
  /** D24: active log size that triggers a snapshot and a new segment. */
  segmentBytes?: number;
  /** D24: archived segments kept once covered (Infinity keeps all). */
  keepSegments?: number;
  instruct: boolean;
  attentionTimeoutMs: number;
  ttlMs?: number;
  /** D25 resume window after the end moment (0: none). */
  resumeWindowMs: number;
  /** D27: delivering replies also tell the user, where the vendor has a field for it. */
  notice: boolean;
  relayUrl?: string;
  token?: string;
  inspectPort?: number;
  /** The vendor's opt-in held gate is on (its held loops, and `control.attention.respond` in the hello). */
  control: boolean;
  gateTools?: string;
  /** The vendor's user-plane channel (Cline hub): connect it, and whether its verbs are on. */
  userPlane?: VendorSettings['userPlane'];
  /** A bridge vendor's server connection (OpenHands); absent for hook vendors. */
  source?: VendorSettings['source'];
  /** The vendor's attached native lane (D30): its daemon and token file; absent until its URL is given. */
  lane?: VendorSettings['lane'];
  /** D45: the spawn roots and cap; absent: spawning is off. */
  spawn?: SpawnConfig;
}

/** Flags first, then the environment (D16), then the vendor's defaults. */
export function adapterConfig(token: string, f: AdapterFlags, env: NodeJS.ProcessEnv = process.env): AdapterConfig {
  const table = tableFor(token);
  if (table === undefined)
    throw new SteeringError('CONFIG_INVALID', `unknown vendor "${token}"; known: ${vendorTokens().join(', ')}`);
  // The vendor's own options (D16: each with its variable); a flag of another vendor's is refused.
  const vendor = vendorSettings(table, f, env, [...vendorTables.values()]);
  // D48: the rules that mark a request risky; a bad file stops the start with what is wrong.
  const policyFile = f.policy ?? (env.AEP_POLICY || undefined);
  const policy = typeof policyFile === 'string' ? loadPolicy(policyFile) : undefined;
  const surface = surfaceFrom(table, policy === undefined ? vendor.gate : { ...vendor.gate, policy });
  const port = integer('--port', f.port ?? (env.AEP_HOOK_PORT || undefined) ?? String(surface.port), 0, 65535);
  const { secret } = ensureSecret(f.secret, env);
  const attention = f.attentionTimeoutMs ?? (env.AEP_ATTENTION_TIMEOUT_MS || undefined);
  const ttl =
    f.instructTtlMs ??
    (env.AEP_INSTRUCT_TTL_MS || undefined) ??
    (surface.instructTtlMs === undefined ? undefined : String(surface.instructTtlMs));
  const window = f.resumeWindowMs ?? (env.AEP_RESUME_WINDOW_MS || undefined);
  const relay =
    f.relay === false ? undefined : typeof f.relay === 'string' ? f.relay : env.AEP_RELAY || DEFAULT_RELAY_URL;
  const cfg: AdapterConfig = {
    surface,
    port,
    secret,
    stateDir: stateDir(env),
    logPath: f.log ?? (env.AEP_LOG || undefined) ?? join(stateDir(env), 'logs', `${token}.jsonl`),
    instruct: f.instruct === true || truthy(env.AEP_INSTRUCT),
    attentionTimeoutMs:
      attention === undefined ? surface.attentionTimeoutMs : integer('--attention-timeout-ms', attention, 1),
    resumeWindowMs:
      window === undefined || window === '' ? (surface.resumeWindowMs ?? 0) : integer('--resume-window-ms', window, 0),
    notice: !(f.quiet === true || truthy(env.AEP_QUIET)),
    control: vendor.gate.control === true,
  };
  if (vendor.gate.gateTools !== undefined) cfg.gateTools = vendor.gate.gateTools;
  // D30: the table's native lanes, made by runAdapter with this environment (the app-server's own).
  if (table.lanes !== undefined) cfg.laneEnv = env;
  const spawn = spawnConfig(token, f.spawnRoot, f.maxSpawned, env);
  if (spawn !== undefined) cfg.spawn = spawn;
  if (vendor.userPlane !== undefined) cfg.userPlane = vendor.userPlane;
  if (ttl !== undefined && ttl !== '' && ttl !== '0') cfg.ttlMs = integer('--instruct-ttl-ms', ttl, 1);
  const seg = f.logSegmentBytes ?? (env.AEP_LOG_SEGMENT_BYTES || undefined);
  if (seg !== undefined) cfg.segmentBytes = integer('--log-segment-bytes', seg, 4096);
  const keep = f.logKeepSegments ?? (env.AEP_LOG_KEEP_SEGMENTS || undefined);
  if (keep !== undefined) cfg.keepSegments = keep === 'all' ? Infinity : integer('--log-keep-segments', keep, 0);
  if (relay !== undefined && relay !== '') cfg.relayUrl = relay;
  const tok = f.token || env.AEP_TOKEN || undefined;
  if (tok !== undefined) cfg.token = tok;
  // Zero-config: a loopback relay shares the local token (whichever of the two starts first creates it).
  else if (cfg.relayUrl !== undefined && isLoopbackUrl(cfg.relayUrl)) cfg.token = ensureLocalToken(env).token;
  if (vendor.source !== undefined) cfg.source = vendor.source;
  if (vendor.lane !== undefined) cfg.lane = vendor.lane;
  if (f.inspect !== undefined && f.inspect !== false) {
    cfg.inspectPort = f.inspect === true ? DEFAULT_INSPECT_PORT : integer('--inspect', f.inspect, 0, 65535);
  }
  return cfg;
}

/**
 * Every event the log still keeps (archived segments, then the active file): where a bridge
 * resumes each conversation after a restart. A conversation whose events all aged out of the kept
 * segments (D24) is read again from its start.
 */
function keptEvents(path: string): AepEvent[] {
  const gens = archivedGenerations(path, (dir) => (existsSync(dir) ? readdirSync(dir) : []));
  const records = [...gens.flatMap((g) => readEventLog(segmentPath(path, g)).records), ...readEventLog(path).records];
  return records.flatMap((r) => (r.k === 'ev' ? [r.e] : []));
}

export interface RunningAdapter {
  adapter: AdapterHandle;
  /** The relay link, when there is one: whether it completed its handshake (`connected`). */
  relay?: { readonly connected: boolean };
  inspector?: InspectorHandle;
  /** The lanes handed to the adapter (D28–D30). */
  lanes?: Lane[];
  close(): Promise<void>;
}

/** Starts the adapter for a config; the relay link reconnects on its own and never blocks a hook. */
/**
 * Starts the adapter for a config; the relay link reconnects on its own and never blocks a hook.
 * `say` gets one line each time the relay link comes up, goes down or comes back.
 */
export async function runAdapter(
  cfg: AdapterConfig,
  onError?: (e: SteeringError) => void,
  say?: (line: string) => void,
  seams?: AdapterSeams,
): Promise<RunningAdapter> {
  const report =
    onError ?? ((e: SteeringError) => process.stderr.write(`aep-steer adapter: ${e.code}: ${e.message}\n`));
  const inspector = cfg.inspectPort === undefined ? undefined : await createInspector({ port: cfg.inspectPort });
  const s = cfg.source;
  const history = s === undefined ? [] : keptEvents(cfg.logPath);
  const source = s?.spec.start({
    url: s.url,
    ...(s.key === undefined ? {} : { key: s.key }),
    pollMs: s.pollMs,
    deltas: s.deltas,
    control: cfg.control,
    history,
    onError: report,
  });
  const { steering, lanes, sendInput, control } = await adapterLanes(cfg, source, report);
  const token = cfg.surface.token;
  const spawner = cfg.spawn && cfg.laneEnv && (await adapterSpawner(token, cfg.spawn, cfg.laneEnv, steering));
  // With `say`, the link's outages are said once each (relay-status.ts), not once per retry.
  let status: RelayReporter | undefined;
  const relay =
    cfg.relayUrl === undefined
      ? undefined
      : connectRelay({
          url: cfg.relayUrl,
          agent: cfg.surface.token,
          accepts: [
            ...new Set([
              ...acceptsFor(cfg.surface, cfg.instruct, sendInput, control), // D5, D28
              // D33: a native lane that stops turns takes control.cancel under AEP_INSTRUCT.
              ...(cfg.instruct && cfg.surface.cancels !== true && steering.some((l) => l.interrupt !== undefined)
                ? ['control.cancel']
                : []),
              // A steering lane that raises approvals of its own (opencode's server) takes their answers.
              ...(cfg.surface.holds !== true && steering.some((l) => l.answer !== undefined)
                ? ['control.attention.respond']
                : []),
              ...(spawner ? [`x.${token}.control.spawn`] : []), // D45: to the home session
              ...(spawner ? ['control.cancel'] : []), // D45: a worker's stop is a cancel of its whole session
            ]),
          ],
          // D31; D30: what a native lane adds while it reaches a session is honoured too (a hook
          // lane that declares none takes `moment` only).
          ...(cfg.instruct && (cfg.surface.deliveries !== undefined || steering.some((l) => l.deliveries.length > 0))
            ? {
                deliveries: [
                  ...new Set([...(cfg.surface.deliveries ?? ['moment']), ...steering.flatMap((l) => l.deliveries)]),
                ],
              }
            : {}),
          onError: say === undefined ? report : (e) => status?.onLinkError(e),
          ...(cfg.token === undefined ? {} : { token: cfg.token }),
        });
  if (relay !== undefined && say !== undefined) status = relayReporter(cfg.relayUrl!, relay.state$, say, report);
  const opts: AdapterOptions = {
    surface: cfg.surface,
    port: cfg.port,
    secret: cfg.secret,
    logPath: cfg.logPath,
    instruct: cfg.instruct,
    attentionTimeoutMs: cfg.attentionTimeoutMs,
    resumeWindowMs: cfg.resumeWindowMs,
    notice: cfg.notice,
    onError: report,
    ...(lanes.length === 0 ? {} : { lanes }),
  };
  if (cfg.ttlMs !== undefined) opts.ttlMs = cfg.ttlMs;
  if (sendInput) opts.sendInput = true;
  if (control) opts.control = true;
  if (cfg.segmentBytes !== undefined) opts.segmentBytes = cfg.segmentBytes;
  if (cfg.keepSegments !== undefined) opts.keepSegments = cfg.keepSegments;
  // D47: the adapter's own key signs its log's generation heads, so compaction leaves a vouched start.
  if (cfg.stateDir !== undefined) opts.signingKey = adapterKeyPath({ AEP_STATE_DIR: cfg.stateDir });
  if (seams?.logWrite !== undefined) opts.logWrite = seams.logWrite;
  if (relay !== undefined) opts.relay = relay;
  if (spawner) opts.spawner = spawner;
  if (inspector !== undefined) opts.inspect = inspector.inspect;
  if (source !== undefined) opts.arrivals$ = source.arrivals$;
  // `/healthz` names the relay link's state (`aep-steer status`, and `up` waits for it).
  opts.health = () => ({
    relay: relay === undefined ? 'off' : relay.connected ? 'connected' : 'connecting',
    ...source?.health(),
  });
  // Hooks that failed open before this start went unsteered: say so once (the next delivered hook clears it).
  const missed = cfg.stateDir === undefined ? undefined : describeOutage(cfg.stateDir);
  if (missed !== undefined) say?.(`aep-steer adapter: before this start ${missed}`);
  let adapter: AdapterHandle;
  try {
    adapter = await startAdapter(opts);
  } catch (err) {
    status?.stop();
    for (const x of lanes) await x.close();
    await source?.close();
    await relay?.close();
    await inspector?.stop();
    throw err;
  }
  status?.start();
  const running: RunningAdapter = {
    adapter,
    async close() {
      status?.stop();
      await source?.close();
      // The adapter closes every lane it was handed.
      await adapter.close();
      await inspector?.stop();
    },
  };
  if (inspector !== undefined) running.inspector = inspector;
  if (relay !== undefined) running.relay = relay;
  if (lanes.length > 0) running.lanes = lanes;
  return running;
}

/**
 * The adapter's lanes: the table's own (none runs anything until `aep-steer run` opens it, D30), a
 * daemon lane named by the vendor's `lane-url` option, and the vendor's user-plane channel: a
 * bridge's (its control gate covers send_input and the forwarded controls, D29), or one the table
 * opens beside the hooks (the Cline hub, D28).
 */
async function adapterLanes(cfg: AdapterConfig, source: BridgeSource | undefined, report: (e: SteeringError) => void) {
  const made: Lane[] =
    cfg.laneEnv === undefined
      ? []
      : await Promise.all(
          (tableFor(cfg.surface.token)?.lanes ?? []).flatMap((l) =>
            l.joins === 'owned' ? [l.make(cfg.laneEnv!, stateDir(cfg.laneEnv))] : [],
          ),
        );
  const l = cfg.lane;
  const attached = await l?.spec.attach({
    url: l.url,
    ...(l.tokenFile === undefined ? {} : { tokenFile: l.tokenFile }),
    onError: report,
  });
  // D45: an adapter that spawns on an attached lane (qwen serve) follows its workers' daemons beside it.
  const hosts = tableFor(cfg.surface.token)?.lanes?.find((s) => s.joins === 'attached' && s.hosts !== undefined);
  const lane = cfg.spawn !== undefined && hosts?.joins === 'attached' ? await hosts.hosts!(attached, report) : attached;
  // A bridge whose lane steers turns (opencode's server, D50) adds a steering lane, not a user-plane channel.
  const own = source?.lane !== undefined && steers(source.lane) ? source.lane : undefined;
  const plane =
    (own === undefined ? source?.lane : undefined) ??
    (cfg.userPlane === undefined
      ? undefined
      : await tableFor(cfg.surface.token)?.userPlane?.open(cfg.userPlane.env, report, (line) =>
          process.stderr.write(`aep-steer adapter: ${line}\n`),
        ));
  const steering = [...made, ...(lane === undefined ? [] : [lane]), ...(own === undefined ? [] : [own])];
  const bridged = own === undefined && source?.lane !== undefined;
  return {
    steering,
    lanes: plane === undefined ? steering : [...steering, plane],
    sendInput: bridged || (plane !== undefined && cfg.userPlane?.control === true),
    control: bridged,
  };
}

/**
 * What only a test entry passes in (test/support/adapter-cli-entry.ts); the shipped CLI passes
 * nothing here and reads no environment for it.
 */
export interface AdapterSeams {
  /** How log bytes reach the file: the fault suite's full disk where no tmpfs can be mounted. */
  logWrite?: WriteFn;
}

export function registerAdapter(program: Command, seams?: AdapterSeams): void {
  const command = program
    .command('adapter')
    .description('run a vendor adapter: hook endpoint on 127.0.0.1, session runtime, relay link')
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')})`)
    .option('--port <n>', "hook port on 127.0.0.1, 0 for any free one (AEP_HOOK_PORT; default: the vendor's, D15)")
    .option('--secret <s>', 'hook URL secret (default: the stored one, generated once; AEP_STATE_DIR)')
    .option('--log <file>', "the adapter's event log (AEP_LOG; default AEP_STATE_DIR/logs/<vendor>.jsonl)")
    .option('--instruct', 'accept x.<vendor>.control.instruct (AEP_INSTRUCT=1, D5)')
    .option('--attention-timeout-ms <ms>', 'held-loop timeout (AEP_ATTENTION_TIMEOUT_MS, D14)')
    .option(
      '--log-segment-bytes <n>',
      'snapshot the sessions and start a new log segment past this size (AEP_LOG_SEGMENT_BYTES, D24; default 16 MiB)',
    )
    .option(
      '--log-keep-segments <n|all>',
      'archived log segments kept once a snapshot covers them (AEP_LOG_KEEP_SEGMENTS, D24; default 2)',
    )
    .option(
      '--instruct-ttl-ms <ms>',
      "drop instructions queued longer than this, 0 for never (AEP_INSTRUCT_TTL_MS, D10; default: the vendor's, D26)",
    )
    .option(
      '--resume-window-ms <ms>',
      "after the end moment, keep the queue this long for a resumed run (AEP_RESUME_WINDOW_MS, D25; default: the vendor's)",
    )
    .option('--quiet', 'do not tell the user at the agent that an instruction arrived (AEP_QUIET=1, D27)')
    .option(
      '--policy <file>',
      'JSON rules that mark held requests risky, added to the built-in ones; a risky remote allow needs two identities (AEP_POLICY, D48)',
    )
    .option(
      '--spawn-root <dir>',
      'let spawns start sessions under this directory (repeatable; AEP_SPAWN_ROOT, roots joined by the path separator; none: spawn off, D45)',
      collectRoots,
    )
    .option('--max-spawned <n>', 'spawned sessions running at once (AEP_MAX_SPAWNED, D45; default 4)')
    .option('--relay <url>', `relay WebSocket URL (AEP_RELAY; default ${DEFAULT_RELAY_URL})`)
    .option('--no-relay', 'run without a relay (events go to the log only)')
    .option(
      '--token <t>',
      'relay bearer token (AEP_TOKEN; default for a loopback relay: the local token in AEP_STATE_DIR/token)',
    )
    .option('--inspect [port]', `serve XState inspection on ws://127.0.0.1:<port> (default ${DEFAULT_INSPECT_PORT})`);
  // Each vendor's own flags, as its folder declares them (adapters/<vendor>/options.ts).
  for (const o of adapterOptions([...vendorTables.values()])) command.option(o.flag, o.help);
  command.action(async (token: string, flags: AdapterFlags) => {
    const cfg = adapterConfig(token, flags);
    const out = (line: string) => process.stderr.write(`${line}\n`);
    const running = await runAdapter(cfg, undefined, out, seams).catch((err: unknown) => {
      throw explainListenError(
        err,
        cfg.source ? 'health port' : 'hook port',
        cfg.port,
        '127.0.0.1',
        '--port (AEP_HOOK_PORT)',
      );
    });
    const table = tableFor(token);
    out(
      cfg.source
        ? `aep-steer adapter ${token}${table ? ` (${table.version})` : ''}: observing ${cfg.source.url}; health on http://127.0.0.1:${running.adapter.port}/healthz`
        : `aep-steer adapter ${token}${table ? ` (${table.version})` : ''}: hooks on http://127.0.0.1:${running.adapter.port}/hook/<secret>`,
    );
    out(
      `  log ${cfg.logPath}; relay ${cfg.relayUrl ?? 'off'}; instruct ${cfg.instruct ? 'on' : 'off'}; resume window ${cfg.resumeWindowMs} ms; ttl ${cfg.ttlMs === undefined ? 'off' : `${cfg.ttlMs} ms`}${table && optionFor(table, 'gate') ? `; control ${cfg.control ? `on${cfg.gateTools ? ` (${cfg.gateTools})` : ''}` : 'off'}` : ''}`,
    );
    if (cfg.lane)
      out(`  ${cfg.lane.spec.name} lane ${cfg.lane.url}${cfg.lane.tokenFile ? ` (token ${cfg.lane.tokenFile})` : ''}`);
    if (cfg.userPlane)
      out(
        `  ${(table && optionFor(table, 'user-plane')?.env) ?? 'user plane'} on; send_input ${cfg.userPlane.control ? 'on' : 'off'}`,
      );
    if (running.inspector) out(`  inspect ${running.inspector.url}`);
    const stop = () => {
      setTimeout(() => process.exit(1), 5000).unref();
      running.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
