// The qwen serve lane's `queue` (D31, D32) against a loopback stand-in daemon whose frames and
// answers are shaped as Qwen Code 0.24.4 sends them, each race played out in order: a queue sent
// while no turn runs is sent all the same (its prompt is the turn it starts), and that turn's
// first frame is its receipt, whether it comes before or after the daemon's answer; a withdraw
// sent before the answer waits for the prompt id; a queued prompt taken back ends no turn; and a
// withdraw that crosses the prompt's start is answered by the stream's order (already read); and
// the queues one step hands over (D44) go as one prompt whose start is each one's receipt.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LaneFact } from '../../../src/streams/lane.js';
import { qwenServeLane, type QwenServeLane } from '../../../src/adapters/qwen-code/serve/lane.js';
import { until } from '../../support/until.js';

const S = 's-1';
const WS = '/w';

interface Daemon {
  url: string;
  /** Writes one SSE frame to every open event stream of the session. */
  frame(type: string, promptId: string, data?: Record<string, unknown>): void;
  /** Requests seen, as `METHOD path`. */
  seen: string[];
  /** The bodies of the prompts posted, in order. */
  prompts: unknown[];
  /** The next POST /prompt is answered when this resolves (default at once) with this prompt id. */
  nextPrompt: { id: string; answer?: Promise<void> };
  pending: { promptId: string; state: string }[];
  /** Runs before a DELETE of a pending prompt is answered (the daemon's own frames for it). */
  onDelete?: (promptId: string) => void;
  close(): Promise<void>;
}

async function daemon(): Promise<Daemon> {
  const streams: ServerResponse[] = [];
  let id = 0;
  const d: Daemon = {
    url: '',
    seen: [],
    prompts: [],
    nextPrompt: { id: 'p-1' },
    pending: [],
    frame(type, promptId, data = {}) {
      id += 1;
      const body = JSON.stringify({ id, v: 1, type, promptId, data: { sessionId: S, promptId, ...data } });
      for (const r of streams) r.write(`id: ${id}\nevent: ${type}\ndata: ${body}\n\n`);
    },
    async close() {
      for (const r of streams) r.end();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server: Server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(req.url ?? '');
    d.seen.push(`${req.method} ${path}`);
    let raw = '';
    for await (const chunk of req) raw += String(chunk);
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
      d.prompts.push(JSON.parse(raw));
      const { id: promptId, answer } = d.nextPrompt;
      await answer;
      return json(res, 202, { promptId });
    }
    if (req.method === 'GET' && path === `/session/${S}/pending-prompts`)
      return json(res, 200, { pendingPrompts: d.pending });
    const del = new RegExp(`^/session/${S}/pending-prompts/(.+)$`).exec(path);
    if (req.method === 'DELETE' && del !== null) {
      d.onDelete?.(del[1]!);
      return json(res, 200, { removed: true });
    }
    json(res, 404, { error: 'not here' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  d.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return d;
}

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
const kinds = (facts: LaneFact[]) =>
  facts.filter((f) => f.kind !== 'attached').map((f) => (f.kind === 'delivered' ? `delivered ${f.commandId}` : f.kind));
const opened: (() => Promise<void>)[] = [];
// A failed test leaves its lane and daemon open: closed here, so the file still ends.
test.after.each(async () => {
  for (const c of opened.splice(0)) await c().catch(() => {});
});

test('queue with no turn running is sent all the same; the turn its prompt starts is its receipt', async () => {
  const { d, lane, facts } = await attached();
  const out = await lane.queue!({ session: S, commandId: 'cmd-1', text: 'after this, write the changelog' });
  assert.equal(out, { ok: true, ref: 'p-1' });
  assert.ok(d.seen.includes(`POST /session/${S}/prompt`));
  d.frame('session_update', 'p-1', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => facts.some((f) => f.kind === 'delivered'), 'the receipt');
  assert.equal(
    facts.find((f) => f.kind === 'delivered'),
    {
      kind: 'delivered',
      session: S,
      at: (facts.find((f) => f.kind === 'delivered') as { at: number }).at,
      commandId: 'cmd-1',
      ref: 'p-1',
    },
  );
  d.frame('session_update', 'p-1', { update: { sessionUpdate: 'agent_message_chunk' } });
  d.frame('turn_complete', 'p-1', { stopReason: 'end_turn' });
  await until(() => facts.some((f) => f.kind === 'turn.ended'), 'its end');
  assert.equal(kinds(facts), ['turn.started', 'delivered cmd-1', 'turn.ended'], 'one receipt');
  assert.equal(await lane.queue!({ session: S, commandId: 'cmd-1', text: 'after this, write the changelog' }), {
    ok: true,
    ref: 'p-1',
  });
  assert.is(d.seen.filter((s) => s === `POST /session/${S}/prompt`).length, 1, 'a resend sends nothing more');
});

test('the turn may start before the daemon answers: the receipt still comes, once', async () => {
  const { d, lane, facts } = await attached();
  let answer!: () => void;
  d.nextPrompt = { id: 'p-2', answer: new Promise((r) => (answer = r)) };
  const out = lane.queue!({ session: S, commandId: 'cmd-2', text: 'x' });
  await until(() => d.seen.includes(`POST /session/${S}/prompt`), 'the prompt sent');
  d.frame('session_update', 'p-2', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => facts.some((f) => f.kind === 'turn.started'), 'the turn seen');
  answer();
  assert.equal(await out, { ok: true, ref: 'p-2' });
  assert.equal(kinds(facts), ['turn.started', 'delivered cmd-2']);
});

test('a withdraw sent before the answer waits for the prompt id; a queued prompt taken back ends no turn', async () => {
  const { d, lane, facts } = await attached();
  d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => facts.some((f) => f.kind === 'turn.started'), 'a turn runs');
  let answer!: () => void;
  d.nextPrompt = { id: 'p-3', answer: new Promise((r) => (answer = r)) };
  const out = lane.queue!({ session: S, commandId: 'cmd-3', text: 'x' });
  await until(() => d.seen.includes(`POST /session/${S}/prompt`), 'the prompt sent');
  const taken = lane.withdraw!({ session: S, commandId: 'cmd-3' });
  d.frame('pending_prompt_added', 'p-3', { text: 'x' });
  d.pending = [{ promptId: 'p-3', state: 'queued' }];
  // As the daemon does when it removes a queued prompt: its own terminal frames, then the answer.
  d.onDelete = (p) => {
    d.frame('pending_prompt_completed', p, { state: 'removed' });
    d.frame('turn_complete', p, { stopReason: 'cancelled' });
  };
  answer();
  assert.equal(await out, { ok: true, ref: 'p-3' });
  assert.equal(await taken, { removed: true });
  assert.ok(d.seen.includes(`DELETE /session/${S}/pending-prompts/p-3`), 'removed by its prompt id');
  d.frame('turn_complete', 'p-0', { stopReason: 'end_turn' });
  await until(() => facts.some((f) => f.kind === 'turn.ended'), 'the running turn ends');
  assert.equal(kinds(facts), ['turn.started', 'turn.ended'], 'no receipt, and only the running turn ended');
  assert.equal(
    facts.filter((f) => f.kind === 'turn.ended').map((f) => (f.kind === 'turn.ended' ? f.turnId : '')),
    ['p-0'],
  );
});

/** A turn runs (p-0) and `commandId` is queued behind it as the daemon's prompt `promptId`, waiting. */
async function queuedBehindATurn(promptId: string, commandId: string) {
  const ctx = await attached();
  const { d, lane, facts } = ctx;
  d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => facts.some((f) => f.kind === 'turn.started'), 'a turn runs');
  d.nextPrompt = { id: promptId };
  assert.equal(await lane.queue!({ session: S, commandId, text: 'x' }), { ok: true, ref: promptId });
  d.pending = [{ promptId, state: 'queued' }];
  return ctx;
}

test('two withdraws of one queued prompt at once share one removal, and both hear the stream say it', async () => {
  const { d, lane } = await queuedBehindATurn('p-4', 'cmd-4');
  d.onDelete = (p) => {
    d.pending = [];
    d.frame('pending_prompt_completed', p, { state: 'removed' });
  };
  // An interrupt's withdraw and a user's, for the same instruction.
  const both = await Promise.all([
    lane.withdraw!({ session: S, commandId: 'cmd-4' }),
    lane.withdraw!({ session: S, commandId: 'cmd-4' }),
  ]);
  assert.equal(both, [{ removed: true }, { removed: true }]);
  assert.is(d.seen.filter((s) => s === `DELETE /session/${S}/pending-prompts/p-4`).length, 1, 'one removal');
});

test("a withdraw crossing the prompt's start: the daemon says removed, the stream says it started first: already read", async () => {
  const { d, lane, facts } = await queuedBehindATurn('p-4', 'cmd-4');
  // The running turn ends and the queued prompt starts between the look and the removal.
  d.onDelete = (p) => {
    d.frame('turn_complete', 'p-0', { stopReason: 'end_turn' });
    d.frame('pending_prompt_started', p, { text: 'x' });
    d.frame('pending_prompt_completed', p, { state: 'removed' });
  };
  assert.equal(await lane.withdraw!({ session: S, commandId: 'cmd-4' }), { removed: false });
  assert.equal(kinds(facts), ['turn.started', 'turn.ended', 'turn.started', 'delivered cmd-4']);
});

test('a queued prompt that already started is not removed (that would abort its turn)', async () => {
  const { d, lane } = await attached();
  d.frame('session_update', 'p-0', { update: { sessionUpdate: 'user_message_chunk' } });
  await until(() => lane.reaches(S), 'attached');
  d.nextPrompt = { id: 'p-5' };
  await lane.queue!({ session: S, commandId: 'cmd-5', text: 'x' });
  d.pending = [{ promptId: 'p-5', state: 'running' }];
  assert.equal(await lane.withdraw!({ session: S, commandId: 'cmd-5' }), { removed: false });
  assert.not.ok(
    d.seen.some((s) => s.startsWith('DELETE')),
    'no DELETE sent',
  );
});

test('D44: the queues one step hands over go as one prompt, in order; its start is the receipt of each', async () => {
  const { d, lane, facts } = await attached();
  assert.equal(lane.handsQueue, { take: 'all', as: 'queue' });
  const texts = ['first: run the tests', 'second: fix what fails', 'third: write the changelog'];
  const outs = texts.map((text, i) => lane.queue!({ session: S, commandId: `cmd-h${i + 1}`, text }));
  assert.equal(await Promise.all(outs), [
    { ok: true, ref: 'p-1' },
    { ok: true, ref: 'p-1' },
    { ok: true, ref: 'p-1' },
  ]);
  assert.equal(d.prompts, [{ prompt: [{ type: 'text', text: texts.join('\n\n') }] }], 'one prompt, the texts in order');
  // One of them cannot be taken back alone: removing the prompt would drop the other two with it.
  const alone = await lane.withdraw!({ session: S, commandId: 'cmd-h2' });
  assert.ok('error' in alone && alone.error.includes('2 more'), JSON.stringify(alone));
  assert.not.ok(
    d.seen.some((x) => x.startsWith('DELETE')),
    'nothing removed',
  );
  d.frame('pending_prompt_started', 'p-1', { text: texts.join('\n\n') });
  await until(() => facts.filter((f) => f.kind === 'delivered').length === 3, 'three receipts');
  assert.equal(kinds(facts), ['turn.started', 'delivered cmd-h1', 'delivered cmd-h2', 'delivered cmd-h3']);
  assert.ok(
    facts.every((f) => f.kind !== 'delivered' || f.ref === 'p-1'),
    'each names the prompt that carried it',
  );
});

test.run();
