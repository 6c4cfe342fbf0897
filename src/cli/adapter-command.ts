// `aep-steer adapter <vendor>`: runs one vendor's adapter daemon. Parses flags (each with its
// environment variable, D16), connects to the relay without ever waiting on it, and starts the
// session runtime with the vendor's surface from the registry.
import { join } from 'node:path';
import type { Command } from 'commander';
import { tableFor, vendorTokens } from '../adapters/registry.js';
import { surfaceFrom, type SurfaceOptions } from '../adapters/table.js';
import { ensureSecret, stateDir } from '../adapters/install.js';
import { SteeringError } from '../protocol/errors.js';
import { connectRelay } from '../relay/ws-connection.js';
import { acceptsFor, startAdapter, type AdapterHandle, type AdapterOptions } from '../streams/run.js';
import { createInspector, DEFAULT_INSPECT_PORT, type InspectorHandle } from '../streams/inspect.js';
import type { VendorSurface } from '../streams/surface.js';

export const DEFAULT_RELAY_URL = 'ws://127.0.0.1:8787/socket';

export interface AdapterFlags {
  port?: string;
  secret?: string;
  log?: string;
  instruct?: boolean;
  attentionTimeoutMs?: string;
  instructTtlMs?: string;
  /** A URL, or false for `--no-relay` (commander sets true when only the negation is defined). */
  relay?: string | boolean;
  token?: string;
  inspect?: string | boolean;
  /** Turns on the vendor's opt-in held gate (AEP_VSCODE_CONTROL, AEP_HERMES_CONTROL). */
  control?: boolean;
  /** The gate's tool pattern (AEP_VSCODE_GATE_TOOLS, AEP_HERMES_GATE_TOOLS). */
  gateTools?: string;
}

const truthy = (v: string | undefined): boolean => v === '1' || v === 'true' || v === 'yes';

function integer(name: string, v: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new SteeringError('CONFIG_INVALID', `${name} must be an integer ${min}-${max}, got "${v}"`);
  return n;
}

export interface AdapterConfig {
  surface: VendorSurface;
  port: number;
  secret: string;
  logPath: string;
  instruct: boolean;
  attentionTimeoutMs: number;
  ttlMs?: number;
  relayUrl?: string;
  token?: string;
  inspectPort?: number;
  /** The vendor's opt-in held gate is on (its held loops, and `control.attention.respond` in the hello). */
  control: boolean;
  gateTools?: string;
  /** The vendor's user-plane channel (Cline hub): connect it, and whether its verbs are on. */
  userPlane?: { control: boolean; env: NodeJS.ProcessEnv };
}

/** Flags first, then the environment (D16), then the vendor's defaults. */
export function adapterConfig(token: string, f: AdapterFlags, env: NodeJS.ProcessEnv = process.env): AdapterConfig {
  const table = tableFor(token);
  if (table === undefined) throw new SteeringError('CONFIG_INVALID', `unknown vendor "${token}"; known: ${vendorTokens().join(', ')}`);
  // The opt-in held gate is the table's (D16: each variable has its flag); a vendor without one refuses both flags.
  const gate = table.control;
  if (gate === undefined && (f.control === true || f.gateTools !== undefined)) {
    throw new SteeringError('CONFIG_INVALID', `${token} has no opt-in held gate: --control and --gate-tools apply to ${vendorTokens().filter((t) => tableFor(t)?.control !== undefined).join(', ')}`);
  }
  const control = f.control === true || (gate !== undefined && truthy(env[gate.env]));
  const gateTools = f.gateTools ?? (gate === undefined ? undefined : env[gate.toolsEnv]);
  const surfaceOpts: SurfaceOptions = { control };
  if (gateTools !== undefined && gateTools !== '') surfaceOpts.gateTools = gateTools;
  const surface = surfaceFrom(table, surfaceOpts);
  const port = integer('--port', f.port ?? env.AEP_HOOK_PORT ?? String(surface.port), 0, 65535);
  const { secret } = ensureSecret(f.secret, env);
  const attention = f.attentionTimeoutMs ?? env.AEP_ATTENTION_TIMEOUT_MS;
  const ttl = f.instructTtlMs ?? env.AEP_INSTRUCT_TTL_MS;
  const relay = f.relay === false ? undefined : typeof f.relay === 'string' ? f.relay : (env.AEP_RELAY || DEFAULT_RELAY_URL);
  const cfg: AdapterConfig = {
    surface,
    port,
    secret,
    logPath: f.log ?? env.AEP_LOG ?? join(stateDir(env), 'logs', `${token}.jsonl`),
    instruct: f.instruct === true || truthy(env.AEP_INSTRUCT),
    attentionTimeoutMs: attention === undefined ? surface.attentionTimeoutMs : integer('--attention-timeout-ms', attention, 1),
    control,
  };
  if (surfaceOpts.gateTools !== undefined) cfg.gateTools = surfaceOpts.gateTools;
  const plane = table.userPlane;
  if (plane !== undefined && (truthy(env[plane.tapEnv]) || truthy(env[plane.controlEnv]))) {
    cfg.userPlane = { control: truthy(env[plane.controlEnv]), env };
  }
  if (ttl !== undefined && ttl !== '' && ttl !== '0') cfg.ttlMs = integer('--instruct-ttl-ms', ttl, 1);
  if (relay !== undefined && relay !== '') cfg.relayUrl = relay;
  const tok = f.token ?? env.AEP_TOKEN;
  if (tok !== undefined && tok !== '') cfg.token = tok;
  if (f.inspect !== undefined && f.inspect !== false) {
    cfg.inspectPort = f.inspect === true ? DEFAULT_INSPECT_PORT : integer('--inspect', f.inspect, 0, 65535);
  }
  return cfg;
}

export interface RunningAdapter {
  adapter: AdapterHandle;
  inspector?: InspectorHandle;
  close(): Promise<void>;
}

/** Starts the adapter for a config; the relay link reconnects on its own and never blocks a hook. */
export async function runAdapter(cfg: AdapterConfig, onError?: (e: SteeringError) => void): Promise<RunningAdapter> {
  const report = onError ?? ((e: SteeringError) => process.stderr.write(`aep-steer adapter: ${e.code}: ${e.message}\n`));
  const inspector = cfg.inspectPort === undefined ? undefined : await createInspector({ port: cfg.inspectPort });
  const relay = cfg.relayUrl === undefined
    ? undefined
    : connectRelay({
      url: cfg.relayUrl,
      agent: cfg.surface.token,
      accepts: acceptsFor(cfg.surface, cfg.instruct, cfg.userPlane?.control === true), // D5, D28
      onError: report,
      ...(cfg.token === undefined ? {} : { token: cfg.token }),
    });
  const opts: AdapterOptions = {
    surface: cfg.surface,
    port: cfg.port,
    secret: cfg.secret,
    logPath: cfg.logPath,
    instruct: cfg.instruct,
    attentionTimeoutMs: cfg.attentionTimeoutMs,
    onError: report,
  };
  if (cfg.ttlMs !== undefined) opts.ttlMs = cfg.ttlMs;
  const plane = cfg.userPlane === undefined ? undefined : tableFor(cfg.surface.token)?.userPlane?.open(cfg.userPlane.env, report);
  if (plane !== undefined) {
    opts.transport = plane;
    opts.sendInput = cfg.userPlane?.control === true;
  }
  if (relay !== undefined) opts.relay = relay;
  if (inspector !== undefined) opts.inspect = inspector.inspect;
  let adapter: AdapterHandle;
  try {
    adapter = await startAdapter(opts);
  } catch (err) {
    await relay?.close();
    await plane?.close();
    await inspector?.stop();
    throw err;
  }
  const running: RunningAdapter = {
    adapter,
    async close() {
      await adapter.close();
      await plane?.close();
      await inspector?.stop();
    },
  };
  if (inspector !== undefined) running.inspector = inspector;
  return running;
}

export function registerAdapter(program: Command): void {
  program
    .command('adapter')
    .description('run a vendor adapter: hook endpoint on 127.0.0.1, session runtime, relay link')
    .argument('<vendor>', `vendor token (${vendorTokens().join(', ')})`)
    .option('--port <n>', 'hook port on 127.0.0.1, 0 for any free one (AEP_HOOK_PORT; default: the vendor\'s, D15)')
    .option('--secret <s>', 'hook URL secret (default: the stored one, generated once; AEP_STATE_DIR)')
    .option('--log <file>', 'the adapter\'s event log (AEP_LOG; default AEP_STATE_DIR/logs/<vendor>.jsonl)')
    .option('--instruct', 'accept x.<vendor>.control.instruct (AEP_INSTRUCT=1, D5)')
    .option('--attention-timeout-ms <ms>', 'held-loop timeout (AEP_ATTENTION_TIMEOUT_MS, D14)')
    .option('--instruct-ttl-ms <ms>', 'drop instructions queued longer than this (AEP_INSTRUCT_TTL_MS, D10; off by default)')
    .option('--relay <url>', `relay WebSocket URL (AEP_RELAY; default ${DEFAULT_RELAY_URL})`)
    .option('--no-relay', 'run without a relay (events go to the log only)')
    .option('--token <t>', 'relay bearer token (AEP_TOKEN)')
    .option('--inspect [port]', `serve XState inspection on ws://127.0.0.1:<port> (default ${DEFAULT_INSPECT_PORT})`)
    .option('--control', 'turn on the vendor\'s opt-in held gate: VS Code PreToolUse, Hermes pre_tool_call (AEP_VSCODE_CONTROL=1, AEP_HERMES_CONTROL=1; D13)')
    .option('--gate-tools <regex>', 'hold only tools whose whole name matches (AEP_VSCODE_GATE_TOOLS, AEP_HERMES_GATE_TOOLS; default: every tool)')
    .action(async (token: string, flags: AdapterFlags) => {
      const cfg = adapterConfig(token, flags);
      const running = await runAdapter(cfg);
      const table = tableFor(token);
      const out = (line: string) => process.stderr.write(`${line}\n`);
      out(`aep-steer adapter ${token}${table ? ` (${table.version})` : ''}: hooks on http://127.0.0.1:${running.adapter.port}/hook/<secret>`);
      out(`  log ${cfg.logPath}; relay ${cfg.relayUrl ?? 'off'}; instruct ${cfg.instruct ? 'on' : 'off'}${table?.control ? `; control ${cfg.control ? `on${cfg.gateTools ? ` (${cfg.gateTools})` : ''}` : 'off'}` : ''}`);
      if (cfg.userPlane) out(`  ${table?.userPlane?.tapEnv ?? 'user plane'} on; send_input ${cfg.userPlane.control ? 'on' : 'off'}`);
      if (running.inspector) out(`  inspect ${running.inspector.url}`);
      const stop = () => {
        setTimeout(() => process.exit(1), 5000).unref();
        running.close().then(() => process.exit(0), () => process.exit(1));
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
}
