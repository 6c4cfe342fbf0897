// The qwen serve lane's `startTurn` (D43) against a loopback stand-in daemon whose frames and
// answers are shaped as Qwen Code 0.24.4 sends them: a prompt sent to an idle session is the turn
// it begins (`started: true` on its start); one the daemon queued behind a turn begun meanwhile,
// which the stream had not shown yet, is a queue (`became: "queue"`, never `started: true`), as
// the daemon's queue or its `pending_prompt_added` frame says; and a start queued only behind the
// turn that was ending when it was sent (the hooks closed it at Stop; the daemon still ran it)
// begins the next turn: started.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LaneFact } from '../../../src/streams/lane.js';
import { qwenServeLane, type QwenServeLane } from '../../../src/adapters/qwen-code/serve/lane.js';
import { until } from '../../support/until.js';

const S = 's-1';
const WS = '/w';

interface Daemon {
  url: string;
  seen: string[];
  frame(type: string, promptId: string, data?: Record<string, unknown>): void;
  /**
   * POST /prompt: `before` runs as it arrives (the daemon's own frames), and it is answered 202
   * with this prompt id once `answer` resolves (default at once).
   */
  prompt: { id: string; before?: () => void; answer?: Promise<void> };
  /** What GET …/pending-prompts lists. */
  pending: { promptId: string; state: string }[];
  /** The answer to a mid-turn message. */
  midTurn: Record<string, unknown>;
  close(): Promise<void>;
}

async function daemon(): Promise<Daemon> {
  const streams: ServerResponse[] = [];
  let n = 0;
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer(async (req, res) => {
    const path = decodeURIComponent(req.url ?? '');
    d.seen.push(`${req.method} ${path}`);
    for await (const _ of req) void _;
    if (path === '/capabilities') return json(res, 200, { workspaceCwd: WS });
    if (path === `/workspaces/${WS}/sessions/live-state`) return json(res, 200, { sessions: [{ sessionId: S }] });
    if (path === `/session/${S}/events`) {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': open\n\n');
      streams.push(res);
      return;
    }
    if (path === `/session/${S}/turns/current`) return json(res, 200, { state: 'idle' });
    if (req.method === 'POST' && path === `/session/${S}/prompt`) {
      d.prompt.before?.();
      await d.prompt.answer;
      return json(res, 202, { promptId: d.prompt.id });
    }
    if (req.method === 'POST' && path === `/session/${S}/mid-turn-message`) return json(res, 200, d.midTurn);
    if (req.method === 'GET' && path === `/session/${S}/pending-prompts`)
      return json(res, 200, { pendingPrompts: d.pending });
    json(res, 404, { error: 'not here' });
  });
  const d: Daemon = {
    url: '',
    seen: [],
    prompt: { id: 'p-1' },
    pending: [],
    midTurn: { accepted: true },
    frame(type, promptId, data = {}) {
      n += 1;
      const body = JSON.stringify({ id: n, v: 1, type, promptId, data: { sessionId: S, promptId, ...data } });
      for (const r of streams) r.write(`id: ${n}\nevent: ${type}\ndata: ${body}\n\n`);
    },
    async close() {
      for (const r of streams) r.end();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  d.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return d;
}

const opened: (() => Promise<void>)[] = [];
test.after.each(async () => {
  for (const c of opened.splice(0)) await c().catch(() => {});
});

async function attached(): Promise<{ d: Daemon; lane: QwenServeLane; facts: LaneFact[] }> {
  const d = await daemon();
  const lane = qwenServeLane({ url: d.url, pollMs: 50, onError: () => {} });
  opened.push(async () => {
    await lane.close();
    await d.close();
  });
  const facts: LaneFact[] = [];
  lane.facts$.subscribe((f) => facts.push(f));
  await until(() => lane.reaches(S), 'the lane attached');
  return { d, lane, facts };
}
const receipt = (facts: LaneFact[], commandId: string) =>
  facts.find((f): f is Extract<LaneFact, { kind: 'delivered' }> => f.kind === 'delivered' && f.commandId === commandId);
const start = (lane: QwenServeLane, commandId: string, otherwise: 'steer' | 'queue' = 'steer') =>
  lane.startTurn({ session: S, commandId, text: 'write the changelog', otherwise });

test('idle: the prompt begins the turn; its start is the receipt, started', async () => {
  const { d, lane, facts } = await attached();
  d.pending = [{ promptId: 'p-1', state: 'running' }];
  assert.equal(await start(lane, 'cmd-1'), { ok: true, ref: 'p-1' });
  d.frame('session_update', 'p-1', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => receipt(facts, 'cmd-1') !== undefined, 'the receipt');
  assert.equal([receipt(facts, 'cmd-1')!.ref, receipt(facts, 'cmd-1')!.started], ['p-1', true]);
});

test('a turn begun meanwhile that the stream has not shown: the daemon queues the prompt; a queue, not a start', async () => {
  const { d, lane, facts } = await attached();
  d.pending = [
    { promptId: 'p-0', state: 'running' },
    { promptId: 'p-1', state: 'queued' },
  ];
  // The lane saw no turn: the start goes out as a prompt; the daemon's queue says it waits.
  assert.equal(await start(lane, 'cmd-2'), { ok: true, ref: 'p-1', became: 'queue' });
  assert.ok(d.seen.includes(`GET /session/${S}/pending-prompts`));
  d.frame('pending_prompt_added', 'p-1');
  d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
  d.frame('turn_complete', 'p-0', { stopReason: 'end_turn' });
  d.frame('pending_prompt_started', 'p-1');
  await until(() => receipt(facts, 'cmd-2') !== undefined, 'the receipt');
  const r = receipt(facts, 'cmd-2')!;
  assert.is(r.ref, 'p-1');
  assert.is.not(r.started, true, 'it began no turn');
});

test('queued first, started before the lane asked: its pending_prompt_added decides, the receipt says not started', async () => {
  const { d, lane, facts } = await attached();
  // All of it before the daemon's answer: the prompt waited, then began once the other turn ended.
  let answer!: () => void;
  d.prompt = {
    id: 'p-1',
    before: () => {
      d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
      d.frame('pending_prompt_added', 'p-1');
      d.frame('turn_complete', 'p-0', { stopReason: 'end_turn' });
      d.frame('pending_prompt_started', 'p-1');
    },
    answer: new Promise((r) => (answer = r)),
  };
  d.pending = [{ promptId: 'p-1', state: 'running' }];
  const sent = start(lane, 'cmd-3');
  await until(() => facts.some((f) => f.kind === 'turn.started' && f.turnId === 'p-1'), 'its turn seen');
  answer();
  assert.equal(await sent, { ok: true, ref: 'p-1', became: 'queue' });
  const r = receipt(facts, 'cmd-3');
  assert.equal([r?.ref, r?.started], ['p-1', false]);
});

test('the turn the lane still sees is the one ending (a start is asked once the hooks closed it): no steer into it; the prompt begins the next turn, started', async () => {
  const { d, lane, facts } = await attached();
  d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => facts.some((f) => f.kind === 'turn.started' && f.turnId === 'p-0'), 'the turn seen');
  // The daemon still runs p-0 (its Stop hook fired already) and queues the prompt behind it alone.
  d.pending = [
    { promptId: 'p-0', state: 'running' },
    { promptId: 'p-1', state: 'queued' },
  ];
  assert.equal(await start(lane, 'cmd-4'), { ok: true, ref: 'p-1' });
  assert.not.ok(d.seen.includes(`POST /session/${S}/mid-turn-message`), 'never a steer into the ending turn');
  d.frame('pending_prompt_added', 'p-1');
  d.frame('turn_complete', 'p-0', { stopReason: 'end_turn' });
  d.frame('pending_prompt_started', 'p-1');
  await until(() => receipt(facts, 'cmd-4') !== undefined, 'the receipt');
  assert.equal([receipt(facts, 'cmd-4')!.ref, receipt(facts, 'cmd-4')!.started], ['p-1', true]);
});

test('behind the ending turn and begun before the lane looked: the stream shows the ending turn ran just before it, started', async () => {
  const { d, lane, facts } = await attached();
  d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => facts.some((f) => f.kind === 'turn.started' && f.turnId === 'p-0'), 'the turn seen');
  let answer!: () => void;
  d.prompt = {
    id: 'p-1',
    before: () => {
      d.frame('pending_prompt_added', 'p-1');
      d.frame('turn_complete', 'p-0', { stopReason: 'end_turn' });
      d.frame('pending_prompt_started', 'p-1');
    },
    answer: new Promise((r) => (answer = r)),
  };
  d.pending = [{ promptId: 'p-1', state: 'running' }];
  const sent = start(lane, 'cmd-5');
  await until(() => facts.some((f) => f.kind === 'turn.started' && f.turnId === 'p-1'), 'its turn seen');
  answer();
  assert.equal(await sent, { ok: true, ref: 'p-1' });
  assert.equal([receipt(facts, 'cmd-5')?.ref, receipt(facts, 'cmd-5')?.started], ['p-1', true]);
});

test("behind a turn begun after the ending one (the person's): a queue whatever the delivery, not a start", async () => {
  const { d, lane, facts } = await attached();
  d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => facts.some((f) => f.kind === 'turn.started' && f.turnId === 'p-0'), 'the turn seen');
  d.pending = [
    { promptId: 'p-0', state: 'running' },
    { promptId: 'p-9', state: 'queued' },
    { promptId: 'p-1', state: 'queued' },
  ];
  assert.equal(await start(lane, 'cmd-6'), { ok: true, ref: 'p-1', became: 'queue' });
  assert.equal(await start(lane, 'cmd-7', 'queue'), { ok: true, ref: 'p-1', became: 'queue' });
});

test.run();
