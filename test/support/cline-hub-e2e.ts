// Cline 3.0.65's real hub daemon (`cline hub ensure`) for the end-to-end suites, on the suite's
// stack (e2e-stack.ts: the mock Chat Completions API, this project's relay and adapter with
// AEP_CLINE_HUB_CONTROL=1, the home with Cline's provider pointing at the mock and the real
// installer's hook files), with a hub client of the test's own that creates and starts sessions
// the way Cline's UI does (cline-hub-observed §1.7) and sees the hub's own approval ids.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { HubConnection, type HubReply } from '../../src/adapters/cline/hub/connection.js';
import { resolveHubEndpoint } from '../../src/adapters/cline/hub/endpoint.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { reported, type E2e } from './e2e-stack.js';
import { spawnCli, tailOf } from './vendor-e2e.js';

type Outcome = { code: number | null; out: string };

/**
 * `cline hub ensure`, again while it gives up on its own start-up limit: Cline 3.0.65 waits 15 s
 * for the detached hub and then fails, though the hub may come up just after (a busy machine);
 * `ensure` attaches to a hub that runs, so the next call settles it.
 */
async function ensureHub(runCline: (args: string[]) => Promise<Outcome>): Promise<Outcome> {
  let r = await runCline(['hub', 'ensure']);
  for (let i = 0; i < 3 && r.code !== 0 && /waiting for detached hub startup/.test(r.out); i += 1)
    r = await runCline(['hub', 'ensure']);
  return r;
}

export interface ClineHub {
  /** The test's own hub client, as Cline's UI. */
  driver: HubConnection;
  /** The hub's approval ids by session, as Cline's UI sees them. */
  approvalIds: Map<string, string>;
  /** The hub daemon's process. */
  pid: number | undefined;
  /** A hub session in act mode; `ask` makes run_commands ask for approval. */
  createSession(ask?: boolean): Promise<string>;
  /** Starts a turn as a user would; resolves when the turn ends. */
  startTurn(session: string, prompt: string): Promise<HubReply>;
  /**
   * A new session whose turn's shell call waits for a gate (`tools`: calls the turn asks for in
   * all); resolves once the call is on the stream. `release` lets it end; `turn` ends with the turn.
   */
  slowTurn(tag: string, tools?: number): Promise<{ session: string; release(): void; turn: Promise<HubReply> }>;
  /** A new session whose run_commands asks first, its turn started: resolves with the request on the stream. */
  asking(tag: string): Promise<{ session: string; turn: Promise<HubReply>; request: AepEvent }>;
  /** Stops the hub daemon by its pid (it outlives its clients, vendor-clis-observed §4.2). */
  stop(): Promise<void>;
}

/**
 * Registers, after the suite's start, the hub's: the adapter's relay link greeted, `cline hub
 * ensure` in the suite's home, the test's hub client and the adapter's registered on the hub; the
 * hub stops with the suite, even when an earlier step of the teardown failed.
 */
export function clineHub(e2e: E2e<'cline'>): ClineHub {
  const approvalIds = new Map<string, string>();
  const hub: ClineHub = {
    driver: undefined as unknown as HubConnection,
    approvalIds,
    pid: undefined,
    async createSession(ask = false) {
      const { project } = e2e.home;
      const cfg = {
        providerId: 'openai-compatible',
        modelId: 'mock-model',
        apiKey: 'dummy',
        cwd: project,
        workspaceRoot: project,
        systemPrompt: '',
        mode: 'act',
        enableTools: true,
        enableSpawnAgent: false,
        enableAgentTeams: false,
      };
      const reply = await hub.driver.command('session.create', undefined, {
        workspaceRoot: project,
        cwd: project,
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
    startTurn: (session, prompt) => hub.driver.command('session.send_input', session, { prompt }),
    async slowTurn(tag, tools) {
      const session = await hub.createSession();
      const gate = join(e2e.home.root, `${tag}.go`);
      const more = tools === undefined ? '' : `[[TOOLS:${tools}]] `;
      const turn = hub.startTurn(session, `[[TURN]] [[WAITFILE:${gate}]] ${more}${tag} run the slow command`);
      await e2e.stack.waitFor(`${tag}: the slow tool call`, () => e2e.stack.find(session, 'tool.requested'));
      return { session, release: () => writeFileSync(gate, ''), turn };
    },
    async asking(tag) {
      const session = await hub.createSession(true);
      const turn = hub.startTurn(session, `[[TURN]] ${tag} run it`);
      const request = await e2e.stack.waitFor('attention.requested', () =>
        e2e.stack.find(session, 'attention.requested'),
      );
      return { session, turn, request };
    },
    async stop() {
      const pid = hub.pid;
      if (pid === undefined) return;
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        return;
      }
      for (let i = 0; i < 200 && existsSync(`/proc/${pid}`); i += 1) await new Promise((r) => setTimeout(r, 50));
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    },
  };
  if (!e2e.installed) return hub;

  test.before(
    reported(async () => {
      const { stack, home } = e2e;
      const hubLog = join(home.env.CLINE_DATA_DIR!, 'logs', 'hub-daemon.log');
      stack.evidence.set('Cline hub log', () => tailOf(hubLog));
      stack.evidence.set('Cline hub discovery record', () => {
        const ep = resolveHubEndpoint(home.env);
        return 'missing' in ep ? ep.missing : `hub at ${ep.url} (pid ${String(ep.pid)})`;
      });
      e2e.defer(() => stack.keep(hubLog, 'hub-daemon.log'));
      e2e.deferAfterAdapter(() => hub.stop());
      // Every hook event reaches the relay only over a greeted link: fail here, with the evidence, if it is not.
      await stack.waitFor(
        "the adapter's relay link greeted",
        () => stack.said.find((l) => l.includes('relay connected')),
        20_000,
      );
      const runCline = async (args: string[]): Promise<Outcome> => {
        const r = await spawnCli(e2e.binary, args, home.project, home.env, 90_000).done;
        return { code: r.code, out: r.stdout + r.stderr };
      };
      const ensure = await ensureHub(runCline);
      assert.is(ensure.code, 0, ensure.out);
      const ep = resolveHubEndpoint(home.env);
      assert.ok(!('missing' in ep), JSON.stringify(ep));
      hub.pid = 'pid' in ep ? ep.pid : undefined;
      hub.driver = new HubConnection({
        endpoint: () => resolveHubEndpoint(home.env),
        clientId: 'aep-e2e-driver',
        clientType: 'aep-e2e-driver',
        commandTimeoutMs: 120_000,
      });
      e2e.defer(() => hub.driver.close());
      hub.driver.events$.subscribe((e) => {
        if (e.event === 'approval.requested' && e.sessionId !== undefined && typeof e.payload.approvalId === 'string')
          approvalIds.set(e.sessionId, e.payload.approvalId);
      });
      await stack.waitFor('the test driver on the hub', () => (hub.driver.ready() ? true : undefined), 20_000);
      // The adapter's own hub connection registers as aep-adapter-cline with no capabilities.
      let clients: { clientType?: string; capabilities?: unknown[] }[] = [];
      const adapter = await stack.waitFor(
        'the adapter registered on the hub',
        () => {
          void hub.driver.command('client.list', undefined, {}).then((r) => {
            clients = (r.payload?.clients as typeof clients | undefined) ?? [];
          });
          return clients.find((c) => c.clientType === 'aep-adapter-cline');
        },
        20_000,
      );
      assert.equal(adapter.capabilities ?? [], []);
    }),
  );
  return hub;
}
