// Wiring for the Codex and Qwen Code end-to-end suites: this project's relay and adapter
// in-process on ephemeral ports, a consumer that sends instructions THROUGH THE RELAY and records
// the stream, and runners for the pinned CLIs (installed by scripts/install-vendor-cli.sh into
// .vendor-clis) headless against the loopback mock model API (vendor-clis-observed §2, §3).
import { spawn } from 'node:child_process';
import { cpSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterConfig, runAdapter, type AdapterFlags, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import { RelayConsumer, type Settlement } from '../../src/consumer/connection.js';
import { tracePath } from '../../src/adapters/shim-trace.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { projectRoot } from './shared-dir.js';

const TOKEN = 'e2e-relay-token';
const SENDER = { agent: 'e2e-operator' };

export interface VendorStack {
  token: string;
  running: RunningAdapter;
  secret: string;
  /** The adapter's event log. */
  logPath: string;
  /** The relay's WebSocket URL and token, for the consumer commands (`aep-steer respond`). */
  relayUrl: string;
  relayToken: string;
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
  waitFor<T>(what: string, probe: () => T | undefined, limitMs?: number): Promise<T>;
  find(session: string, type: string, cause?: string): AepEvent | undefined;
  /** The first session.started seen after `from` events: each test runs one CLI at a time. */
  newSession(from: number): Promise<string>;
  close(): Promise<void>;
}

/**
 * `env` adds adapter settings (AEP_RESUME_WINDOW_MS, AEP_INSTRUCT_TTL_MS, a vendor's user-plane
 * gates and data directories, …) as a user would set them; `flags`, the command-line flags a
 * user would add (`--serve URL --serve-token-file F`).
 */
export async function startVendorStack(
  token: string,
  env: NodeJS.ProcessEnv = {},
  flags: AdapterFlags = {},
): Promise<VendorStack> {
  const stateDir = mkdtempSync(join(tmpdir(), `aep-${token}-state-`));
  const relayLog: string[] = [];
  const relay: RelayHandle = await startRelay({
    port: 0,
    storePath: ':memory:',
    token: TOKEN,
    log: (l) => relayLog.push(`${new Date().toISOString()} ${l}`),
  });
  const errors: string[] = [];
  const said: string[] = [];
  const cfg = adapterConfig(
    token,
    { ...flags, port: '0', relay: relay.socketUrl, token: TOKEN, instruct: true, log: join(stateDir, 'adapter.jsonl') },
    { ...env, AEP_STATE_DIR: stateDir },
  );
  const running = await runAdapter(
    cfg,
    (e) => errors.push(`${e.code}: ${e.message}`),
    (line) => said.push(line),
  );
  const consumer = await RelayConsumer.connect({ url: relay.socketUrl, token: TOKEN, agent: SENDER.agent });
  const events: AepEvent[] = [];
  await consumer.subscribe({}, { onEvent: (e) => events.push(e) });

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

  return {
    token,
    running,
    secret: cfg.secret,
    stateDir,
    logPath: cfg.logPath,
    relayUrl: relay.socketUrl,
    relayToken: TOKEN,
    events,
    errors,
    said,
    evidence,
    waitFor,
    find,
    async instruct(session, text) {
      const cmd = command(SENDER, session, {
        type: `x.${token}.control.instruct`,
        data: { text },
        capture: 'redacted',
      });
      const settled = await consumer.send(cmd);
      return { cmd, settled };
    },
    send: (cmd) => consumer.send(cmd),
    newSession: (from) =>
      waitFor('session.started', () => events.slice(from).find((e) => e.type === 'session.started')?.session),
    keep,
    async close() {
      if (keepDir !== undefined) {
        mkdirSync(keepDir, { recursive: true });
        writeFileSync(join(keepDir, 'evidence.txt'), `${report()}\n`);
        writeFileSync(join(keepDir, 'stream.jsonl'), events.map((e) => `${JSON.stringify(e)}\n`).join(''));
      }
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
export function vendorBinary(name: 'codex' | 'qwen-code' | 'cline'): string | undefined {
  const dir = process.env.AEP_VENDOR_CLIS_DIR ?? join(projectRoot, '.vendor-clis');
  const bin = join(
    dir,
    name,
    'node_modules',
    '.bin',
    ({ codex: 'codex', 'qwen-code': 'qwen', cline: 'cline' } as const)[name],
  );
  return existsSync(bin) ? bin : undefined;
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

function run(bin: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, killAfterMs = 120_000): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
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

/** config.toml pointing Codex at the mock; hooks come from hooks.json, written by the installer. */
export function writeCodexConfig(ws: Workspace, mockBaseUrl: string): void {
  mkdirSync(codexHome(ws), { recursive: true });
  writeFileSync(
    join(codexHome(ws), 'config.toml'),
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
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
      `[projects."${ws.project}"]`,
      'trust_level = "trusted"',
      '',
    ].join('\n'),
  );
}

/**
 * Runs `codex exec`, or `codex exec resume <id>` to continue a recorded session under the same id;
 * hooks run only when trusted, which the installer persists (§2.4).
 */
export function runCodex(ws: Workspace, prompt: string, resume?: string): Promise<CliRun> {
  const bin = vendorBinary('codex');
  if (bin === undefined)
    return Promise.reject(new Error('Codex CLI not installed: run scripts/install-vendor-cli.sh codex'));
  const args = [
    'exec',
    '--json',
    '--skip-git-repo-check',
    '--dangerously-bypass-approvals-and-sandbox',
    ...(resume === undefined ? [] : ['resume', resume]),
    prompt,
  ];
  return run(bin, args, ws.project, codexEnv(ws));
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

export function runQwen(ws: Workspace, mockBaseUrl: string, prompt: string, extra: string[] = []): Promise<CliRun> {
  const bin = vendorBinary('qwen-code');
  if (bin === undefined)
    return Promise.reject(new Error('Qwen Code CLI not installed: run scripts/install-vendor-cli.sh qwen-code'));
  return run(bin, ['--approval-mode', 'yolo', '-o', 'stream-json', ...extra, prompt], ws.project, {
    ...qwenEnv(ws, mockBaseUrl),
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
  });
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
