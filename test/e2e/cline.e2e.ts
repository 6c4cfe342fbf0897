// Cline 3.0.65 end to end: the real CLI's hub daemon (`cline hub ensure`) runs the session against
// the loopback mock Chat Completions API; the real installer writes Cline's ten hook files, which
// run the shim to this project's adapter; the adapter's hub connection (AEP_CLINE_HUB_CONTROL=1)
// carries send_input; every command goes through this project's relay as a consumer sends it.
// The session itself is created and started through the hub by the test (cline-hub-observed §1.7):
// a `[[WAITFILE]]` shell call holds the turn open until the test releases it.
// A failed wait prints the evidence (vendor-e2e.ts): the hub's own log, each hook's shim outcome
// (AEP_HOOK_TRACE=all), the adapter's errors and status lines, the relay's log and connections.
// Cause of the runs that failed 0/7 with an empty stream: the adapter's relay link completed its
// hello while the adapter was still opening the Cline hub (before the outbox subscribed to the
// link's state), and the link's state was a plain stream of changes, so the outbox never heard
// it was up: every hook event stayed in the adapter's log and "relay connected" was never said.
// The link now tells a late subscriber its current state and gives up a handshake with no hello
// within 10 s (test/relay/link-handshake.test.ts reproduces both).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { cline } from '../../src/adapters/cline/table.js';
import { installCline } from '../../src/adapters/cline/installer.js';
import { HubConnection } from '../../src/adapters/cline/hub/connection.js';
import { resolveHubEndpoint } from '../../src/adapters/cline/hub/endpoint.js';
import { auditFiles } from '../../src/audit/audit.js';
import { RESPOND_EXIT, runRespond } from '../../src/cli/respond-command.js';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import {
  bodyHas,
  startVendorStack,
  tailOf,
  vendorBinary,
  workspace,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';
import { projectRoot } from '../support/shared-dir.js';
import { ensureHub } from '../support/cline-hub-e2e.js';

const bin = vendorBinary('cline');
let mock: MockOpenAi;
let stack: VendorStack;
let ws: Workspace;
let env: NodeJS.ProcessEnv;
let driver: HubConnection;
let hubPid: number | undefined;
/** The hub's own approval ids by session, as Cline's UI would see them. */
const approvalIds = new Map<string, string>();
const SENDER = { agent: 'e2e-operator' };

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

function runCline(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin!, args, { cwd: ws.project, env, stdio: ['ignore', 'pipe', 'pipe'] });
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
}

async function waitUntil<T>(what: string, probe: () => T | undefined, limitMs = 60_000): Promise<T> {
  return stack.waitFor(what, probe, limitMs);
}

/** A hub session in act mode (vendor-clis-observed §4.4); `ask` makes run_commands ask for approval. */
async function createSession(ask = false): Promise<string> {
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
}

/** Starts a turn the way a user would (immediate delivery); resolves when the turn ends. */
const startTurn = (session: string, prompt: string) => driver.command('session.send_input', session, { prompt });

const sendInput = (session: string, text: string, delivery?: string): AepCommand =>
  command(SENDER, session, {
    type: 'x.cline.control.send_input',
    data: delivery === undefined ? { text } : { text, delivery },
    capture: 'redacted',
  });

type ChatMessage = { role?: string; content?: unknown };
const messagesOf = (r: RecordedRequest): ChatMessage[] =>
  (r.body as { messages?: ChatMessage[] } | undefined)?.messages ?? [];
const requestsWith = (tag: string) =>
  mock.modelRequests().filter((r) => messagesOf(r).some((m) => bodyHas(m.content, tag)));
/** Each event once: the consumer may see a redelivery (same id) of an event it already has. */
const causedBy = (id: string): string[] => [
  ...new Map(stack.events.filter((e) => e.cause === id).map((e) => [e.id, e.type])).values(),
];
const find = (type: string, cause: string): AepEvent | undefined =>
  stack.events.find((e) => e.type === type && e.cause === cause);

/** uvu drops an error thrown in test.before (every test then just counts as not run): print it. */
const reported = (setUp: () => Promise<void>) => async (): Promise<void> => {
  try {
    await setUp();
  } catch (err) {
    console.error(`test.before failed: ${(err as Error).stack ?? String(err)}`);
    throw err;
  }
};

test.before(
  reported(async () => {
    if (bin === undefined) throw new Error('Cline CLI not installed: run scripts/install-vendor-cli.sh cline');
    mock = await startMockOpenAi();
    ws = workspace('aep-cline-');
    const clineDir = join(ws.home, '.cline');
    env = {
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
    stack = await startVendorStack('cline', {
      CLINE_DATA_DIR: env.CLINE_DATA_DIR,
      AEP_CLINE_HUB_CONTROL: '1',
      AEP_INSTRUCT: '1',
    });
    stack.evidence.set('Cline hub log', () => tailOf(join(env.CLINE_DATA_DIR!, 'logs', 'hub-daemon.log')));
    stack.evidence.set('Cline hub discovery record', () => {
      const ep = resolveHubEndpoint(env);
      return 'missing' in ep ? ep.missing : `hub at ${ep.url} (pid ${String(ep.pid)})`;
    });
    // Every hook event reaches the relay only over a greeted link: fail here, with the evidence, if it is not.
    await waitUntil(
      "the adapter's relay link greeted",
      () => stack.said.find((l) => l.includes('relay connected')),
      20_000,
    );
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
    hubPid = 'pid' in ep ? ep.pid : undefined;
    driver = new HubConnection({
      endpoint: () => resolveHubEndpoint(env),
      clientId: 'aep-e2e-driver',
      clientType: 'aep-e2e-driver',
      commandTimeoutMs: 120_000,
    });
    driver.events$.subscribe((e) => {
      if (e.event === 'approval.requested' && e.sessionId !== undefined && typeof e.payload.approvalId === 'string')
        approvalIds.set(e.sessionId, e.payload.approvalId);
    });
    await waitUntil('the test driver on the hub', () => (driver.ready() ? true : undefined), 20_000);
    // The adapter's own hub connection registers as aep-adapter-cline with no capabilities.
    let clients: { clientType?: string; capabilities?: unknown[] }[] = [];
    await waitUntil(
      'the adapter registered on the hub',
      () => {
        void driver.command('client.list', undefined, {}).then((r) => {
          clients = (r.payload?.clients as typeof clients | undefined) ?? [];
        });
        return clients.find((c) => c.clientType === 'aep-adapter-cline');
      },
      20_000,
    ).then((c) => assert.equal(c.capabilities ?? [], []));
  }),
);

/** The hub daemon outlives its clients (vendor-clis-observed §4.2): stop it by its pid. */
async function stopHub(): Promise<void> {
  if (hubPid === undefined) return;
  try {
    process.kill(hubPid, 'SIGTERM');
  } catch {
    return;
  }
  for (let i = 0; i < 200; i += 1) {
    if (!existsSync(`/proc/${hubPid}`)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  try {
    process.kill(hubPid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
}

test.after(async () => {
  stack?.keep(join(env.CLINE_DATA_DIR!, 'logs', 'hub-daemon.log'), 'hub-daemon.log');
  await driver?.close();
  await stack?.close();
  await mock?.close();
  await stopHub();
  if (ws) rmSync(ws.root, { recursive: true, force: true });
});

test('send_input steer during a slow tool reaches the next model request of the same turn; input.sent and input.consumed name the command', async () => {
  const session = await createSession();
  const gate = join(ws.root, 'steer.go');
  const turn = startTurn(session, `[[TURN]] [[WAITFILE:${gate}]] STEERTEST run the slow command`);
  await waitUntil('the slow tool call', () =>
    stack.events.find((e) => e.session === session && e.type === 'tool.requested'),
  );
  const cmd = sendInput(session, 'STEER-MARK-1 prefer the small fix', 'steer');
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'accepted', `${JSON.stringify(settled)} ${stack.errors.join('; ')}`);
  const sent = await waitUntil('input.sent', () => find('x.cline.input.sent', cmd.id));
  assert.equal(sent.data, { delivery: 'steer' });
  writeFileSync(gate, '');
  const done = await turn;
  assert.ok(done.ok, JSON.stringify(done));
  const consumed = await waitUntil('input.consumed', () => find('x.cline.input.consumed', cmd.id));
  assert.type((consumed.data as { queued_ms: number }).queued_ms, 'number');
  const steered = requestsWith('STEER-MARK-1');
  assert.ok(steered.length > 0, 'the steer reached a model request');
  assert.ok(
    bodyHas(steered[0]!.body, 'STEERTEST'),
    'the same turn: its first request carrying the steer is of the STEERTEST turn',
  );
  assert.ok(
    messagesOf(steered[0]!).some((m) => m.role === 'tool'),
    'after the tool result',
  );
  assert.equal(causedBy(cmd.id), ['control.accepted', 'x.cline.input.sent', 'x.cline.input.consumed']);
});

test('send_input queue during a turn reaches the first request of the next turn', async () => {
  const session = await createSession();
  const gate = join(ws.root, 'queue.go');
  const turn = startTurn(session, `[[TURN]] [[WAITFILE:${gate}]] QUEUETEST run the slow command`);
  await waitUntil('the slow tool call', () =>
    stack.events.find((e) => e.session === session && e.type === 'tool.requested'),
  );
  const cmd = sendInput(session, 'QUEUE-MARK-1 then update the changelog');
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'accepted', `${JSON.stringify(settled)} ${stack.errors.join('; ')}`);
  assert.equal((await waitUntil('input.sent', () => find('x.cline.input.sent', cmd.id))).data, { delivery: 'queue' });
  const before = mock.modelRequests().length;
  writeFileSync(gate, '');
  await turn;
  await waitUntil('input.consumed', () => find('x.cline.input.consumed', cmd.id));
  const queued = await waitUntil('a request with the queued text', () => requestsWith('QUEUE-MARK-1')[0]);
  const later = mock.modelRequests().slice(before);
  const first = later.indexOf(queued);
  assert.ok(first >= 0);
  // The current turn's remaining request(s) never saw it; the one that did ends with it as the user message.
  assert.ok(later.slice(0, first).every((r) => !bodyHas(r.body, 'QUEUE-MARK-1')));
  const last = messagesOf(queued).at(-1)!;
  assert.is(last.role, 'user');
  assert.ok(bodyHas(last.content, 'QUEUE-MARK-1'));
});

test('an idle session refuses send_input: it would start a turn', async () => {
  const session = await createSession();
  // A finished turn leaves the session idle; the hooks saw it open and close.
  const done = await startTurn(session, '[[TURN]] IDLETEST one quick command');
  assert.ok(done.ok, JSON.stringify(done));
  await waitUntil('the turn end', () => stack.events.find((e) => e.session === session && e.type === 'run.finished'));
  const requests = mock.modelRequests().length;
  const cmd = sendInput(session, 'IDLE-MARK-1 should not start anything', 'steer');
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'rejected', JSON.stringify(settled));
  assert.equal(find('control.rejected', cmd.id)!.data, {
    reason: 'refused',
    detail: 'session idle: send_input would start a turn; send it while the agent is working',
  });
  await new Promise((r) => setTimeout(r, 500));
  assert.is(mock.modelRequests().length, requests, 'no turn started');
  assert.is(requestsWith('IDLE-MARK-1').length, 0);
});

test('instruct reaches the next model request after a tool call', async () => {
  const session = await createSession();
  const gate = join(ws.root, 'instruct.go');
  const turn = startTurn(session, `[[TURN]] [[WAITFILE:${gate}]] INSTRUCTTEST run the slow command`);
  await waitUntil('the slow tool call', () =>
    stack.events.find((e) => e.session === session && e.type === 'tool.requested'),
  );
  const { cmd, settled } = await stack.instruct(session, 'INSTRUCT-MARK-1 keep the diff small');
  assert.is(settled.outcome, 'accepted');
  writeFileSync(gate, '');
  await turn;
  const delivered = await waitUntil('delivered', () => find('x.cline.instruction.delivered', cmd.id));
  assert.type((delivered.data as { queued_ms: number }).queued_ms, 'number');
  const carried = requestsWith('INSTRUCT-MARK-1');
  assert.ok(carried.length > 0);
  assert.ok(bodyHas(carried[0]!.body, 'hook_context'), "as Cline's <hook_context> user message");
  assert.ok(messagesOf(carried[0]!).some((m) => m.role === 'tool'));
});

test('control.cancel aborts the run and run.cancelled names the command', async () => {
  const session = await createSession();
  const gate = join(ws.root, 'cancel.go');
  const turn = startTurn(session, `[[TURN]] [[WAITFILE:${gate}]] [[TOOLS:2]] CANCELTEST run the slow command`);
  await waitUntil('the slow tool call', () =>
    stack.events.find((e) => e.session === session && e.type === 'tool.requested'),
  );
  const wrong = command(SENDER, session, { type: 'control.cancel', data: { scope: 'session' } });
  const refused = await stack.send(wrong);
  assert.is(refused.outcome, 'rejected', 'the hub has no session stop');
  const cmd = command(SENDER, session, { type: 'control.cancel', data: { scope: 'run' } });
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  const cancelled = await waitUntil('run.cancelled', () => find('run.cancelled', cmd.id));
  assert.equal(cancelled.data, { by: 'control' });
  writeFileSync(gate, '');
  await turn;
  // The aborted turn made no further model request for its second tool call.
  assert.ok(requestsWith('CANCELTEST').length <= 2, `requests: ${requestsWith('CANCELTEST').length}`);
  const again = await stack.send(command(SENDER, session, { type: 'control.cancel', data: { scope: 'run' } }));
  assert.is(again.outcome, 'rejected', 'no active run left to cancel');
  // The hub session outlives the abort (3.0.65 fires SessionShutdown, the session stays idle):
  // a new turn reopens it and steering works again.
  const next = await startTurn(session, '[[TURN]] AFTERCANCEL one quick command');
  assert.ok(next.ok, JSON.stringify(next));
  await waitUntil('reopened', () =>
    stack.events.find((e) => e.session === session && e.type === 'x.cline.session.reopened'),
  );
});

const sink = () => {
  let text = '';
  return {
    stream: new Writable({
      write(chunk, _enc, done) {
        text += String(chunk);
        done();
      },
    }),
    text: () => text,
  };
};

/** The tool results the model saw in the requests of one turn (by its tag). */
const toolResultsOf = (tag: string): string[] =>
  requestsWith(tag).flatMap((r) =>
    messagesOf(r)
      .filter((m) => m.role === 'tool')
      .map((m) => JSON.stringify(m.content)),
  );

async function approval(session: string): Promise<AepEvent> {
  return waitUntil('attention.requested', () =>
    stack.events.find((e) => e.session === session && e.type === 'attention.requested'),
  );
}

test('an approval answered through aep-steer respond runs or refuses the tool; one answered in Cline is mirrored oob', async () => {
  const respond = async (session: string, request: string, word: string): Promise<number> => {
    const out = sink();
    const code = await runRespond(
      word,
      { relay: stack.relayUrl, token: stack.relayToken, sender: 'e2e-operator', session, request, timeout: '20000' },
      { out: out.stream, err: sink().stream },
    );
    assert.is(code, RESPOND_EXIT.answered, out.text());
    return code;
  };
  // approve: the tool runs and its output reaches the model.
  const s1 = await createSession(true);
  const t1 = startTurn(s1, '[[TURN]] APPROVETEST run it');
  const r1 = await approval(s1);
  assert.equal((r1.data as { respond_via: string[] }).respond_via, ['control', 'oob']);
  assert.equal(
    (r1.data as { options: { id: string }[] }).options.map((o) => o.id),
    ['approve', 'deny'],
  );
  assert.is(r1.subject, 'run_commands');
  await respond(s1, r1.id, 'approve');
  assert.ok((await t1).ok);
  assert.ok(
    toolResultsOf('APPROVETEST').some((t) => t.includes('TOOL_RAN_')),
    'the approved tool ran',
  );
  const answered = await waitUntil('attention.answered', () =>
    stack.events.find((e) => e.type === 'attention.answered' && e.subject === r1.id),
  );
  assert.equal(answered.data, { answer: { option: 'approve' }, via: 'control' });
  await waitUntil('attention.resolved', () =>
    stack.events.find((e) => e.type === 'attention.resolved' && e.subject === r1.id),
  );
  // deny: the tool is refused and never runs.
  const s2 = await createSession(true);
  const t2 = startTurn(s2, '[[TURN]] DENYTEST run it');
  const r2 = await approval(s2);
  await respond(s2, r2.id, 'deny');
  assert.ok((await t2).ok);
  const denied = toolResultsOf('DENYTEST');
  assert.ok(
    denied.length > 0 && denied.every((t) => !t.includes('TOOL_RAN_')),
    `the denied tool did not run: ${denied.join(' | ')}`,
  );
  // out of band: Cline's own client answers; the adapter mirrors it.
  const s3 = await createSession(true);
  const t3 = startTurn(s3, '[[TURN]] OOBTEST run it');
  const r3 = await approval(s3);
  const pending = await waitUntil('the hub approval', () => approvalIds.get(s3));
  assert.ok((await driver.command('approval.respond', s3, { approvalId: pending, approved: true })).ok);
  assert.ok((await t3).ok);
  const oob = await waitUntil('the oob answer', () =>
    stack.events.find((e) => e.type === 'attention.answered' && e.subject === r3.id),
  );
  assert.equal(oob.data, { answer: { option: 'approve' }, via: 'oob' });
  await waitUntil('attention.resolved', () =>
    stack.events.find((e) => e.type === 'attention.resolved' && e.subject === r3.id),
  );
});

test('the stream of the run passes aep-steer audit; the hub stops by pid and nothing is left listening', async () => {
  assert.ok(readFileSync(stack.logPath, 'utf8').length > 0);
  const r = await auditFiles([stack.logPath]);
  assert.equal(r.violations, [], JSON.stringify(r.violations));
  assert.not.ok(
    r.notes.some((n) => n.kind === 'machine-skipped'),
    'replayed through the session machine',
  );
  assert.ok(r.instructions.length >= 4);
  assert.ok(r.instructions.every((i) => i.status !== 'unacknowledged'));
  // The relay's copy of the stream, and the command as a user runs it.
  const exported = join(ws.root, 'relay-export.jsonl');
  writeFileSync(exported, `${stack.events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  assert.equal((await auditFiles([exported])).violations, []);
  const cli = spawnSync(
    process.execPath,
    [join(projectRoot, 'bin', 'aep-steer.js'), 'audit', stack.logPath, exported],
    { encoding: 'utf8' },
  );
  assert.is(cli.status, 0, cli.stdout + cli.stderr);
  assert.ok(hubPid !== undefined && existsSync(`/proc/${hubPid}`), 'the hub ran until now');
  await stopHub();
  assert.not.ok(existsSync(`/proc/${hubPid}`), 'the hub process is gone');
  assert.not.ok(await listening(Number(env.CLINE_HUB_PORT)), 'nothing listens on the hub port');
});

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createConnection({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

test.run();
