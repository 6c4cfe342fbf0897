// Runs the pinned opencode 1.18.33 `opencode serve` against the loopback mock model
// (copilot-opencode-observed §2): a project `opencode.json` with an OpenAI-compatible provider at
// the mock, HOME and the XDG folders in the workspace, OPENCODE_SERVER_PASSWORD from a mode-600
// file, and a client of its own (the V2 API a TUI or SDK uses): open a session, send a prompt.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from './shared-dir.js';
import { freePort } from './readme-blocks.js';
import type { Workspace } from './vendor-e2e.js';

export interface OpencodeServe {
  url: string;
  password: string;
  /** The mode-600 file holding the password. */
  passwordFile: string;
  child: ChildProcess;
  output(): string;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** Opens a session on the mock model in the workspace's project and returns its id. */
  session(): Promise<string>;
  /** Sends a prompt through the V2 route, as the person's client would. */
  prompt(session: string, text: string): Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** The pinned binary, if installed. */
export function opencodeBinary(): string | undefined {
  const dir = process.env.AEP_VENDOR_CLIS_DIR ?? join(projectRoot, '.vendor-clis');
  const bin = join(dir, 'opencode', 'node_modules', '.bin', 'opencode');
  return existsSync(bin) ? bin : undefined;
}

/** The environment opencode runs with in the workspace: nothing of the machine's own settings. */
export function opencodeEnv(ws: Workspace): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: ws.home,
    XDG_CONFIG_HOME: join(ws.home, '.config'),
    XDG_DATA_HOME: join(ws.home, '.local', 'share'),
    XDG_CACHE_HOME: join(ws.home, '.cache'),
    XDG_STATE_HOME: join(ws.home, '.local', 'state'),
    OPENCODE_DISABLE_AUTOUPDATE: '1',
    OPENCODE_DISABLE_MODELS_FETCH: '1',
    OPENCODE_DISABLE_SHARE: '1',
    OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
    OPENCODE_DISABLE_CLAUDE_CODE: '1',
  };
}

/** `opencode.json` in the project: the mock as the only model; `ask` makes bash ask permission first. */
export function writeOpencodeConfig(ws: Workspace, mockBaseUrl: string, bash: 'allow' | 'ask' = 'allow'): void {
  mkdirSync(ws.project, { recursive: true });
  const config = {
    model: 'mock/mock-model',
    small_model: 'mock/mock-model',
    autoupdate: false,
    share: 'disabled',
    permission: { edit: 'allow', bash, webfetch: 'allow', external_directory: 'allow' },
    provider: {
      mock: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Mock',
        options: { baseURL: mockBaseUrl, apiKey: 'sk-mock' },
        models: { 'mock-model': { name: 'mock-model', tool_call: true, limit: { context: 128000, output: 8192 } } },
      },
    },
  };
  writeFileSync(join(ws.project, 'opencode.json'), JSON.stringify(config, null, 2));
}

export async function startOpencodeServe(
  ws: Workspace,
  mockBaseUrl: string,
  o: { bash?: 'allow' | 'ask' } = {},
): Promise<OpencodeServe> {
  const bin = opencodeBinary();
  if (bin === undefined) throw new Error('opencode not installed: run scripts/install-vendor-cli.sh opencode');
  writeOpencodeConfig(ws, mockBaseUrl, o.bash);
  const password = randomBytes(16).toString('hex');
  const passwordFile = join(ws.root, 'opencode.password');
  writeFileSync(passwordFile, password, { mode: 0o600 });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(bin, ['serve', '--port', String(port), '--hostname', '127.0.0.1', '--print-logs'], {
    cwd: ws.project,
    env: { ...opencodeEnv(ws), OPENCODE_SERVER_PASSWORD: password },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const listening = new Promise<void>((resolve, reject) => {
    const seen = (d: Buffer) => {
      out += d.toString();
      if (out.length > 200_000) out = out.slice(-100_000);
      if (out.includes('opencode server listening on')) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`opencode serve exited (${code}) before listening:\n${out}`)));
  });
  await listening;
  const auth = `Basic ${Buffer.from(`opencode:${password}`).toString('base64')}`;
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  return {
    url,
    password,
    passwordFile,
    child,
    output: () => out,
    api,
    async session() {
      // The model is named: a session opened before the server has read its catalogue takes another default.
      const r = await api('POST', '/api/session', {
        location: { directory: ws.project },
        model: { providerID: 'mock', id: 'mock-model' },
      });
      if (r.status !== 200) throw new Error(`opencode did not open a session: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body.data.id as string;
    },
    async prompt(session, text) {
      const r = await api('POST', `/api/session/${session}/prompt`, { prompt: { text } });
      if (r.status !== 200) throw new Error(`opencode refused the prompt: ${r.status} ${JSON.stringify(r.body)}`);
    },
    async kill(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill(signal);
      await exited;
    },
  };
}
