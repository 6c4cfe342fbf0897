// Wiring for the vendor end-to-end suites: this project's relay and adapter in-process on
// ephemeral ports, a consumer that sends instructions THROUGH THE RELAY and records the stream,
// and the pinned CLIs' own settings (installed by scripts/install-vendor-cli.sh into .vendor-clis)
// pointing headless runs at the loopback mock model API (vendor-clis-observed §2, §3). The suites
// reach all of it through one builder, e2e-stack.ts.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { adapterConfig, runAdapter, type AdapterFlags, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import type { CaptureLevel } from '../../src/protocol/envelope.js';
import { RelayConsumer, type Settlement } from '../../src/consumer/connection.js';
import { tracePath } from '../../src/adapters/shim-trace.js';
import { loadTokensFile, type TokenEntry } from '../../src/relay/acl.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { projectRoot } from './shared-dir.js';

const TOKEN = 'e2e-relay-token';
const SENDER = { agent: 'e2e-operator' };

/**
 * A relay on a tokens file (D18–D20) instead of one shared token: the adapter holds an `emit`
 * identity for its vendor, the stack's consumer (the operator, `e2e-operator`) one of its own.
 */
export interface Access {
  /** The command types the operator may send; none: it only watches. */
  commands: string[];
  /** The operator's ceiling (D20); absent: what the relay gives such an identity. */
  capture?: CaptureLevel;
  /**
   * Further identities, each with a token of its own (`tokenOf`) and the command types it may
   * send: a watcher (none), the console, an orchestrator's MCP server.
   */
  parties?: Record<string, string[]>;
}

/** A command's capture level; null: the command carries none. */
type Capture = 'redacted' | 'metadata' | null;

export interface VendorStack {
  token: string;
  running: RunningAdapter;
  secret: string;
  /** The adapter's event log. */
  logPath: string;
  /** The relay's WebSocket URL and the operator's token, for the consumer commands (`aep-steer respond`). */
  relayUrl: string;
  relayToken: string;
  /** The operator's identity: the `agent` its commands name. */
  sender: string;
  /** The operator's connection to the relay. */
  consumer: RelayConsumer;
  /** The adapter's state directory: the hook secret the shim reads lives here (D21). */
  stateDir: string;
  events: AepEvent[];
  errors: string[];
  /** The adapter's status lines (relay connected / lost / reconnected), as it prints them on stderr. */
  said: string[];
  /**
   * What a failed wait reports besides the stream: the adapter's errors and status lines (did its
   * relay link complete the handshake?), the relay's log and its view of the connections, each
   * hook's shim outcome; a suite adds its vendor's own (the Cline hub's log).
   */
  evidence: Map<string, () => string>;
  /**
   * With AEP_E2E_KEEP=DIR (scripts/repeat-e2e.sh sets it) `close` first copies the evidence, the
   * adapter's state directory and the stream the consumer saw into DIR, for a failure that was an
   * assertion rather than a wait; `keep` adds a file of the suite's own (the Cline hub's log).
   */
  keep(file: string, as: string): void;
  /** Sends `x.{token}.control.instruct` through the relay and waits for it to settle. */
  instruct(session: string, text: string): Promise<{ cmd: AepCommand; settled: Settlement }>;
  /** Sends any command through the relay and waits for its ack. */
  send(cmd: AepCommand): Promise<Settlement>;
  /** A command of the operator's. */
  command(session: string, type: string, data: Record<string, unknown>, capture?: Capture): AepCommand;
  /** Sends a command of the operator's, whatever comes of it: the command, and how it settled. */
  sent(
    session: string,
    type: string,
    data: Record<string, unknown>,
    capture?: Capture,
  ): Promise<{ cmd: AepCommand; settled: Settlement }>;
  /** Sends a command of the operator's; it fails the test unless the adapter accepted it. */
  accepted(session: string, type: string, data: Record<string, unknown>, capture?: Capture): Promise<AepCommand>;
  /** Waits for `x.{token}.instruction.delivered` caused by the instruction. */
  delivered(session: string, cmd: AepCommand): Promise<AepEvent>;
  /** The token of a party of the tokens file (`Access.parties`). */
  tokenOf(identity: string): string;
  /** Follows the stream as that party: what it is served, with the raw frames. */
  watch(identity: string): Promise<{ e: AepEvent; raw: string }[]>;
  waitFor<T>(what: string, probe: () => T | undefined, limitMs?: number): Promise<T>;
  find(session: string, type: string, cause?: string): AepEvent | undefined;
  /** The first session.started seen after `from` events: each test runs one CLI at a time. */
  newSession(from: number): Promise<string>;
  close(): Promise<void>;
}

const partyToken = (identity: string): string => `${identity}-token`;

/** The relay, on the shared token or (with `access`) on a tokens file written into `dir`. */
async function relayFor(
  token: string,
  dir: string,
  access: Access | undefined,
  log: (line: string) => void,
): Promise<{ relay: RelayHandle; adapterToken: string; operatorToken: string }> {
  if (access === undefined) {
    const relay = await startRelay({ port: 0, storePath: ':memory:', token: TOKEN, log });
    return { relay, adapterToken: TOKEN, operatorToken: TOKEN };
  }
  const adapterToken = `e2e-${token}-adapter-token`;
  const operatorToken = 'e2e-operator-token';
  const operator: TokenEntry & { token: string } = {
    token: operatorToken,
    identity: SENDER.agent,
    commands: access.commands,
    ...(access.capture === undefined ? {} : { capture: access.capture }),
  };
  const tokens = [
    { token: adapterToken, identity: `e2e-${token}-adapter`, emit: [token] },
    operator,
    ...Object.entries(access.parties ?? {}).map(([identity, commands]) => ({
      token: partyToken(identity),
      identity,
      commands,
    })),
  ];
  const file = join(dir, 'tokens.json');
  writeFileSync(file, JSON.stringify({ tokens }), { mode: 0o600 });
  const relay = await startRelay({ port: 0, storePath: ':memory:', tokens: loadTokensFile(file), log });
  return { relay, adapterToken, operatorToken };
}

/**
 * `env` adds adapter settings (AEP_RESUME_WINDOW_MS, AEP_INSTRUCT_TTL_MS, a vendor's user-plane
 * gates and data directories, …) as a user would set them; `flags`, the command-line flags a
 * user would add (`--serve URL --serve-token-file F`; `instruct: false` leaves instruct off);
 * `access`, a tokens file for the relay.
 */
export async function startVendorStack(
  token: string,
  env: NodeJS.ProcessEnv = {},
  flags: AdapterFlags = {},
  access?: Access,
): Promise<VendorStack> {
  const stateDir = mkdtempSync(join(tmpdir(), `aep-${token}-state-`));
  const relayLog: string[] = [];
  const { relay, adapterToken, operatorToken } = await relayFor(token, stateDir, access, (l) =>
    relayLog.push(`${new Date().toISOString()} ${l}`),
  );
  const errors: string[] = [];
  const said: string[] = [];
  const cfg = adapterConfig(
    token,
    {
      instruct: true,
      ...flags,
      port: '0',
      relay: relay.socketUrl,
      token: adapterToken,
      log: join(stateDir, 'adapter.jsonl'),
    },
    { ...env, AEP_STATE_DIR: stateDir },
  );
  const running = await runAdapter(
    cfg,
    (e) => errors.push(`${e.code}: ${e.message}`),
    (line) => said.push(line),
  );
  const consumer = await RelayConsumer.connect({ url: relay.socketUrl, token: operatorToken, agent: SENDER.agent });
  const events: AepEvent[] = [];
  await consumer.subscribe({}, { onEvent: (e) => events.push(e) });
  const watchers: RelayConsumer[] = [];

  const find = (session: string, type: string, cause?: string) =>
    events.find((e) => e.session === session && e.type === type && (cause === undefined || e.cause === cause));

  const evidence = new Map<string, () => string>([
    [
      "the adapter's relay link",
      () => `handshake ${running.relay?.connected === true ? 'completed (greeted)' : 'not completed'}`,
    ],
    [
      'adapter status lines (its link, once greeted, says "relay connected")',
      () => said.join('\n') || '(none: "relay connected" was never said)',
    ],
    ['adapter errors', () => errors.join('\n') || '(none)'],
    ['relay log', () => relayLog.join('\n') || '(empty)'],
    ['relay connections and counts', () => JSON.stringify(relay.stats())],
    [
      "the shim, per hook (AEP_HOOK_TRACE=all in the agent's environment traces delivered hooks too)",
      () => tailOf(tracePath(stateDir)),
    ],
    ['adapter log (last records)', () => tailOf(cfg.logPath, 15)],
  ]);
  const report = (): string =>
    [...evidence]
      .map(([name, get]) => {
        let text: string;
        try {
          text = get();
        } catch (err) {
          text = `(could not read: ${(err as Error).message})`;
        }
        return `--- ${name}\n${text}`;
      })
      .join('\n');

  const keepDir = process.env.AEP_E2E_KEEP ? join(process.env.AEP_E2E_KEEP, `${token}-${process.pid}`) : undefined;
  function keep(file: string, as: string): void {
    if (keepDir === undefined || !existsSync(file)) return;
    mkdirSync(keepDir, { recursive: true });
    // Never the hook secret; never a socket (a lane's, which Node's copy cannot take) or anything gone meanwhile.
    const kept = (src: string): boolean => {
      if (src.endsWith('/secret')) return false;
      try {
        const st = lstatSync(src);
        return st.isFile() || st.isDirectory();
      } catch {
        return false;
      }
    };
    cpSync(file, join(keepDir, as), { recursive: true, filter: kept });
  }

  async function waitFor<T>(what: string, probe: () => T | undefined, limitMs = 60_000): Promise<T> {
    const until = Date.now() + limitMs;
    for (;;) {
      const v = probe();
      if (v !== undefined) return v;
      if (Date.now() > until) {
        throw new Error(
          `never saw ${what}; stream had: ${events.map((e) => `${e.type}${e.cause ? `<-${e.cause}` : ''}`).join(', ')}; adapter errors: ${errors.join('; ')}\n${report()}`,
        );
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  const commandOf = (session: string, type: string, data: Record<string, unknown>, capture: Capture = 'redacted') =>
    command(SENDER, session, { type, data, ...(capture === null ? {} : { capture }) });

  const tokenOf = (identity: string): string => {
    if (access?.parties?.[identity] === undefined) throw new Error(`no party ${identity} in the tokens file`);
    return partyToken(identity);
  };

  return {
    token,
    running,
    secret: cfg.secret,
    stateDir,
    logPath: cfg.logPath,
    relayUrl: relay.socketUrl,
    relayToken: operatorToken,
    sender: SENDER.agent,
    consumer,
    events,
    errors,
    said,
    evidence,
    waitFor,
    find,
    async instruct(session, text) {
      const cmd = commandOf(session, `x.${token}.control.instruct`, { text });
      const settled = await consumer.send(cmd);
      return { cmd, settled };
    },
    send: (cmd) => consumer.send(cmd),
    command: commandOf,
    async sent(session, type, data, capture) {
      const cmd = commandOf(session, type, data, capture);
      return { cmd, settled: await consumer.send(cmd) };
    },
    async accepted(session, type, data, capture) {
      const cmd = commandOf(session, type, data, capture);
      const settled = await consumer.send(cmd);
      assert.is(
        settled.outcome,
        'accepted',
        `${type} settled ${JSON.stringify(settled)}; adapter errors: ${errors.join('; ')}`,
      );
      return cmd;
    },
    delivered: (session, cmd) =>
      waitFor(`delivered for ${cmd.id}`, () => find(session, `x.${token}.instruction.delivered`, cmd.id)),
    tokenOf,
    async watch(identity) {
      const seen: { e: AepEvent; raw: string }[] = [];
      const watcher = await RelayConsumer.connect({ url: relay.socketUrl, token: tokenOf(identity), agent: identity });
      watchers.push(watcher);
      await watcher.subscribe({}, { onEvent: (e, raw) => seen.push({ e, raw }) });
      return seen;
    },
    newSession: (from) =>
      waitFor('session.started', () => events.slice(from).find((e) => e.type === 'session.started')?.session),
    keep,
    async close() {
      if (keepDir !== undefined) {
        mkdirSync(keepDir, { recursive: true });
        writeFileSync(join(keepDir, 'evidence.txt'), `${report()}\n`);
        writeFileSync(join(keepDir, 'stream.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
      }
      for (const w of watchers) await w.close();
      await consumer.close();
      await running.close();
      await relay.close();
      keep(stateDir, 'adapter-state');
      // A lane's server may still be writing its last file there as it exits: the removal retries.
      rmSync(stateDir, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
    },
  };
}

/** The last lines of a file, for a failed wait's evidence. */
export const tailOf = (file: string, lines = 40): string =>
  existsSync(file) ? readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n') : `(no ${file})`;

/** The pinned CLI binary, if installed. */
export function vendorBinary(name: 'claude-code' | 'codex' | 'qwen-code' | 'cline' | 'copilot'): string | undefined {
  const dir = process.env.AEP_VENDOR_CLIS_DIR ?? join(projectRoot, '.vendor-clis');
  const bin = join(
    dir,
    name,
    'node_modules',
    '.bin',
    ({ 'claude-code': 'claude', codex: 'codex', 'qwen-code': 'qwen', cline: 'cline', copilot: 'copilot' } as const)[
      name
    ],
  );
  return existsSync(bin) ? bin : undefined;
}

/**
 * True when the CLI is missing. Under CI that is always a failure; elsewhere too, unless waived
 * with AEP_SKIP_VENDOR_E2E=1.
 */
export function vendorMissing(binary: string | undefined, suite: string, missing: string): boolean {
  if (binary !== undefined) return false;
  if (process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1') {
    console.log(`${suite} e2e not run (AEP_SKIP_VENDOR_E2E=1): ${missing}`);
  } else {
    test(`${suite}: the pinned CLI is installed`, () => {
      assert.unreachable(missing);
    });
  }
  return true;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Workspace {
  root: string;
  home: string;
  project: string;
}

export function workspace(prefix: string): Workspace {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const home = join(root, 'home');
  const project = join(home, 'project');
  mkdirSync(project, { recursive: true });
  return { root, home, project };
}

/** A CLI run: what it printed and how it ended, and a way to end it first. */
export interface Started<R> {
  done: Promise<R>;
  kill(): void;
}

/** Runs a CLI to its end, or until `killAfterMs` (a stuck run fails its test instead of hanging the suite). */
export function spawnCli(
  bin: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  killAfterMs = 120_000,
): Started<CliRun> {
  const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const done = new Promise<CliRun>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
    child.on('error', (e) => {
      clearTimeout(killer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code, stdout, stderr });
    });
  });
  return { done, kill: () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL') };
}

// ---- Codex 0.171.0 (vendor-clis-observed §2.2, §2.4) ----------------------------------------

export const codexHome = (ws: Workspace): string => join(ws.home, '.codex');

/**
 * Ends the managed app-server daemon a plain `codex` TUI started for this workspace. Observed on
 * 0.171.0: the TUI's first prompt starts `codex app-server --listen unix:// --managed-daemon` (a
 * copy of the binary under $CODEX_HOME/packages/app-server-daemon/, serving the TUI's threads on
 * $CODEX_HOME/app-server-control/) and a `codex app-server daemon pid-update-loop`; both outlive
 * the TUI. Codex's own `app-server daemon stop` ends the daemon; the pid loop stays, so whatever
 * still runs from this workspace's copy is ended by its pid. Resolves once none runs.
 */
export async function stopCodexDaemon(ws: Workspace, bin: string, env: NodeJS.ProcessEnv): Promise<void> {
  const { spawnSync } = await import('node:child_process');
  const { processTable } = await import('../../src/adapters/tool-processes.js');
  const stopped = spawnSync(bin, ['app-server', 'daemon', 'stop'], { env, encoding: 'utf8', timeout: 30_000 });
  if (stopped.status !== 0) console.error(`codex app-server daemon stop exited ${stopped.status}: ${stopped.stderr}`);
  const copy = join(codexHome(ws), 'packages', 'app-server-daemon');
  const ours = () => (processTable() ?? []).filter((p) => p.state !== 'Z' && p.argv[0]?.startsWith(copy) === true);
  for (const p of ours()) {
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {
      // ended meanwhile
    }
  }
  const until = Date.now() + 10_000;
  while (ours().length > 0) {
    if (Date.now() > until) throw new Error(`codex daemons still run: ${JSON.stringify(ours())}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a suite sets otherwise than a trusted project where Codex runs anything unasked. */
export interface CodexSettings {
  approval_policy?: string;
  sandbox_mode?: string;
  /** False: a folder Codex has not been asked to trust yet (a fresh clone). */
  trusted?: boolean;
}

/** config.toml pointing Codex at the mock; hooks come from hooks.json, written by the installer. */
export function writeCodexConfig(ws: Workspace, mockBaseUrl: string, o: CodexSettings = {}): void {
  mkdirSync(codexHome(ws), { recursive: true });
  writeFileSync(
    join(codexHome(ws), 'config.toml'),
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      `approval_policy = "${o.approval_policy ?? 'never'}"`,
      `sandbox_mode = "${o.sandbox_mode ?? 'danger-full-access'}"`,
      'check_for_update_on_startup = false',
      '',
      '[analytics]',
      'enabled = false',
      '',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${mockBaseUrl}"`,
      'env_key = "MOCK_API_KEY"',
      'wire_api = "responses"',
      'request_max_retries = 0',
      'stream_max_retries = 0',
      '',
      '[features]',
      'hooks = true',
      'plugins = false',
      'apps = false',
      'remote_plugin = false',
      '',
      ...(o.trusted === false ? [] : [`[projects."${ws.project}"]`, 'trust_level = "trusted"', '']),
    ].join('\n'),
  );
}

/** The environment a Codex process runs with against the mock model: its own home, no telemetry. */
export function codexEnv(ws: Workspace): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: ws.home,
    CODEX_HOME: codexHome(ws),
    MOCK_API_KEY: 'dummy',
    OPENAI_API_KEY: 'dummy',
    NO_UPDATE_NOTIFIER: '1',
    CODEX_DISABLE_TELEMETRY: '1',
    DO_NOT_TRACK: '1',
    RUST_LOG: 'warn',
  };
}

// ---- Qwen Code 0.24.4 (vendor-clis-observed §3.2, §3.3) -------------------------------------

export function writeQwenSettings(ws: Workspace): string {
  const dir = join(ws.home, '.qwen');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'settings.json');
  writeFileSync(
    file,
    JSON.stringify(
      {
        security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: false } },
        model: { name: 'mock-model' },
        telemetry: { enabled: false },
        privacy: { usageStatisticsEnabled: false },
        general: { disableAutoUpdate: true, disableUpdateNag: true },
        ide: { enabled: false },
      },
      null,
      2,
    ),
  );
  return file;
}

/** What Qwen Code runs with here: the workspace's HOME, the mock model, nothing sent elsewhere. */
export function qwenEnv(ws: Workspace, mockBaseUrl: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: ws.home,
    OPENAI_API_KEY: 'dummy',
    OPENAI_BASE_URL: mockBaseUrl,
    OPENAI_MODEL: 'mock-model',
    NO_UPDATE_NOTIFIER: '1',
    DO_NOT_TRACK: '1',
    QWEN_CODE_DISABLE_TELEMETRY: '1',
    NO_COLOR: '1',
  };
}

/** A Chat Completions request's messages, and the text of one (context placement differs, §6). */
export type ChatMessage = { role?: string; content?: unknown };
export const chatMessagesOf = (body: unknown): ChatMessage[] =>
  (body as { messages?: ChatMessage[] } | undefined)?.messages ?? [];
export const chatTextOf = (m: ChatMessage): string => strings(m.content).join('');
/** The turn a request belongs to: its last user prompt marked `[[TURN]]` (mock-openai.ts). */
export const turnPromptOf = (body: unknown): string =>
  [...chatMessagesOf(body)]
    .reverse()
    .map(chatTextOf)
    .find((t) => t.includes('[[TURN]]')) ?? '';

/** Every string inside a parsed body: context placement differs by vendor and version (§6). */
export function strings(v: unknown, out: string[] = []): string[] {
  if (typeof v === 'string') out.push(v);
  else if (Array.isArray(v)) for (const x of v) strings(x, out);
  else if (v !== null && typeof v === 'object') for (const x of Object.values(v)) strings(x, out);
  return out;
}

export const bodyHas = (body: unknown, s: string): boolean => strings(body).some((x) => x.includes(s));
