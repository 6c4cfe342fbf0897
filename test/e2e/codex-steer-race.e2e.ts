// D31's race on the real Codex 0.171.0 app-server, through this project's relay and adapter: a
// steer the adapter accepted and handed to the server while a turn ran, which reaches the server
// only after that turn is over. The window exercised is the one between the adapter's `turn/steer`
// (sent with `expectedTurnId` of the running turn) and the server reading it: here the request is
// held on the adapter's socket (a pass-through, test/support/rpc-proxy.ts) until the server has
// said the turn completed, or until the next turn has started, then released unchanged. The real
// server answers "no active turn to steer" / "expected active turn id … but found …", and the
// adapter drops the instruction `turn-ended`: never a `turn/start`, never delivered, never in any
// model request. The person's client is a plain app-server client on the server's own socket.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { openAdapterLanes } from '../../src/cli/run-command.js';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { connectRpc, type RpcClient } from '../../src/adapters/codex/app-server/rpc.js';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.js';
import {
  bodyHas,
  codexEnv,
  codexHome,
  startVendorStack,
  vendorBinary,
  workspace,
  writeCodexConfig,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

const SENDER = { agent: 'e2e-operator' };
const binary = vendorBinary('codex');

let mock: MockOpenAi;
let stack: VendorStack;
let ws: Workspace;
let server: ChildProcess;
let proxy: RpcProxy;
let person: RpcClient;
let thread: string;

const all = (type: string): AepEvent[] => stack.events.filter((e) => e.session === thread && e.type === type);

/** A notification the server sent the adapter (through the pass-through). */
const told = (method: string, turnId: string): boolean =>
  proxy.passed.some(
    (p) =>
      p.dir === 'down' &&
      p.message.method === method &&
      (p.message.params as { turn?: { id?: string } } | undefined)?.turn?.id === turnId,
  );

/** The person starts a turn whose shell call waits for `gate`; resolves with its id once the call runs. */
async function slowTurn(tag: string, gate: string): Promise<string> {
  const before = all('tool.requested').length;
  const r = (await person.call('turn/start', {
    threadId: thread,
    input: [{ type: 'text', text: `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command` }],
  })) as { turn: { id: string } };
  await stack.waitFor(`${tag}: the slow tool call`, () => all('tool.requested')[before]);
  return r.turn.id;
}

/** Accepted while the turn runs; resolves with the command and the `turn/steer` the adapter sent, held. */
async function heldSteer(text: string): Promise<{ cmd: AepCommand; sent: Record<string, unknown>; release(): void }> {
  const hold = proxy.holdNext('turn/steer');
  const cmd = command(SENDER, thread, {
    type: 'x.codex.control.instruct',
    data: { text, delivery: 'steer' },
    capture: 'redacted',
  });
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  const sent = await hold.arrived;
  return { cmd, sent, release: hold.release };
}

/** What the adapter's steer came to: dropped (with its reason), and never delivered or seen by the model. */
async function droppedTurnEnded(cmd: AepCommand, text: string): Promise<void> {
  const dropped = await stack.waitFor('dropped', () => stack.find(thread, 'x.codex.instruction.dropped', cmd.id));
  assert.is(dropped.data?.['reason'], 'turn-ended');
  assert.not.ok(stack.find(thread, 'x.codex.instruction.delivered', cmd.id), 'never delivered');
  assert.is(mock.modelRequests().filter((r) => bodyHas(r.body, text)).length, 0, 'the model never sees it');
}

const adapterSent = (method: string) => proxy.passed.filter((p) => p.dir === 'up' && p.message.method === method);

if (binary === undefined) {
  test('the pinned Codex CLI is installed', () => {
    assert.unreachable('Codex 0.171.0 is not installed in .vendor-clis (scripts/install-vendor-cli.sh codex)');
  });
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    ws = workspace('aep-codex-race-');
    writeCodexConfig(ws, mock.baseUrl);
    const agentEnv = {
      ...codexEnv(ws),
      AEP_CODEX_BIN: binary,
    };
    stack = await startVendorStack('codex', agentEnv);
    installCodex({
      user: true,
      port: stack.running.adapter.port,
      secret: stack.secret,
      neutral: codex.replies.neutral,
      attentionTimeoutMs: codex.attentionTimeoutMs,
      env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary, AEP_STATE_DIR: stack.stateDir },
    });
    // The real server, run as the adapter would run it; the adapter reaches it through the
    // pass-through on its own socket path, which it reuses as a server it finds running.
    const real = join(ws.root, 'app-server.sock');
    server = spawn(binary, ['app-server', '--listen', `unix://${real}`], {
      cwd: ws.project,
      env: { ...agentEnv, AEP_STATE_DIR: stack.stateDir },
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    for (let i = 0; i < 300 && !existsSync(real); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(existsSync(real), 'the app-server listens');
    const sock = codexSocketPath(stack.stateDir);
    mkdirSync(join(stack.stateDir, 'codex'), { recursive: true, mode: 0o700 });
    proxy = await startRpcProxy(sock, real);
    const opened = await openAdapterLanes(stack.running.adapter.port, stack.secret);
    assert.not.ok('error' in opened, JSON.stringify(opened));
    person = await connectRpc(
      real,
      () => undefined,
      () => undefined,
    );
    await person.call('initialize', { clientInfo: { name: 'e2e-person', version: '1' } });
    person.notify('initialized');
    const started = (await person.call('thread/start', { cwd: ws.project })) as { thread: { id: string } };
    thread = started.thread.id;
  });

  test.after(async () => {
    person?.close();
    await stack?.close();
    await proxy?.close();
    // Its directory goes once it has exited (it writes its locks under CODEX_HOME until then).
    if (server !== undefined && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    }
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test('a steer that reaches the server after its turn completed: "no active turn to steer", dropped turn-ended, never a turn/start', async () => {
    const gate = join(ws.root, 'ended.go');
    const turn = await slowTurn('r-ended', gate);
    await stack.waitFor('the lane reaches the session', () =>
      all('x.codex.session.described').find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('app-server')),
    );
    const text = `STEER-RACE-ENDED-${thread.slice(-8)}`;
    const { cmd, sent, release } = await heldSteer(text);
    assert.equal((sent.params as Record<string, unknown>)['expectedTurnId'], turn, 'sent for the running turn');
    writeFileSync(gate, '');
    await stack.waitFor('the server said the turn completed', () => (told('turn/completed', turn) ? true : undefined));
    release();
    await droppedTurnEnded(cmd, text);
    const answer = proxy.answerTo(sent.id)?.['error'] as { message?: string } | undefined;
    assert.match(answer?.message ?? JSON.stringify(proxy.answerTo(sent.id)), 'no active turn to steer');
    assert.equal(adapterSent('turn/start'), [], 'the adapter never starts a turn');
    const read = (await person.call('thread/read', { threadId: thread, includeTurns: true })) as {
      thread: { turns: { id: string }[] };
    };
    assert.equal(
      read.thread.turns.map((t) => t.id),
      [turn],
      'the thread has the one turn the person started',
    );
  });

  test('a steer that reaches the server once the next turn runs: "expected active turn id … but found …", dropped turn-ended', async () => {
    const gate = join(ws.root, 'first.go');
    const first = await slowTurn('r-first', gate);
    const text = `STEER-RACE-MISMATCH-${thread.slice(-8)}`;
    const { cmd, sent, release } = await heldSteer(text);
    assert.equal((sent.params as Record<string, unknown>)['expectedTurnId'], first);
    writeFileSync(gate, '');
    await stack.waitFor('the first turn completed', () => (told('turn/completed', first) ? true : undefined));
    const next = join(ws.root, 'next.go');
    const second = await slowTurn('r-next', next);
    await stack.waitFor('the server said the next turn started', () =>
      told('turn/started', second) ? true : undefined,
    );
    release();
    await droppedTurnEnded(cmd, text);
    const answer = proxy.answerTo(sent.id)?.['error'] as { message?: string } | undefined;
    assert.match(answer?.message ?? '', `expected active turn id \`${first}\` but found \`${second}\``);
    const finished = all('run.finished').length;
    writeFileSync(next, '');
    await stack.waitFor('the next turn finished', () => all('run.finished')[finished]);
    assert.is(mock.modelRequests().filter((r) => bodyHas(r.body, text)).length, 0, 'not in the next turn either');
    assert.equal(adapterSent('turn/start'), [], 'the adapter never starts a turn');
  });

  test('the audit of the adapter log finds no violation', async () => {
    const r = await auditFiles([stack.logPath]);
    assert.equal(r.violations, [], renderText(r));
    const mine = r.instructions.filter((i) => i.session === thread);
    assert.equal(
      mine.map((i) => i.status),
      ['dropped', 'dropped'],
    );
  });
}

test.run();
