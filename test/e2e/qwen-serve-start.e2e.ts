// D43 end to end on a real `qwen serve` daemon (Qwen Code 0.24.4, `--require-auth`) against the
// loopback mock Chat Completions API, the adapter attached with `--serve` (through a pass-through
// the test can hold one request in), instructions sent through the relay as a consumer sends them.
// A session idle between turns is described startable; a start begins a turn with the text as its
// prompt through the daemon's prompt route, delivered on its start with `started: true` and the
// daemon's prompt id, the text the turn's first model request. A start whose prompt reaches the
// daemon just after a person's prompt began a turn is queued behind it: one turn at a time, never
// mixed into the person's, delivered `started: false` as the queue it became. An unknown `idle`
// and an empty text are refused before anything reaches the agent.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { installQwenCode } from '../../src/adapters/qwen-code/installer.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import type { LaneFact } from '../../src/streams/lane.js';
import { auditClean } from '../support/audit-clean.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import { startQwenServe, type ServeDaemon } from '../support/qwen-serve.js';
import {
  bodyHas,
  chatMessagesOf,
  chatTextOf,
  startVendorStack,
  turnPromptOf,
  vendorBinary,
  workspace,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

const SENDER = { agent: 'e2e-operator' };
const INSTRUCT = 'x.qwen-code.control.instruct';
const DELIVERED = 'x.qwen-code.instruction.delivered';
const DROPPED = 'x.qwen-code.instruction.dropped';
const DESCRIBED = 'x.qwen-code.session.described';

let mock: MockOpenAi;
let ws: Workspace;
let daemon: ServeDaemon;
let stack: VendorStack;
let proxy: DaemonProxy;
let session: string;
/** The starts delivered, by command id, with what the stream said. */
const starts: { id: string; started: unknown; ref: unknown }[] = [];

const of = (type: string, cause?: string): AepEvent | undefined => stack.find(session, type, cause);
const all = (type: string): AepEvent[] => stack.events.filter((e) => e.session === session && e.type === type);
const finishedAfter = (n: number) => stack.waitFor('the turn finished', () => all('run.finished')[n]);
/**
 * The agent's own model requests. Observed on 0.24.4: after a turn the daemon's agent also asks the
 * model in the background (a memory extraction subagent, under a system prompt of its own).
 */
const agentRequests = (): RecordedRequest[] =>
  mock
    .modelRequests()
    .filter((r) =>
      chatMessagesOf(r.body).some((m) => m.role === 'system' && chatTextOf(m).includes('You are Qwen Code')),
    );
/** Every request of the agent's turn whose prompt carries `tag`, in arrival order. */
const requestsOf = (tag: string): RecordedRequest[] =>
  agentRequests().filter((r) => turnPromptOf(r.body).includes(tag));
/** The text of a request's last message, if the user's (its text parts, as the prompt was sent). */
const lastMessage = (r: RecordedRequest): string => {
  const m = chatMessagesOf(r.body).at(-1);
  if (m?.role !== 'user') return '';
  if (typeof m.content === 'string') return m.content;
  return (Array.isArray(m.content) ? (m.content as { type?: string; text?: string }[]) : [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text ?? '')
    .join('');
};

function instruct(data: Record<string, unknown>): AepCommand {
  return command(SENDER, session, { type: INSTRUCT, data, capture: 'redacted' });
}
async function accepted(cmd: AepCommand): Promise<AepCommand> {
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}
/** What the adapter's serve lane observed (the same facts the adapter steps its sessions with). */
const laneFacts: LaneFact[] = [];
/**
 * Until the adapter sees no turn running in the session: its serve lane saw the last turn end.
 * The daemon ends a turn a little after its Stop hook (run.finished), and the adapter counts a turn
 * running until the daemon's stream says it ended; an instruct in between is one for that turn.
 */
const laneIdle = () =>
  stack.waitFor('the serve lane to see the turn end', () => {
    const last = laneFacts
      .filter((f) => (f.kind === 'turn.started' || f.kind === 'turn.ended') && f.session === session)
      .at(-1);
    return last === undefined || last.kind === 'turn.ended' ? true : undefined;
  });
/** The lane's answer to an instruction (what it became), as the adapter logged the input it stepped. */
const laneAnswer = (commandId: string) =>
  stack.waitFor(`the lane's answer to ${commandId}`, () =>
    readFileSync(stack.logPath, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"lane.answered"'))
      .map((l) => (JSON.parse(l) as { i?: Record<string, unknown> }).i)
      .find((i) => i?.['type'] === 'lane.answered' && i['commandId'] === commandId),
  );
/** The run starts and ends the stream shows from `from` on, as a string (`[]` pairs). */
const runShape = (from: number): string =>
  stack.events
    .slice(from)
    .filter((e) => e.session === session && (e.type === 'run.started' || e.type === 'run.finished'))
    .map((e) => (e.type === 'run.started' ? '[' : ']'))
    .join('');

/** A pass-through to the daemon in which one request can be held until the test releases it. */
interface DaemonProxy {
  url: string;
  holdNext(method: string, path: string): { arrived: Promise<void>; release(): void };
  close(): Promise<void>;
}

async function daemonProxy(target: string): Promise<DaemonProxy> {
  const to = new URL(target);
  const holds: { method: string; path: string; arrive: () => void; gate: Promise<void> }[] = [];
  const releases: (() => void)[] = [];
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    const i = holds.findIndex((h) => h.method === req.method && h.path === path.split('?')[0]);
    const hold = i < 0 ? undefined : holds.splice(i, 1)[0]!;
    hold?.arrive();
    // Unread until it goes on: the body waits in the paused request.
    void (hold?.gate ?? Promise.resolve()).then(() => {
      const up = request(
        { host: to.hostname, port: to.port, method: req.method, path, headers: { ...req.headers, host: to.host } },
        (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        },
      );
      up.on('error', () => res.destroy());
      req.pipe(up);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    holdNext(method, path) {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((r) => (arrive = r));
      const gate = new Promise<void>((r) => (release = r));
      holds.push({ method, path, arrive, gate });
      releases.push(release);
      return { arrived, release };
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const r of releases) r();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const binary = vendorBinary('qwen-code');
const missing = 'Qwen Code 0.24.4 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh qwen-code';

if (binary === undefined) {
  if (process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1') {
    console.log(`qwen serve start e2e not run (AEP_SKIP_VENDOR_E2E=1): ${missing}`);
  } else {
    test('the pinned Qwen Code CLI is installed', () => assert.unreachable(missing));
  }
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    ws = workspace('aep-qwen-serve-start-');
    daemon = await startQwenServe(ws, mock.baseUrl);
    // The adapter reaches the daemon through a pass-through the test can hold a request in.
    proxy = await daemonProxy(daemon.url);
    stack = await startVendorStack('qwen-code', {}, { serve: proxy.url, serveTokenFile: daemon.tokenFile });
    stack.evidence.set('qwen serve output', () => daemon.output().slice(-4000));
    const lane = stack.running.lanes?.find((l) => l.name === 'serve');
    if (lane === undefined) throw new Error('the adapter has no serve lane');
    lane.facts$.subscribe((f) => laneFacts.push(f));
    // The user's settings get the adapter's hooks, as `aep-steer install qwen-code` writes them.
    installQwenCode({
      user: true,
      port: stack.running.adapter.port,
      secret: stack.secret,
      neutral: qwenCode.replies.neutral,
      attentionTimeoutMs: qwenCode.attentionTimeoutMs,
      env: { HOME: ws.home },
    });
    session = await daemon.session('yolo');
  });

  test.after(async () => {
    await stack?.close();
    await proxy?.close();
    await daemon?.kill();
    await mock?.close();
    if (ws) rmSync(ws.root, { recursive: true, force: true });
  });

  test('after its first turn the daemon session is described startable; the roster says so', async () => {
    await daemon.prompt(session, '[[TURN]] [[TOOLS:0]] q-first say done');
    await stack.waitFor('the session seen through its hooks', () => of('session.started') ?? of('run.started'));
    await finishedAfter(0);
    const described = await stack.waitFor('described with the serve lane', () =>
      all(DESCRIBED).find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('serve')),
    );
    assert.equal([described.data?.['lanes'], described.data?.['startable']], [['hook', 'serve'], true]);
    const consumer = await RelayConsumer.connect({ url: stack.relayUrl, token: stack.relayToken, agent: 'e2e-roster' });
    try {
      const entry = (await consumer.roster()).find((r) => r.session === session);
      assert.equal([entry?.lanes, entry?.startable], [['hook', 'serve'], true]);
    } finally {
      await consumer.close();
    }
  });

  test("a start on the idle session begins a turn: its first model request carries the text; delivered started with the daemon's prompt id", async () => {
    await laneIdle();
    const from = stack.events.length;
    const finished = all('run.finished').length;
    const requests = agentRequests().length;
    const tag = `START-SERVE-${session.slice(0, 8)}`;
    const text = `[[TURN]] [[TOOLS:0]] ${tag} say done`;
    // Its first request is held: the turn is seen running on the daemon, under the prompt id.
    const hold = mock.hold((r) => turnPromptOf(r.body).includes(tag));
    const cmd = await accepted(instruct({ text, idle: 'start' }));
    const first = await hold.arrived;
    const current = await daemon.api('GET', `/session/${session}/turns/current`);
    assert.is(current.body?.['state'], 'running');
    hold.release();
    const d = await stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['started'], d.data?.['lane'], d.data?.['delivery']], [true, 'serve', undefined]);
    assert.is(d.data?.['ref'], current.body?.['promptId'], "ref: the daemon's prompt id of the turn it began");
    starts.push({ id: cmd.id, started: d.data?.['started'], ref: d.data?.['ref'] });
    await finishedAfter(finished);
    // The agent's first model request after the start is the new turn's, and ends with the text.
    assert.is(agentRequests()[requests], first, 'the next request is the new turn’s first');
    assert.is(lastMessage(first), text, 'the text is its user message');
    assert.match(turnPromptOf(first.body), tag, 'the turn the request belongs to');
    assert.ok(
      agentRequests()
        .slice(0, requests)
        .every((r) => !bodyHas(r.body, tag)),
      'in no request before it',
    );
    assert.is(runShape(from), '[]', 'one turn');
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
  });

  test('a start sent right after the Stop hook begins a turn of its own', async () => {
    // Sent as soon as the stream shows the turn finished (its Stop hook), not once the serve lane
    // saw it end: the daemon counts that turn running for about 0.65 s more and queues the prompt
    // behind it alone, so the prompt begins the next turn.
    await laneIdle();
    const ran = all('run.finished').length;
    await daemon.prompt(session, '[[TURN]] [[TOOLS:0]] q-before say done');
    const stop = await finishedAfter(ran);
    const from = stack.events.indexOf(stop) + 1;
    const ended = laneFacts.filter((f) => f.kind === 'turn.ended').length;
    const tag = `START-STOP-${session.slice(0, 8)}`;
    const text = `[[TURN]] [[TOOLS:0]] ${tag} say done`;
    const cmd = await accepted(instruct({ text, delivery: 'queue', idle: 'start' }));
    const inGap = laneFacts.filter((f) => f.kind === 'turn.ended').length === ended;
    console.log(`the start was accepted ${inGap ? 'before' : 'after'} the serve lane saw the last turn end`);
    const answer = await laneAnswer(cmd.id);
    assert.equal([answer['ok'], answer['became']], [true, undefined], JSON.stringify(answer));
    const d = await stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['started'], d.data?.['lane'], d.data?.['delivery']], [true, 'serve', undefined]);
    starts.push({ id: cmd.id, started: d.data?.['started'], ref: d.data?.['ref'] });
    await finishedAfter(ran + 1);
    const reqs = requestsOf(tag);
    assert.ok(reqs.length >= 1, 'its turn asked the model');
    assert.is(lastMessage(reqs[0]!), text, 'its own turn begins with its text');
    assert.not.ok(
      requestsOf('q-before').some((r) => bodyHas(r.body, tag)),
      'not in the turn that was ending',
    );
    assert.is(runShape(from), '[]', 'one turn of its own');
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
  });

  test("a start whose prompt reaches the daemon just after a person's prompt began a turn: queued behind it, delivered started false; one turn at a time, never mixed", async () => {
    await laneIdle();
    const from = stack.events.length;
    const finished = all('run.finished').length;
    const person = '[[TURN]] [[TOOLS:0]] q-person say done';
    const tag = `START-RACE-${session.slice(0, 8)}`;
    const text = `[[TURN]] [[TOOLS:0]] ${tag} say done`;
    // The lane's prompt is held on its way to the daemon; the person's turn begins meanwhile, and
    // cannot end before the lane had the daemon's word on its prompt: its first model request is held.
    const lanePrompt = proxy.holdNext('POST', `/session/${session}/prompt`);
    const personTurn = mock.hold((r) => turnPromptOf(r.body).includes('q-person'));
    const cmd = await accepted(instruct({ text, delivery: 'queue', idle: 'start' }));
    await lanePrompt.arrived;
    const personId = await daemon.prompt(session, person);
    await personTurn.arrived;
    lanePrompt.release();
    // The lane's answer, as the adapter stepped it: the prompt waits behind the turn begun meanwhile.
    const answer = await laneAnswer(cmd.id);
    assert.equal([answer['ok'], answer['became']], [true, 'queue'], JSON.stringify(answer));
    const pending = (await daemon.api('GET', `/session/${session}/pending-prompts`)).body?.['pendingPrompts'] as
      | { promptId?: string; text?: string; state?: string }[]
      | undefined;
    const waiting = pending?.find((p) => p.text?.includes(tag));
    assert.equal(
      [pending?.find((p) => p.promptId === personId)?.state, waiting?.state],
      ['running', 'queued'],
      `the daemon runs the person's prompt and queued the start's behind it: ${JSON.stringify(pending)}`,
    );
    personTurn.release();
    const d = await stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal(
      [d.data?.['started'], d.data?.['delivery'], d.data?.['lane'], d.data?.['ref']],
      [false, 'queue', 'serve', waiting?.promptId],
      'it did not begin a turn: it waited behind the one begun meanwhile, as a queue',
    );
    starts.push({ id: cmd.id, started: d.data?.['started'], ref: d.data?.['ref'] });
    await finishedAfter(finished + 1);
    // One turn at a time, the person's first; neither turn carries the other's prompt as its own.
    assert.is(runShape(from), '[][]', 'two turns, one after the other');
    const personReqs = requestsOf('q-person');
    const startReqs = requestsOf(tag);
    assert.ok(personReqs.length >= 1 && startReqs.length >= 1, 'both turns asked the model');
    const requests = agentRequests();
    assert.ok(requests.indexOf(personReqs.at(-1)!) < requests.indexOf(startReqs[0]!), "the person's turn ran first");
    assert.is(lastMessage(personReqs[0]!), person, "the person's turn begins with the person's prompt");
    assert.ok(
      personReqs.every((r) => !bodyHas(r.body, tag)),
      "the start's text is in none of the person's requests",
    );
    assert.is(lastMessage(startReqs[0]!), text, 'its own turn begins with its text');
    assert.not.ok(of(DROPPED, cmd.id));
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
  });

  test('bad input is refused before anything reaches the agent: idle-invalid, text-empty', async () => {
    const runs = all('run.started').length;
    const turns = laneFacts.filter((f) => f.kind === 'turn.started').length;
    const bad = await stack.send(instruct({ text: 'BAD-IDLE say done', idle: 'later' }));
    assert.equal(bad.outcome === 'rejected' ? [bad.reason, bad.code] : bad, ['invalid', 'idle-invalid']);
    assert.match(bad.outcome === 'rejected' ? (bad.detail ?? '') : '', 'refuse, wait, start');
    const empty = await stack.send(instruct({ text: '', idle: 'start' }));
    assert.equal(empty.outcome === 'rejected' ? [empty.reason, empty.code] : empty, ['invalid', 'text-empty']);
    assert.not.ok(
      mock.modelRequests().some((r) => bodyHas(r.body, 'BAD-IDLE')),
      'the model never saw it',
    );
    assert.is(all('run.started').length, runs, 'no run');
    assert.is(laneFacts.filter((f) => f.kind === 'turn.started').length, turns, 'no turn on the daemon');
  });

  test('the audit of the adapter log finds no violation; the starts are delivered through the serve lane', async () => {
    const r = await auditClean(stack.logPath);
    assert.ok(starts.length >= 1);
    for (const s of starts) {
      const i = r.instructions.find((x) => x.id === s.id);
      assert.equal([i?.status, i?.delivered?.lane, i?.delivered?.ref], ['delivered', 'serve', s.ref]);
    }
  });
}

test.run();
