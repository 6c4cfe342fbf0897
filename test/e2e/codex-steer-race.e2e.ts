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
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { openAdapterLanes } from '../../src/cli/run-command.js';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { connectRpc, type RpcClient } from '../../src/adapters/codex/app-server/rpc.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { startRpcProxy, type RpcProxy } from '../support/rpc-proxy.js';
import { until } from '../support/until.js';

const e2e = e2eSuite('codex', {
  label: 'codex-steer-race',
  env: (home, e2e) => ({ ...home.env, AEP_CODEX_BIN: e2e.binary }),
});
let server: ChildProcess;
let proxy: RpcProxy;
let person: RpcClient;
let thread: string;

const all = (type: string): AepEvent[] => e2e.stack.events.filter((e) => e.session === thread && e.type === type);

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
  await e2e.stack.waitFor(`${tag}: the slow tool call`, () => all('tool.requested')[before]);
  return r.turn.id;
}

/** Accepted while the turn runs; resolves with the command and the `turn/steer` the adapter sent, held. */
async function heldSteer(text: string): Promise<{ cmd: AepCommand; sent: Record<string, unknown>; release(): void }> {
  const hold = proxy.holdNext('turn/steer');
  const cmd = await e2e.stack.accepted(thread, 'x.codex.control.instruct', { text, delivery: 'steer' });
  const sent = await hold.arrived;
  return { cmd, sent, release: hold.release };
}

/** What the adapter's steer came to: dropped (with its reason), and never delivered or seen by the model. */
async function droppedTurnEnded(cmd: AepCommand, text: string): Promise<void> {
  const dropped = await e2e.stack.waitFor('dropped', () =>
    e2e.stack.find(thread, 'x.codex.instruction.dropped', cmd.id),
  );
  assert.is(dropped.data?.['reason'], 'turn-ended');
  assert.not.ok(e2e.stack.find(thread, 'x.codex.instruction.delivered', cmd.id), 'never delivered');
  assert.is(e2e.withText(text).length, 0, 'the model never sees it');
}

const adapterSent = (method: string) => proxy.passed.filter((p) => p.dir === 'up' && p.message.method === method);

if (e2e.installed) {
  test.before(async () => {
    const ws = e2e.home;
    // The real server, run as the adapter would run it; the adapter reaches it through the
    // pass-through on its own socket path, which it reuses as a server it finds running.
    const real = join(e2e.home.root, 'app-server.sock');
    server = spawn(e2e.binary, ['app-server', '--listen', `unix://${real}`], {
      cwd: ws.project,
      env: e2e.runEnv(ws),
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    // Its directory goes once it has exited (it writes its locks under CODEX_HOME until then).
    e2e.deferAfterAdapter(async () => {
      if (server.exitCode !== null) return;
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      await exited;
    });
    await until(() => existsSync(real), 'the app-server to listen', 15_000);
    const sock = codexSocketPath(e2e.stack.stateDir);
    mkdirSync(join(e2e.stack.stateDir, 'codex'), { recursive: true, mode: 0o700 });
    proxy = await startRpcProxy(sock, real);
    e2e.deferAfterAdapter(() => proxy.close());
    const opened = await openAdapterLanes(e2e.stack.running.adapter.port, e2e.stack.secret);
    assert.not.ok('error' in opened, JSON.stringify(opened));
    person = await connectRpc(
      real,
      () => undefined,
      () => undefined,
    );
    e2e.defer(() => person.close());
    await person.call('initialize', { clientInfo: { name: 'e2e-person', version: '1' } });
    person.notify('initialized');
    const started = (await person.call('thread/start', { cwd: ws.project })) as { thread: { id: string } };
    thread = started.thread.id;
  });

  test('a steer that reaches the server after its turn completed: "no active turn to steer", dropped turn-ended, never a turn/start', async () => {
    const gate = join(e2e.home.root, 'ended.go');
    const turn = await slowTurn('r-ended', gate);
    await e2e.stack.waitFor('the lane reaches the session', () =>
      all('x.codex.session.described').find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('app-server')),
    );
    const text = `STEER-RACE-ENDED-${thread.slice(-8)}`;
    const { cmd, sent, release } = await heldSteer(text);
    assert.equal((sent.params as Record<string, unknown>)['expectedTurnId'], turn, 'sent for the running turn');
    writeFileSync(gate, '');
    await e2e.stack.waitFor('the server said the turn completed', () =>
      told('turn/completed', turn) ? true : undefined,
    );
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
    const gate = join(e2e.home.root, 'first.go');
    const first = await slowTurn('r-first', gate);
    const text = `STEER-RACE-MISMATCH-${thread.slice(-8)}`;
    const { cmd, sent, release } = await heldSteer(text);
    assert.equal((sent.params as Record<string, unknown>)['expectedTurnId'], first);
    writeFileSync(gate, '');
    await e2e.stack.waitFor('the first turn completed', () => (told('turn/completed', first) ? true : undefined));
    const next = join(e2e.home.root, 'next.go');
    const second = await slowTurn('r-next', next);
    await e2e.stack.waitFor('the server said the next turn started', () =>
      told('turn/started', second) ? true : undefined,
    );
    release();
    await droppedTurnEnded(cmd, text);
    const answer = proxy.answerTo(sent.id)?.['error'] as { message?: string } | undefined;
    assert.match(answer?.message ?? '', `expected active turn id \`${first}\` but found \`${second}\``);
    const finished = all('run.finished').length;
    writeFileSync(next, '');
    await e2e.stack.waitFor('the next turn finished', () => all('run.finished')[finished]);
    assert.is(e2e.withText(text).length, 0, 'not in the next turn either');
    assert.equal(adapterSent('turn/start'), [], 'the adapter never starts a turn');
  });

  test('the audit of the adapter log finds no violation', async () => {
    const r = await auditFiles([e2e.stack.logPath]);
    assert.equal(r.violations, [], renderText(r));
    const mine = r.instructions.filter((i) => i.session === thread);
    assert.equal(
      mine.map((i) => i.status),
      ['dropped', 'dropped'],
    );
  });
}

test.run();
