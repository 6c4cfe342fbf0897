// `aep-steer adapter <vendor>`: runs one vendor's adapter daemon. Parses flags (each with its
// environment variable, D16), connects to the relay without ever waiting on it, and starts the
// session runtime with the vendor's surface from the registry.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { tableFor, vendorTokens } from '../adapters/registry.js';
import { surfaceFrom, type SourceSpec, type SurfaceOptions, type VendorTable } from '../adapters/table.js';
import { readTokenFile } from '../consumer/connect.js';
import { ensureSecret } from '../adapters/install.js';
import { stateDir } from '../protocol/state-dir.js';
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
import type { AttachedLaneSpec } from '../adapters/lane-spec.js';
import type { NativeLane } from '../streams/lane.js';

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
  /** `--quiet`: no user-visible notice in delivering replies (D27). */
  quiet?: boolean;
  /** A URL, or false for `--no-relay` (commander sets true when only the negation is defined). */
  relay?: string | boolean;
  token?: string;
  inspect?: string | boolean;
  /** Turns on the vendor's opt-in held gate (AEP_VSCODE_CONTROL, AEP_HERMES_CONTROL). */
  control?: boolean;
  /** The gate's tool pattern (AEP_VSCODE_GATE_TOOLS, AEP_HERMES_GATE_TOOLS). */
  gateTools?: string;
  /** Connect the vendor's user-plane channel, observe-only (AEP_CLINE_HUB=1). */
  hub?: boolean;
  /** Also carry send_input, control.cancel and approvals over it (AEP_CLINE_HUB_CONTROL=1). */
  hubControl?: boolean;
  /** Where it is, instead of the vendor's discovery record (AEP_CLINE_HUB_URL, AEP_CLINE_HUB_TOKEN). */
  hubUrl?: string;
  hubToken?: string;
  /** A bridge vendor's server URL (AEP_OPENHANDS_URL). */
  server?: string;
  /** Its key (AEP_OPENHANDS_KEY). */
  serverKey?: string;
  /** Discovery interval in seconds (AEP_OPENHANDS_POLL). */
  poll?: string;
  /** Map streaming deltas (AEP_OPENHANDS_DELTAS). */
  deltas?: boolean;
  /** The vendor's native-lane daemon URL, e.g. `qwen serve` (AEP_QWEN_SERVE_URL, D30). */
  serve?: string;
  /** The mode-600 file holding its bearer token (AEP_QWEN_SERVE_TOKEN_FILE). */
  serveTokenFile?: string;
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
  userPlane?: { control: boolean; env: NodeJS.ProcessEnv };
  /** A bridge vendor's server connection (OpenHands); absent for hook vendors. */
  source?: { spec: SourceSpec; url: string; key?: string; pollMs: number; deltas: boolean };
  /** The vendor's native lane (D30): its daemon and token file; absent without `--serve`. */
  lane?: { spec: AttachedLaneSpec; url: string; tokenFile?: string };
}

/** Flags first, then the environment (D16), then the vendor's defaults. */
export function adapterConfig(token: string, f: AdapterFlags, env: NodeJS.ProcessEnv = process.env): AdapterConfig {
  const table = tableFor(token);
  if (table === undefined)
    throw new SteeringError('CONFIG_INVALID', `unknown vendor "${token}"; known: ${vendorTokens().join(', ')}`);
  // The opt-in held gate is the table's (D16: each variable has its flag); a vendor without one refuses both flags.
  const gate = table.control;
  if (gate === undefined && (f.control === true || f.gateTools !== undefined)) {
    throw new SteeringError(
      'CONFIG_INVALID',
      `${token} has no opt-in held gate: --control and --gate-tools apply to ${vendorTokens()
        .filter((t) => tableFor(t)?.control !== undefined)
        .join(', ')}`,
    );
  }
  if (gate !== undefined && gate.toolsEnv === undefined && f.gateTools !== undefined) {
    throw new SteeringError('CONFIG_INVALID', `${token}'s control gate holds no tools: --gate-tools does not apply`);
  }
  const control = f.control === true || (gate !== undefined && truthy(env[gate.env]));
  const gateTools = f.gateTools ?? (gate?.toolsEnv === undefined ? undefined : env[gate.toolsEnv]);
  const surfaceOpts: SurfaceOptions = { control };
  if (gateTools !== undefined && gateTools !== '') surfaceOpts.gateTools = gateTools;
  const surface = surfaceFrom(table, surfaceOpts);
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
    control,
  };
  if (surfaceOpts.gateTools !== undefined) cfg.gateTools = surfaceOpts.gateTools;
  // D30: the table's native lanes, made by runAdapter with this environment (the app-server's own).
  if (table.lanes !== undefined) cfg.laneEnv = env;
  const plane = table.userPlane;
  if (plane === undefined && (f.hub === true || f.hubControl === true)) {
    throw new SteeringError(
      'CONFIG_INVALID',
      `${token} has no user-plane channel: --hub and --hub-control apply to ${vendorTokens()
        .filter((t) => tableFor(t)?.userPlane !== undefined)
        .join(', ')}`,
    );
  }
  const hubControl = f.hubControl === true || (plane !== undefined && truthy(env[plane.controlEnv]));
  if (plane !== undefined && (hubControl || f.hub === true || truthy(env[plane.tapEnv]))) {
    // The flags win over the variables the channel reads (D16).
    const planeEnv = {
      ...env,
      ...(f.hubUrl ? { [plane.urlEnv]: f.hubUrl } : {}),
      ...(f.hubToken ? { [plane.tokenEnv]: f.hubToken } : {}),
    };
    cfg.userPlane = { control: hubControl, env: planeEnv };
  }
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
  const source = sourceConfig(table, token, f, env);
  if (source !== undefined) cfg.source = source;
  const lane = laneConfig(table, token, f, env);
  if (lane !== undefined) cfg.lane = lane;
  if (f.inspect !== undefined && f.inspect !== false) {
    cfg.inspectPort = f.inspect === true ? DEFAULT_INSPECT_PORT : integer('--inspect', f.inspect, 0, 65535);
  }
  return cfg;
}

/** Refuses anything but an http(s) URL, saying what it must be. */
function httpUrl(url: string, must: string): void {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new SteeringError('CONFIG_INVALID', `${must}, got "${url}"`);
  }
}

/** A bridge vendor's server settings; a hook vendor refuses the flags. */
function sourceConfig(
  table: VendorTable,
  token: string,
  f: AdapterFlags,
  env: NodeJS.ProcessEnv,
): AdapterConfig['source'] {
  const spec = table.source;
  if (spec === undefined) {
    if (f.server !== undefined || f.serverKey !== undefined || f.poll !== undefined || f.deltas === true) {
      const bridges = vendorTokens().filter((t) => tableFor(t)?.source !== undefined);
      throw new SteeringError(
        'CONFIG_INVALID',
        `${token} is observed through hooks: --server, --server-key, --poll and --deltas apply to ${bridges.join(', ')}`,
      );
    }
    return undefined;
  }
  const url = f.server ?? (env[spec.env.url] || spec.defaultUrl);
  httpUrl(url, `--server (${spec.env.url}) must be the agent server's http(s) URL`);
  const key = f.serverKey ?? (env[spec.env.key] || undefined);
  const poll = f.poll ?? (env[spec.env.poll] || String(spec.defaultPollSeconds));
  const seconds = Number(poll);
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
    throw new SteeringError(
      'CONFIG_INVALID',
      `--poll (${spec.env.poll}) must be seconds between 0 and 3600, got "${poll}"`,
    );
  return {
    spec,
    url,
    ...(key === undefined ? {} : { key }),
    pollMs: Math.round(seconds * 1000),
    deltas: f.deltas === true || truthy(env[spec.env.deltas]),
  };
}

const attachedLane = (table: VendorTable): AttachedLaneSpec | undefined =>
  table.lanes?.find((l): l is AttachedLaneSpec => l.joins === 'attached');

/** The native lane's daemon (D30); a vendor without one refuses the flags. */
function laneConfig(table: VendorTable, token: string, f: AdapterFlags, env: NodeJS.ProcessEnv): AdapterConfig['lane'] {
  const spec = attachedLane(table);
  if (spec === undefined) {
    if (f.serve !== undefined || f.serveTokenFile !== undefined) {
      const with_ = vendorTokens().filter((t) => {
        const other = tableFor(t);
        return other !== undefined && attachedLane(other) !== undefined;
      });
      throw new SteeringError(
        'CONFIG_INVALID',
        `${token} has no serve lane: --serve and --serve-token-file apply to ${with_.join(', ')}`,
      );
    }
    return undefined;
  }
  const url = f.serve ?? (env[spec.urlEnv] || undefined);
  const tokenFile = f.serveTokenFile ?? (env[spec.tokenFileEnv] || undefined);
  if (url === undefined) {
    if (tokenFile !== undefined)
      throw new SteeringError('CONFIG_INVALID', `--serve-token-file needs --serve (${spec.urlEnv}): the daemon's URL`);
    return undefined;
  }
  httpUrl(url, `--serve (${spec.urlEnv}) must be the daemon's http(s) URL, e.g. http://127.0.0.1:4170`);
  // Checked now (exists, mode 600, not empty) so a bad file stops the start; the lane re-reads it per call.
  if (tokenFile !== undefined) readTokenFile(tokenFile);
  return { spec, url, ...(tokenFile === undefined ? {} : { tokenFile }) };
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
  /** The native lanes handed to the adapter (D30). */
  lanes?: NativeLane[];
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
  // A bridge's control gate covers its send_input and its forwarded controls (D29), with what it supplies.
  const sendInput = source?.transport !== undefined;
  const control = source?.controller !== undefined;
  // D30: none of the table's lanes runs anything until `aep-steer run` opens it; a daemon lane
  // (`--serve`) is attached now.
  const made: NativeLane[] =
    cfg.laneEnv === undefined
      ? []
      : await Promise.all(
          (tableFor(cfg.surface.token)?.lanes ?? []).flatMap((l) =>
            l.joins === 'owned' ? [l.make(cfg.laneEnv!, stateDir(cfg.laneEnv))] : [],
          ),
        );
  const l = cfg.lane;
  const lane = await l?.spec.attach({
    url: l.url,
    ...(l.tokenFile === undefined ? {} : { tokenFile: l.tokenFile }),
    onError: report,
  });
  const lanes = lane === undefined ? made : [...made, lane];
  // With `say`, the link's outages are said once each (relay-status.ts), not once per retry.
  let status: RelayReporter | undefined;
  const relay =
    cfg.relayUrl === undefined
      ? undefined
      : connectRelay({
          url: cfg.relayUrl,
          agent: cfg.surface.token,
          accepts: [
            ...acceptsFor(cfg.surface, cfg.instruct, sendInput || cfg.userPlane?.control === true, control), // D5, D28
            // D33: a native lane that stops turns takes control.cancel under AEP_INSTRUCT.
            ...(cfg.instruct && cfg.surface.cancels !== true && lanes.some((l) => l.interrupt !== undefined)
              ? ['control.cancel']
              : []),
          ],
          // D31; D30: what a native lane adds while it reaches a session is honoured too (a hook
          // lane that declares none takes `moment` only).
          ...(cfg.instruct && (cfg.surface.deliveries !== undefined || lanes.some((l) => l.deliveries.length > 0))
            ? {
                deliveries: [
                  ...new Set([...(cfg.surface.deliveries ?? ['moment']), ...lanes.flatMap((l) => l.deliveries)]),
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
  const plane =
    cfg.userPlane === undefined
      ? undefined
      : await tableFor(cfg.surface.token)?.userPlane?.open(cfg.userPlane.env, report);
  if (plane !== undefined) {
    opts.transport = plane;
    opts.sendInput = cfg.userPlane?.control === true;
  }
  if (cfg.segmentBytes !== undefined) opts.segmentBytes = cfg.segmentBytes;
  if (cfg.keepSegments !== undefined) opts.keepSegments = cfg.keepSegments;
  if (seams?.logWrite !== undefined) opts.logWrite = seams.logWrite;
  if (relay !== undefined) opts.relay = relay;
  if (inspector !== undefined) opts.inspect = inspector.inspect;
  if (source !== undefined) {
    opts.arrivals$ = source.arrivals$;
    if (source.transport !== undefined) {
      opts.sendInput = true;
      opts.transport = source.transport;
    }
    if (source.controller !== undefined) {
      opts.control = true;
      opts.controller = source.controller;
    }
  }
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
    await plane?.close();
    await inspector?.stop();
    throw err;
  }
  status?.start();
  const running: RunningAdapter = {
    adapter,
    async close() {
      status?.stop();
      await source?.close();
      await adapter.close();
      await lane?.close();
      await plane?.close();
      await inspector?.stop();
    },
  };
  if (inspector !== undefined) running.inspector = inspector;
  if (relay !== undefined) running.relay = relay;
  if (lanes.length > 0) running.lanes = lanes;
  return running;
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
  program
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
    .option('--relay <url>', `relay WebSocket URL (AEP_RELAY; default ${DEFAULT_RELAY_URL})`)
    .option('--no-relay', 'run without a relay (events go to the log only)')
    .option(
      '--token <t>',
      'relay bearer token (AEP_TOKEN; default for a loopback relay: the local token in AEP_STATE_DIR/token)',
    )
    .option('--inspect [port]', `serve XState inspection on ws://127.0.0.1:<port> (default ${DEFAULT_INSPECT_PORT})`)
    .option(
      '--control',
      "turn on the vendor's opt-in gate: VS Code PreToolUse, Hermes pre_tool_call (AEP_VSCODE_CONTROL=1, AEP_HERMES_CONTROL=1; D13); OpenHands send_input, respond, pause, resume, interrupt (AEP_OPENHANDS_CONTROL=1; D29)",
    )
    .option(
      '--gate-tools <regex>',
      'hold only tools whose whole name matches (AEP_VSCODE_GATE_TOOLS, AEP_HERMES_GATE_TOOLS; default: every tool)',
    )
    .option('--hub', 'Cline: connect to the Cline hub, observe-only; hooks work without it (AEP_CLINE_HUB=1)')
    .option(
      '--hub-control',
      'Cline: also accept send_input, control.cancel and approval answers over the hub (AEP_CLINE_HUB_CONTROL=1, D28)',
    )
    .option(
      '--hub-url <url>',
      'Cline: the hub WebSocket instead of its discovery record (AEP_CLINE_HUB_URL; needs --hub-token)',
    )
    .option('--hub-token <t>', "Cline: the hub's authToken (AEP_CLINE_HUB_TOKEN)")
    .option(
      '--server <url>',
      'bridge vendors: the agent server to observe (AEP_OPENHANDS_URL; default http://127.0.0.1:8000)',
    )
    .option(
      '--server-key <key>',
      "bridge vendors: the server's session API key, one of its OH_SESSION_API_KEYS_* (AEP_OPENHANDS_KEY)",
    )
    .option('--poll <seconds>', 'bridge vendors: conversation discovery interval (AEP_OPENHANDS_POLL; default 15)')
    .option('--deltas', 'bridge vendors: map streaming deltas too (AEP_OPENHANDS_DELTAS=1)')
    .option(
      '--serve <url>',
      'Qwen Code: also steer the sessions a `qwen serve` daemon hosts, e.g. http://127.0.0.1:4170 (AEP_QWEN_SERVE_URL, D30)',
    )
    .option(
      '--serve-token-file <path>',
      "Qwen Code: the mode-600 file holding the daemon's --token / QWEN_SERVER_TOKEN (AEP_QWEN_SERVE_TOKEN_FILE)",
    )
    .action(async (token: string, flags: AdapterFlags) => {
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
        `  log ${cfg.logPath}; relay ${cfg.relayUrl ?? 'off'}; instruct ${cfg.instruct ? 'on' : 'off'}; resume window ${cfg.resumeWindowMs} ms; ttl ${cfg.ttlMs === undefined ? 'off' : `${cfg.ttlMs} ms`}${table?.control ? `; control ${cfg.control ? `on${cfg.gateTools ? ` (${cfg.gateTools})` : ''}` : 'off'}` : ''}`,
      );
      if (cfg.lane)
        out(
          `  ${cfg.lane.spec.name} lane ${cfg.lane.url}${cfg.lane.tokenFile ? ` (token ${cfg.lane.tokenFile})` : ''}`,
        );
      if (cfg.userPlane)
        out(`  ${table?.userPlane?.tapEnv ?? 'user plane'} on; send_input ${cfg.userPlane.control ? 'on' : 'off'}`);
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
