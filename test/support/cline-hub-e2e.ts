// Wiring for end-to-end tests on Cline 3.0.65's real hub daemon (`cline hub ensure`): the
// loopback mock Chat Completions API, this project's relay and adapter (AEP_CLINE_HUB_CONTROL=1),
// the real installer's hook files, and a hub client of the test's own that creates and starts
// sessions the way Cline's UI does (cline-hub-observed §1.7) and sees the hub's own approval ids.
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { cline } from '../../src/adapters/cline/table.js';
import { installCline } from '../../src/adapters/cline/installer.js';
import { HubConnection, type HubReply } from '../../src/adapters/cline/hub/connection.js';
import { resolveHubEndpoint } from '../../src/adapters/cline/hub/endpoint.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from './mock-openai.js';
import { bodyHas, startVendorStack, vendorBinary, workspace, type VendorStack, type Workspace } from './vendor-e2e.js';

/**
 * `cline hub ensure`, again while it gives up on its own start-up limit: Cline 3.0.65 waits 15 s
 * for the detached hub and then fails, though the hub may come up just after (a busy machine);
 * `ensure` attaches to a hub that runs, so the next call settles it.
 */
export async function ensureHub(
  runCline: (args: string[]) => Promise<{ code: number | null; out: string }>,
): Promise<{ code: number | null; out: string }> {
  let r = await runCline(['hub', 'ensure']);
  for (let i = 0; i < 3 && r.code !== 0 && /waiting for detached hub startup/.test(r.out); i += 1)
    r = await runCline(['hub', 'ensure']);
  return r;
}

export interface ClineHub {
  mock: MockOpenAi;
  stack: VendorStack;
  ws: Workspace;
  /** The test's own hub client, as Cline's UI. */
  driver: HubConnection;
  /** The hub's approval ids by session, as Cline's UI sees them. */
  approvalIds: Map<string, string>;
  /** A hub session in act mode; `ask` makes run_commands ask for approval. */
  createSession(ask?: boolean): Promise<string>;
  /** Starts a turn as a user would; resolves when the turn ends. */
  startTurn(session: string, prompt: string): Promise<HubReply>;
  /** The session's first attention.requested. */
  approval(session: string): Promise<AepEvent>;
  /** The tool results the model saw in the requests of one turn (by its tag). */
  toolResultsOf(tag: string): string[];
  close(): Promise<void>;
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

type ChatMessage = { role?: string; content?: unknown };
const messagesOf = (r: RecordedRequest): ChatMessage[] =>
  (r.body as { messages?: ChatMessage[] } | undefined)?.messages ?? [];

/** `control: false`: the adapter only taps the hub (AEP_CLINE_HUB=1), without its verbs. */
export async function startClineHub(opts: { control?: boolean } = {}): Promise<ClineHub> {
  const bin = vendorBinary('cline');
  if (bin === undefined) throw new Error('Cline CLI not installed: run scripts/install-vendor-cli.sh cline');
  const mock = await startMockOpenAi();
  const ws = workspace('aep-cline-');
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
  };
  const runCline = (args: string[]): Promise<{ code: number | null; out: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn(bin, args, { cwd: ws.project, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.stderr.on('data', (d: Buffer) => (out += d.toString()));
      const killer = setTimeout(() => child.kill('SIGKILL'), 90_000);
      child.on('error', (e) => {
        clearTimeout(killer);
        reject(e);
      });
      child.on('close', (code) => {
        clearTimeout(killer);
        resolve({ code, out });
      });
    });
  const stack = await startVendorStack('cline', {
    CLINE_DATA_DIR: env.CLINE_DATA_DIR,
    ...(opts.control === false ? { AEP_CLINE_HUB: '1' } : { AEP_CLINE_HUB_CONTROL: '1' }),
    AEP_INSTRUCT: '1',
  });
  // The hook files read the secret from the adapter's state directory when they run (D21).
  installCline({
    user: true,
    port: stack.running.adapter.port,
    secret: stack.secret,
    neutral: cline.replies.neutral,
    attentionTimeoutMs: 55_000,
    env: { CLINE_DIR: clineDir, AEP_STATE_DIR: stack.stateDir },
  });
  const auth = await runCline([
    'auth',
    '-p',
    'openai-compatible',
    '-k',
    'dummy',
    '-b',
    mock.baseUrl,
    '-m',
    'mock-model',
  ]);
  assert.is(auth.code, 0, auth.out);
  const ensure = await ensureHub(runCline);
  assert.is(ensure.code, 0, ensure.out);
  const ep = resolveHubEndpoint(env);
  assert.ok(!('missing' in ep), JSON.stringify(ep));
  const hubPid = 'pid' in ep ? ep.pid : undefined;
  const driver = new HubConnection({
    endpoint: () => resolveHubEndpoint(env),
    clientId: 'aep-e2e-driver',
    clientType: 'aep-e2e-driver',
    commandTimeoutMs: 120_000,
  });
  const approvalIds = new Map<string, string>();
  driver.events$.subscribe((e) => {
    if (e.event === 'approval.requested' && e.sessionId !== undefined && typeof e.payload.approvalId === 'string')
      approvalIds.set(e.sessionId, e.payload.approvalId);
  });
  await stack.waitFor('the test driver on the hub', () => (driver.ready() ? true : undefined), 20_000);
  let clients: { clientType?: string }[] = [];
  await stack.waitFor(
    'the adapter registered on the hub',
    () => {
      void driver.command('client.list', undefined, {}).then((r) => {
        clients = (r.payload?.clients as typeof clients | undefined) ?? [];
      });
      return clients.find((c) => c.clientType === 'aep-adapter-cline');
    },
    20_000,
  );

  /** The hub daemon outlives its clients (vendor-clis-observed §4.2): stopped by its pid. */
  async function stopHub(): Promise<void> {
    if (hubPid === undefined) return;
    try {
      process.kill(hubPid, 'SIGTERM');
    } catch {
      return;
    }
    for (let i = 0; i < 200 && existsSync(`/proc/${hubPid}`); i += 1) await new Promise((r) => setTimeout(r, 50));
    try {
      process.kill(hubPid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }

  return {
    mock,
    stack,
    ws,
    driver,
    approvalIds,
    async createSession(ask = false) {
      const cfg = {
        providerId: 'openai-compatible',
        modelId: 'mock-model',
        apiKey: 'dummy',
        cwd: ws.project,
        workspaceRoot: ws.project,
        systemPrompt: '',
        mode: 'act',
        enableTools: true,
        enableSpawnAgent: false,
        enableAgentTeams: false,
      };
      const reply = await driver.command('session.create', undefined, {
        workspaceRoot: ws.project,
        cwd: ws.project,
        sessionConfig: cfg,
        metadata: { provider: 'openai-compatible', model: 'mock-model', enableTools: true, interactive: true },
        runtimeOptions: { mode: 'act', enableTools: true, autoApproveTools: !ask },
        ...(ask ? { toolPolicies: { run_commands: { autoApprove: false } } } : {}),
        modelSelection: { provider: 'openai-compatible', model: 'mock-model', apiKey: 'dummy' },
      });
      assert.ok(reply.ok, JSON.stringify(reply));
      const session = (reply.payload?.session as { sessionId?: string } | undefined)?.sessionId;
      assert.type(session, 'string');
      return session!;
    },
    startTurn: (session, prompt) => driver.command('session.send_input', session, { prompt }),
    approval: (session) =>
      stack.waitFor('attention.requested', () =>
        stack.events.find((e) => e.session === session && e.type === 'attention.requested'),
      ),
    toolResultsOf: (tag) =>
      mock
        .modelRequests()
        .filter((r) => messagesOf(r).some((m) => bodyHas(m.content, tag)))
        .flatMap((r) =>
          messagesOf(r)
            .filter((m) => m.role === 'tool')
            .map((m) => JSON.stringify(m.content)),
        ),
    async close() {
      // The hub daemon outlives this process: it is stopped even when an earlier step fails.
      try {
        await driver.close();
        await stack.close();
        await mock.close();
      } finally {
        await stopHub();
        rmSync(ws.root, { recursive: true, force: true });
      }
    },
  };
}
