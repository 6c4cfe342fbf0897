// D43 end to end on the real Codex 0.171.0 against the loopback mock Responses API: the person runs
// `aep-steer run codex` in a terminal (tmux), so the adapter's app-server lane reaches the thread
// the stock TUI shows. Once its first turn is over the session is described startable, and
// `aep-steer instruct --start` begins a turn with the text as its prompt through `turn/start`:
// delivered on the vendor's receipt with `started: true` and the new turn's id, the text the
// turn's first model request ends with, shown in the person's TUI with a notice naming who
// started it (D27), one turn for it. While a turn runs, a start is an ordinary steer. A session no
// lane can start refuses it, naming the way; an unknown `idle` and an empty text are refused
// before anything reaches the agent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { connectRpc, type RpcClient } from '../../src/adapters/codex/app-server/rpc.js';
import { processTable } from '../../src/adapters/tool-processes.js';
import { INSTRUCT_EXIT, runInstruct } from '../../src/cli/instruct-command.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import type { InstructOutcome } from '../../src/consumer/verb.js';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import type { LaneFact } from '../../src/streams/lane.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import { projectRoot } from '../support/shared-dir.js';
import { startTui, textSink, tmuxMissing, type Tui } from '../support/tui.js';
import {
  bodyHas,
  codexEnv,
  codexHome,
  spawnCli,
  startVendorStack,
  vendorBinary,
  workspace,
  writeCodexConfig,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

const SENDER = { agent: 'e2e-operator' };
const INSTRUCT = 'x.codex.control.instruct';
const DELIVERED = 'x.codex.instruction.delivered';
const DESCRIBED = 'x.codex.session.described';
const binary = vendorBinary('codex');

let mock: MockOpenAi;
let stack: VendorStack;
let ws: Workspace;
let tui: Tui;
let session: string;
let env: NodeJS.ProcessEnv;
/** A client of the adapter's app-server of its own, following the thread: what the server says of its turns. */
let observer: RpcClient | undefined;
const turnsSeen: { method: 'turn/started' | 'turn/completed'; turn: string }[] = [];
/** What the adapter's app-server lane observed (the same facts the adapter steps its sessions with). */
const laneFacts: LaneFact[] = [];
/** The start that began a turn, and that turn. */
let began: { command: string; turn: string } | undefined;

const of = (type: string, cause?: string): AepEvent | undefined => stack.find(session, type, cause);
const all = (type: string): AepEvent[] => stack.events.filter((e) => e.session === session && e.type === type);
const finishedAfter = (n: number) => stack.waitFor('the turn finished', () => all('run.finished')[n]);
/**
 * Until the adapter sees no turn running in the session: its lane saw the last turn end. Codex
 * fires the Stop hook (run.finished) before it completes the turn on the server; a start the lane
 * takes in between would be a steer into the turn that is ending.
 */
const laneIdle = () =>
  stack.waitFor('the app-server lane to see the turn end', () => {
    const last = laneFacts
      .filter((f) => (f.kind === 'turn.started' || f.kind === 'turn.ended') && f.session === session)
      .at(-1);
    return last === undefined || last.kind === 'turn.ended' ? true : undefined;
  });
const started = () => turnsSeen.filter((t) => t.method === 'turn/started').map((t) => t.turn);

type Item = { type?: string; role?: string; content?: { text?: string }[] };
const itemsOf = (r: RecordedRequest): Item[] => (r.body as { input?: Item[] } | undefined)?.input ?? [];
const userTexts = (r: RecordedRequest): string[] =>
  itemsOf(r)
    .filter((i) => i.type === 'message' && i.role === 'user')
    .map((i) => (i.content ?? []).map((c) => c.text ?? '').join(''));
/** The turn's model requests (those offering tools: a remote TUI also asks the model for the thread's name). */
const modelTurnRequests = (): RecordedRequest[] =>
  mock.modelRequests().filter((r) => {
    const tools = (r.body as { tools?: unknown[] } | undefined)?.tools;
    return Array.isArray(tools) && tools.length > 0;
  });
/** Requests of the turn whose prompt (its last marked user message) carries `tag`. */
const requestsOf = (tag: string): RecordedRequest[] =>
  modelTurnRequests().filter((r) =>
    ([...userTexts(r)].reverse().find((t) => t.includes('[[TURN]]')) ?? '').includes(tag),
  );

function instruct(data: Record<string, unknown>): AepCommand {
  return command(SENDER, session, { type: INSTRUCT, data, capture: 'redacted' });
}

/** `aep-steer instruct --start --json` as a person runs it beside the TUI: exit code and the outcome it printed. */
async function instructStart(text: string): Promise<{ code: number; outcome: InstructOutcome }> {
  const out = textSink();
  const err = textSink();
  const code = await runInstruct(
    text,
    {
      relay: stack.relayUrl,
      token: stack.relayToken,
      sender: SENDER.agent,
      session,
      start: true,
      json: true,
      wait: true,
      timeout: '120000',
      ackWindow: '10000',
    },
    { out: out.stream, err: err.stream },
  );
  const line = out.text().trim().split('\n').at(-1) ?? '';
  assert.ok(line.startsWith('{'), `instruct printed: ${out.text()}${err.text()}`);
  return { code, outcome: JSON.parse(line) as InstructOutcome };
}

/** `aep-steer run codex` in a terminal, as a person types it; resolves once the TUI is ready. */
async function runCodexInTui(name: string): Promise<void> {
  const entry = join(projectRoot, 'test', 'support', 'run-cli-entry.ts');
  const tsx = join(projectRoot, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
  const port = String(stack.running.adapter.port);
  tui = startTui(name, ws.project, env, [process.execPath, '--import', tsx, entry, 'run', 'codex', '--port', port]);
  await tui.shows('Ask Codex to do anything', 90_000).catch((err: Error) => {
    throw new Error(`${err.message}\nadapter errors: ${stack.errors.join('\n')}`);
  });
}

/** Follows the session's thread on the adapter's app-server as a second client, recording its turns. */
async function observeThread(): Promise<void> {
  const c = await connectRpc(
    codexSocketPath(stack.stateDir),
    (method, p) => {
      const turn = (p.turn as { id?: unknown } | undefined)?.id;
      if (p.threadId !== session || typeof turn !== 'string') return;
      if (method === 'turn/started' || method === 'turn/completed') turnsSeen.push({ method, turn });
    },
    () => undefined,
  );
  await c.call('initialize', { clientInfo: { name: 'e2e-observer', version: '1' } });
  c.notify('initialized');
  await c.call('thread/resume', { threadId: session });
  observer = c;
}

if (binary === undefined || tmuxMissing()) {
  test('codex-start: the pinned CLI and tmux are installed', () => {
    assert.unreachable(
      'Codex 0.171.0 is not installed in .vendor-clis (scripts/install-vendor-cli.sh codex), or tmux is missing',
    );
  });
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    ws = workspace('aep-codex-start-');
    writeCodexConfig(ws, mock.baseUrl);
    const agentEnv = { ...codexEnv(ws), AEP_CODEX_BIN: binary };
    // The adapter's app-server runs with the adapter's environment, as `aep-steer adapter codex` would.
    stack = await startVendorStack('codex', agentEnv);
    installCodex({
      user: true,
      port: stack.running.adapter.port,
      secret: stack.secret,
      neutral: codex.replies.neutral,
      attentionTimeoutMs: codex.attentionTimeoutMs,
      env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary, AEP_STATE_DIR: stack.stateDir },
    });
    env = { ...agentEnv, AEP_STATE_DIR: stack.stateDir };
    const lane = stack.running.lanes?.find((l) => l.name === 'app-server');
    if (lane === undefined) throw new Error('the adapter has no app-server lane');
    lane.facts$.subscribe((f) => laneFacts.push(f));
    await runCodexInTui('codex-start');
  });

  test.after(async () => {
    observer?.close();
    tui?.kill();
    // The run ends its app-server when its terminal closes (SIGHUP): waited for, so nothing outlives the test.
    if (stack !== undefined) {
      const socket = `app-server --listen unix://${codexSocketPath(stack.stateDir)}`;
      await stack.waitFor(
        'the app-server of `aep-steer run codex` to end with its terminal',
        () =>
          (processTable() ?? []).some((p) => p.state !== 'Z' && p.argv.join(' ').includes(socket)) ? undefined : true,
        30_000,
      );
    }
    await stack?.close();
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test('after its first turn the session is idle and described startable; the roster says so', async () => {
    const from = stack.events.length;
    await tui.submit('[[TURN]] [[TOOLS:0]] c-first say done');
    session = await stack.newSession(from);
    await finishedAfter(0);
    const described = await stack.waitFor('described startable', () =>
      all(DESCRIBED).find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('app-server')),
    );
    assert.equal([described.data?.['lanes'], described.data?.['startable']], [['hook', 'app-server'], true]);
    const consumer = await RelayConsumer.connect({ url: stack.relayUrl, token: stack.relayToken, agent: 'e2e-roster' });
    try {
      const entry = (await consumer.roster()).find((r) => r.session === session);
      assert.equal([entry?.lanes, entry?.startable], [['hook', 'app-server'], true]);
    } finally {
      await consumer.close();
    }
    await observeThread();
  });

  test('instruct --start on the idle session starts one turn with its text: delivered started on the receipt, in the first request, in the TUI', async () => {
    const runs = all('run.started').length;
    const finished = all('run.finished').length;
    const turnsBefore = started().length;
    const requestsBefore = modelTurnRequests().length;
    const tag = `START-APP-${session.slice(-8)}`;
    const text = `[[TURN]] [[TOOLS:0]] ${tag} say done`;
    await laneIdle();
    const { code, outcome } = await instructStart(text);
    assert.is(code, INSTRUCT_EXIT.delivered, JSON.stringify(outcome));
    assert.is(outcome.outcome, 'delivered', JSON.stringify(outcome));
    if (outcome.outcome !== 'delivered') return;
    assert.equal([outcome.started, outcome.delivery], [true, undefined], 'it began the turn: no delivery into one');
    // The stream says the same, cause-linked to the command.
    await stack.waitFor('accepted', () => of('control.accepted', outcome.command));
    const d = await stack.waitFor('delivered', () => of(DELIVERED, outcome.command));
    assert.equal([d.data?.['started'], d.data?.['lane'], d.data?.['delivery']], [true, 'app-server', undefined]);
    // The vendor's receipt names the turn the server started for it.
    const turn = await stack.waitFor("the server's turn/started", () => started()[turnsBefore]);
    assert.is(d.data?.['ref'], turn, 'ref: the new turn');
    assert.is(outcome.ref, turn);
    const run = await stack.waitFor('its run', () => all('run.started')[runs]);
    assert.is(run.run, turn, 'the hooks name the same turn as the run');
    await finishedAfter(finished);
    await stack.waitFor("the turn's completion on the server", () =>
      turnsSeen.find((t) => t.method === 'turn/completed' && t.turn === turn),
    );
    // The model: the first request after the start is the new turn's, ending with the text.
    const first = modelTurnRequests()[requestsBefore];
    assert.ok(first !== undefined, 'the new turn asked the model');
    const users = userTexts(first!);
    assert.is(users.at(-1), text, "the text is the new turn's user message");
    assert.is(users.filter((u) => u.includes(tag)).length, 1, 'once');
    assert.ok(
      modelTurnRequests()
        .slice(0, requestsBefore)
        .every((r) => !bodyHas(r.body, tag)),
      'in no request before it',
    );
    assert.ok(requestsOf(tag).length >= 1);
    // The person's TUI shows the turn as its own.
    await tui.shows(tag).catch((err: Error) => {
      throw new Error(`${err.message}\n(the start's turn is not in the TUI)`);
    });
    // D27: the turn's UserPromptSubmit reply says who started it; Codex shows a hook's systemMessage
    // in the TUI (`↳ Hook · …`), for a turn begun on the app-server as for the person's own.
    await tui.shows(`aep-steer: ${SENDER.agent} started this turn (UserPromptSubmit)`).catch((err: Error) => {
      throw new Error(`${err.message}\n(the D27 notice of the started turn is not in the TUI)`);
    });
    // One turn for it: no second turn started beside it, one run on the stream.
    assert.equal(started().slice(turnsBefore), [turn], 'one turn/started');
    assert.is(all('run.started').length, runs + 1, 'one run');
    assert.is(all(DELIVERED).filter((e) => e.cause === outcome.command).length, 1, 'one delivery');
    began = { command: outcome.command, turn };
  });

  test('a start while a turn runs is an ordinary steer: into the running turn, delivered without started', async () => {
    const gate = join(ws.root, 'busy.go');
    const tools = all('tool.requested').length;
    const runs = all('run.started').length;
    const finished = all('run.finished').length;
    const turnsBefore = started().length;
    await tui.submit(`[[TURN]] [[WAITFILE:${gate}]] c-busy run the slow command`);
    const tool = await stack
      .waitFor('c-busy: the slow tool call', () => all('tool.requested')[tools])
      .catch((err: Error) => {
        throw new Error(`${err.message}\nthe TUI shows:\n${tui.screen()}`);
      });
    const text = `START-BUSY-${session.slice(-8)}`;
    const cmd = instruct({ text, delivery: 'steer', idle: 'start' });
    const settled = await stack.send(cmd);
    assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
    writeFileSync(gate, '');
    const d = await stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane'], d.data?.['started']], ['steer', 'app-server', undefined]);
    assert.is(d.data?.['ref'], tool.run, 'ref: the running turn');
    const end = await finishedAfter(finished);
    assert.ok(d.seq! < end.seq!, 'delivered before the turn ended');
    const reqs = requestsOf('c-busy');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.ok(bodyHas(reqs[1]!.body, text), "in the same turn's next request");
    assert.equal(started().slice(turnsBefore), [tool.run], 'no turn of its own');
    assert.is(all('run.started').length, runs + 1, 'one run: the person’s');
  });

  test('bad input is refused before anything reaches the agent: idle-invalid, text-empty', async () => {
    const runs = all('run.started').length;
    const turnsBefore = started().length;
    const bad = await stack.send(instruct({ text: 'BAD-IDLE say done', idle: 'soon' }));
    assert.equal(bad.outcome === 'rejected' ? [bad.reason, bad.code] : bad, ['invalid', 'idle-invalid']);
    assert.match(bad.outcome === 'rejected' ? (bad.detail ?? '') : '', 'refuse, wait, start');
    const empty = await stack.send(instruct({ text: '  ', idle: 'start' }));
    assert.equal(empty.outcome === 'rejected' ? [empty.reason, empty.code] : empty, ['invalid', 'text-empty']);
    assert.not.ok(
      mock.modelRequests().some((r) => bodyHas(r.body, 'BAD-IDLE')),
      'the model never saw it',
    );
    assert.is(all('run.started').length, runs, 'no run');
    assert.is(started().length, turnsBefore, 'no turn on the server');
  });

  test('a plain `codex exec` session no lane can start: described not startable, a start refused start-unsupported naming the way', async () => {
    const plain = workspace('aep-codex-start-plain-');
    try {
      writeCodexConfig(plain, mock.baseUrl);
      installCodex({
        user: true,
        port: stack.running.adapter.port,
        secret: stack.secret,
        neutral: codex.replies.neutral,
        attentionTimeoutMs: codex.attentionTimeoutMs,
        env: { CODEX_HOME: codexHome(plain), HOME: plain.home, AEP_CODEX_BIN: binary, AEP_STATE_DIR: stack.stateDir },
      });
      const from = stack.events.length;
      const args = ['exec', '--json', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox'];
      const run = await spawnCli(
        binary!,
        [...args, '[[TURN]] [[TOOLS:0]] c-plain say done'],
        plain.project,
        codexEnv(plain),
      ).done;
      assert.is(run.code, 0, run.stderr.slice(-2000));
      const other = await stack.newSession(from);
      const described = stack.events.filter((e) => e.session === other && e.type === DESCRIBED);
      assert.ok(described.length > 0);
      for (const e of described) assert.equal([e.data?.['lanes'], e.data?.['startable']], [['hook'], false]);
      const cmd = command(SENDER, other, {
        type: INSTRUCT,
        data: { text: '[[TURN]] [[TOOLS:0]] START-PLAIN say done', idle: 'start' },
        capture: 'redacted',
      });
      const settled = await stack.send(cmd);
      assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code] : settled, [
        'unsupported',
        'start-unsupported',
      ]);
      assert.match(settled.outcome === 'rejected' ? (settled.detail ?? '') : '', 'aep-steer run codex');
      assert.not.ok(
        mock.modelRequests().some((r) => bodyHas(r.body, 'START-PLAIN')),
        'nothing reached the model',
      );
    } finally {
      rmSync(plain.root, { recursive: true, force: true });
    }
  });

  test('the audit of the adapter log finds no violation and sees the start delivered through the app-server', async () => {
    const r = await auditFiles([stack.logPath]);
    assert.equal(r.violations, [], renderText(r));
    assert.ok(began, 'a start began a turn');
    const start = r.instructions.find((i) => i.id === began!.command);
    assert.equal(
      [start?.status, start?.delivered?.lane, start?.delivered?.ref],
      ['delivered', 'app-server', began!.turn],
    );
  });
}

test.run();
