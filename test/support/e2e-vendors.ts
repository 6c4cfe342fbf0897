// What differs between the vendors in the end-to-end suites, as rows: the model API each CLI
// speaks (the mock that stands in for it and how a recorded request is read), the CLI's own
// settings pointing it at the mock, the real installer's hooks, its headless and terminal runs.
// e2e-stack.ts reads these rows; no suite asks which vendor it is.
import { cline } from '../../src/adapters/cline/table.js';
import { installCline } from '../../src/adapters/cline/installer.js';
import { installClaudeCode } from '../../src/adapters/claude-code/installer.js';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { copilotInstaller } from '../../src/adapters/copilot/installer.js';
import { installQwenCode } from '../../src/adapters/qwen-code/installer.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { claudeEnv, startClaude, type ClaudeRun } from './claude-cli.js';
import {
  firstUserText,
  startMockAnthropic,
  type MessagesBody,
  type MockAnthropic,
  type RecordedRequest as MessagesRequest,
} from './mock-anthropic.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest as OpenAiRequest } from './mock-openai.js';
import { freePort } from './readme-blocks.js';
import type { Hold } from './request-holds.js';
import {
  chatMessagesOf,
  codexEnv,
  codexHome,
  qwenEnv,
  spawnCli,
  stopCodexDaemon,
  turnPromptOf,
  writeCodexConfig,
  writeQwenSettings,
  type CliRun,
  type CodexSettings,
  type Started,
  type Workspace,
} from './vendor-e2e.js';

/** Per vendor: its mock model, a recorded request of it, a finished headless run, its own settings. */
export interface Kinds {
  'claude-code': { mock: MockAnthropic; request: MessagesRequest; run: ClaudeRun; settings: never };
  codex: { mock: MockOpenAi; request: OpenAiRequest; run: CliRun; settings: CodexSettings };
  'qwen-code': { mock: MockOpenAi; request: OpenAiRequest; run: CliRun; settings: never };
  cline: { mock: MockOpenAi; request: OpenAiRequest; run: CliRun; settings: never };
  copilot: { mock: MockOpenAi; request: OpenAiRequest; run: CliRun; settings: never };
}
export type Vendor = keyof Kinds;

/** A workspace made the CLI's own: `env` is what the CLI runs with there. */
export interface VendorWorkspace extends Workspace {
  env: NodeJS.ProcessEnv;
}

/** Where a workspace's hooks post, and the state directory their shim reads the secret from (D21). */
export interface HookTarget {
  port: number;
  secret: string;
  stateDir: string;
  /** How long a held hook waits for an answer; absent: what the vendor's installer writes by default. */
  attentionTimeoutMs?: number;
}

export interface RunOptions {
  /** More of the CLI's own arguments, before the prompt. */
  args?: string[];
  /** Continues that recorded session under its id. */
  resume?: string;
  /** Claude Code: false runs in default permission mode (a file-writing call asks); Copilot: without --allow-all (a shell call asks). */
  bypassPermissions?: boolean;
  killAfterMs?: number;
}

/** The model API a CLI speaks: its loopback mock, and how one recorded request reads. */
interface ModelApi<M, R> {
  start(): Promise<M>;
  /** The model requests, in arrival order (side requests of the CLI's included). */
  requests(mock: M): R[];
  /** Holds the next model request that matches until `release()`. */
  hold(mock: M, match: (r: R) => boolean): Hold<R>;
  body(r: R): unknown;
  /** The prompt of the turn a request belongs to. */
  turnOf(body: unknown): string;
  /** What the tool calls after the first message carrying `tag` gave back, each as JSON. */
  outputsAfter(body: unknown, tag: string): string[];
  /** A prompt whose one shell call waits until `gate` exists (mock-openai.ts); a scripted mock has none. */
  slowPrompt?: (gate: string, tag: string) => string;
}

/** The items of a list from the first that matches on. */
const from = <T>(items: T[], first: (item: T) => boolean): T[] => {
  const at = items.findIndex(first);
  return at < 0 ? [] : items.slice(at);
};

type AnthropicMessage = { role?: string; content?: unknown };
const messagesApi: ModelApi<MockAnthropic, MessagesRequest> = {
  start: () => startMockAnthropic(),
  requests: (m) => m.messages(),
  hold: (m, match) => m.hold(match),
  body: (r) => r.body,
  turnOf: (body) => firstUserText((body ?? {}) as MessagesBody),
  outputsAfter: (body, tag) =>
    from(
      (body as { messages?: AnthropicMessage[] } | undefined)?.messages ?? [],
      (m) => m.role === 'user' && JSON.stringify(m.content).includes(tag),
    ).flatMap((m) =>
      (Array.isArray(m.content) ? (m.content as { type?: string; content?: unknown }[]) : [])
        .filter((b) => b.type === 'tool_result')
        .map((b) => JSON.stringify(b.content)),
    ),
};

type ResponsesItem = { type?: string; role?: string; content?: unknown; output?: unknown };
const itemsOf = (body: unknown): ResponsesItem[] => (body as { input?: ResponsesItem[] } | undefined)?.input ?? [];
const responsesApi: ModelApi<MockOpenAi, OpenAiRequest> = {
  start: () => startMockOpenAi(),
  requests: (m) => m.modelRequests(),
  hold: (m, match) => m.hold(match),
  body: (r) => r.body,
  turnOf: (body) =>
    itemsOf(body)
      .filter((i) => i.type === 'message' && i.role === 'user')
      .map((i) =>
        (Array.isArray(i.content) ? (i.content as { text?: string }[]) : []).map((c) => c.text ?? '').join(''),
      )
      .reverse()
      .find((t) => t.includes('[[TURN]]')) ?? '',
  slowPrompt: (gate, tag) => `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`,
  outputsAfter: (body, tag) =>
    from(itemsOf(body), (i) => i.type === 'message' && JSON.stringify(i).includes(tag))
      .filter((i) => i.type === 'function_call_output')
      .map((i) => JSON.stringify(i.output)),
};

const chatApi: ModelApi<MockOpenAi, OpenAiRequest> = {
  ...responsesApi,
  turnOf: turnPromptOf,
  outputsAfter: (body, tag) =>
    from(chatMessagesOf(body), (m) => m.role === 'user' && JSON.stringify(m.content).includes(tag))
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.stringify(m.content)),
};

export interface VendorRow<V extends Vendor> {
  /** The pinned CLI, as a missing one is named. */
  pinned: string;
  api: ModelApi<Kinds[V]['mock'], Kinds[V]['request']>;
  /** `aep-steer run <as>` (a vendor with a native lane), and the variable that names the CLI's binary to it. */
  aepRun?: { as: string; binVar: string };
  /** The CLI's own settings in a fresh workspace, pointing it at the mock; resolves with its environment there. */
  setUp(
    ws: Workspace,
    mock: Kinds[V]['mock'],
    bin: string,
    settings?: Kinds[V]['settings'],
  ): Promise<NodeJS.ProcessEnv>;
  /** The real installer writes the hooks into the workspace (the user's or the project's settings). */
  install(ws: VendorWorkspace, to: HookTarget, bin: string): void;
  /** A headless run of one prompt (Cline's sessions run in its hub: cline-hub-e2e.ts). */
  run?(
    ws: VendorWorkspace,
    mock: Kinds[V]['mock'],
    bin: string,
    prompt: string,
    o: RunOptions,
  ): Started<Kinds[V]['run']>;
  /** Its terminal UI: the arguments after the binary, what it shows once it takes a prompt, what outlives it. */
  tui?: { args: string[]; ready: string; leaves?: (ws: VendorWorkspace, bin: string) => Promise<void> };
  /** The session a model request belongs to, where the CLI names it (a header of Claude Code's). */
  sessionOf?: (r: Kinds[V]['request']) => string | undefined;
  /** The adapter's settings taken from the CLI's environment: then the suite's home is made before the adapter. */
  adapterEnv?: (cli: NodeJS.ProcessEnv) => NodeJS.ProcessEnv;
}

export const VENDORS: { [V in Vendor]: VendorRow<V> } = {
  'claude-code': {
    pinned: 'Claude Code 2.1.332',
    api: messagesApi,
    aepRun: { as: 'claude', binVar: 'AEP_CLAUDE_BIN' },
    setUp: async (ws, mock) => claudeEnv(ws, mock.url),
    install: (ws, to) =>
      installClaudeCode({
        project: ws.project,
        port: to.port,
        secret: to.secret,
        neutral: {},
        attentionTimeoutMs: to.attentionTimeoutMs ?? 55_000,
        env: { AEP_STATE_DIR: to.stateDir },
      }),
    run(ws, mock, _bin, prompt, o) {
      const cli = startClaude({
        ws,
        mockUrl: mock.url,
        prompt,
        ...(o.bypassPermissions === undefined ? {} : { bypassPermissions: o.bypassPermissions }),
        extraArgs: [...(o.resume === undefined ? [] : ['--resume', o.resume]), ...(o.args ?? [])],
        ...(o.killAfterMs === undefined ? {} : { killAfterMs: o.killAfterMs }),
      });
      return { done: cli.done, kill: cli.kill };
    },
    tui: { args: ['--model', 'claude-sonnet-4-5'], ready: '? for shortcuts' },
    sessionOf: (r) => r.headers['x-claude-code-session-id'],
  },
  codex: {
    pinned: 'Codex 0.171.0',
    api: responsesApi,
    aepRun: { as: 'codex', binVar: 'AEP_CODEX_BIN' },
    async setUp(ws, mock, _bin, settings) {
      writeCodexConfig(ws, mock.baseUrl, settings);
      return codexEnv(ws);
    },
    install(ws, to, bin) {
      // The installer asks the real CLI for each hook's trust key and hash and persists them, so
      // the runs need no --dangerously-bypass-hook-trust (vendor-clis-observed §2.4).
      const report = installCodex({
        user: true,
        port: to.port,
        secret: to.secret,
        neutral: codex.replies.neutral,
        attentionTimeoutMs: to.attentionTimeoutMs ?? codex.attentionTimeoutMs,
        env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: bin, AEP_STATE_DIR: to.stateDir },
      });
      assert.match(report.notes[0] ?? '', /^trusted 11 hooks in /);
    },
    // `codex exec`, or `codex exec resume <id>` to go on with a recorded session under its id.
    run: (ws, _mock, bin, prompt, o) =>
      spawnCli(
        bin,
        [
          'exec',
          '--json',
          '--skip-git-repo-check',
          '--dangerously-bypass-approvals-and-sandbox',
          ...(o.args ?? []),
          ...(o.resume === undefined ? [] : ['resume', o.resume]),
          prompt,
        ],
        ws.project,
        ws.env,
        o.killAfterMs,
      ),
    // The managed app-server daemon the plain TUI starts outlives it (0.171.0).
    tui: { args: [], ready: 'Ask Codex to do anything', leaves: (ws, bin) => stopCodexDaemon(ws, bin, ws.env) },
  },
  'qwen-code': {
    pinned: 'Qwen Code 0.24.4',
    api: chatApi,
    aepRun: { as: 'qwen-code', binVar: 'AEP_QWEN_BIN' },
    async setUp(ws, mock) {
      writeQwenSettings(ws);
      return qwenEnv(ws, mock.baseUrl);
    },
    install: (ws, to) =>
      installQwenCode({
        user: true,
        port: to.port,
        secret: to.secret,
        neutral: qwenCode.replies.neutral,
        attentionTimeoutMs: to.attentionTimeoutMs ?? qwenCode.attentionTimeoutMs,
        env: { HOME: ws.home },
      }),
    run: (ws, _mock, bin, prompt, o) =>
      spawnCli(
        bin,
        ['--approval-mode', 'yolo', '-o', 'stream-json', ...(o.args ?? []), prompt],
        ws.project,
        { ...ws.env, QWEN_CODE_SUPPRESS_YOLO_WARNING: '1' },
        o.killAfterMs,
      ),
    tui: { args: [], ready: 'Type your message' },
  },
  cline: {
    pinned: 'Cline 3.0.65',
    api: chatApi,
    async setUp(ws, mock, bin) {
      const clineDir = join(ws.home, '.cline');
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: ws.home,
        CLINE_DIR: clineDir,
        CLINE_DATA_DIR: join(clineDir, 'data'),
        CLINE_NO_AUTO_UPDATE: '1',
        CLINE_HUB_PORT: String(await freePort()),
        OPENAI_API_KEY: 'dummy',
        NO_UPDATE_NOTIFIER: '1',
        DO_NOT_TRACK: '1',
        // The hub runs the hook files with its environment: the shim traces every hook, delivered or not.
        AEP_HOOK_TRACE: 'all',
      };
      const args = ['auth', '-p', 'openai-compatible', '-k', 'dummy', '-b', mock.baseUrl, '-m', 'mock-model'];
      const auth = await spawnCli(bin, args, ws.project, env, 90_000).done;
      assert.is(auth.code, 0, auth.stdout + auth.stderr);
      return env;
    },
    // The hook files read the secret from the adapter's state directory when they run (D21).
    install: (ws, to) =>
      installCline({
        user: true,
        port: to.port,
        secret: to.secret,
        neutral: cline.replies.neutral,
        attentionTimeoutMs: to.attentionTimeoutMs ?? 55_000,
        env: { CLINE_DIR: ws.env.CLINE_DIR, AEP_STATE_DIR: to.stateDir },
      }),
    // The adapter reaches the hub the CLI's environment names, and carries send_input through it.
    adapterEnv: (cli) => ({ CLINE_DATA_DIR: cli.CLINE_DATA_DIR, AEP_CLINE_HUB_CONTROL: '1', AEP_INSTRUCT: '1' }),
  },
  copilot: {
    pinned: 'GitHub Copilot CLI 1.0.102',
    api: chatApi,
    aepRun: { as: 'copilot', binVar: 'AEP_COPILOT_BIN' },
    // BYOK from the environment: no GitHub login (copilot-opencode-observed §1).
    setUp: async (ws, mock) => ({
      PATH: process.env.PATH,
      HOME: ws.home,
      TERM: 'dumb',
      NO_COLOR: '1',
      COPILOT_OFFLINE: 'true',
      COPILOT_AUTO_UPDATE: 'false',
      COPILOT_PROVIDER_BASE_URL: mock.baseUrl,
      COPILOT_PROVIDER_API_KEY: 'sk-mock',
      COPILOT_MODEL: 'mock-model',
    }),
    install: (ws, to) => {
      copilotInstaller.install({
        project: ws.project,
        port: to.port,
        secret: to.secret,
        neutral: {},
        attentionTimeoutMs: to.attentionTimeoutMs ?? 55_000,
        env: { HOME: ws.home, AEP_STATE_DIR: to.stateDir },
      });
    },
    // The project's hooks run only in a trusted folder: this run trusts it (--trust-folder).
    run: (ws, _mock, bin, prompt, o) =>
      spawnCli(
        bin,
        [
          '--trust-folder',
          ...(o.bypassPermissions === false ? [] : ['--allow-all']),
          '--output-format',
          'json',
          ...(o.args ?? []),
          '-p',
          prompt,
        ],
        ws.project,
        ws.env,
        o.killAfterMs,
      ),
  },
};
