// The adapter's Cline hub connection against a stand-in hub speaking the v1 frames Cline 3.0.65
// was observed to speak (cline-hub-observed §1.2–§1.6): discovery record and token, registration
// with no capabilities, commands and replies, events as facts, withdraw through the pending-prompt
// commands, loss and reconnect.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer, type WebSocket } from 'ws';
import { HubConnection } from '../../../src/adapters/cline/hub/connection.js';
import { discoveryPath, resolveHubEndpoint } from '../../../src/adapters/cline/hub/endpoint.js';
import { hubLane } from '../../../src/adapters/cline/hub/lane.js';
import type { SteeringError } from '../../../src/protocol/index.js';
import type { LaneFact } from '../../../src/streams/lane.js';

interface StubHub {
  url: string;
  port: number;
  frames: Record<string, unknown>[];
  protocols: string[];
  sockets: Set<WebSocket>;
  /** The reply to a command, by command name (default ok with no payload). */
  replies: Map<string, Record<string, unknown>>;
  /** What the hub sends before its reply to a command, by command name (the events it sets off). */
  before: Map<string, (envelope: Record<string, unknown>) => void>;
  event(event: string, sessionId: string, payload: Record<string, unknown>): void;
  close(): Promise<void>;
}

async function stubHub(token: string, port = 0): Promise<StubHub> {
  const frames: Record<string, unknown>[] = [];
  const protocols: string[] = [];
  const sockets = new Set<WebSocket>();
  const replies = new Map<string, Record<string, unknown>>();
  const before = new Map<string, (envelope: Record<string, unknown>) => void>();
  const wss = new WebSocketServer({
    host: '127.0.0.1',
    port,
    path: '/hub',
    // Missing or wrong token: refused at the upgrade (HTTP 401), as the real hub does.
    verifyClient: (info, done) => {
      const offered = String(info.req.headers['sec-websocket-protocol'] ?? '');
      protocols.push(offered);
      done(offered === `cline-hub-auth.${token}`, 401);
    },
  });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', (ws) => {
    sockets.add(ws);
    ws.on('close', () => sockets.delete(ws));
    ws.on('message', (data) => {
      const frame = JSON.parse(String(data)) as { kind: string; envelope?: Record<string, unknown> };
      frames.push(frame);
      const env = frame.envelope;
      if (frame.kind !== 'command' || env === undefined) return;
      before.get(String(env.command))?.(env);
      const reply = replies.get(String(env.command)) ?? { ok: true, payload: {} };
      ws.send(JSON.stringify({ kind: 'reply', envelope: { version: 'v1', requestId: env.requestId, ...reply } }));
    });
  });
  const actual = (wss.address() as { port: number }).port;
  return {
    url: `ws://127.0.0.1:${actual}/hub`,
    port: actual,
    frames,
    protocols,
    sockets,
    replies,
    before,
    event(event, sessionId, payload) {
      for (const ws of sockets)
        ws.send(JSON.stringify({ kind: 'event', envelope: { version: 'v1', event, sessionId, payload } }));
    },
    close: () =>
      new Promise<void>((r) => {
        for (const ws of sockets) ws.terminate();
        wss.close(() => r());
      }),
  };
}

const until = async <T>(probe: () => T | undefined, what: string, ms = 5000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`never saw ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

function dataDir(): { env: NodeJS.ProcessEnv; write(url: string, token: string): void; root: string } {
  const root = mkdtempSync(join(tmpdir(), 'aep-cline-hub-'));
  const env = { CLINE_DATA_DIR: join(root, 'data') };
  return {
    env,
    root,
    write(url, token) {
      const file = discoveryPath(env);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, JSON.stringify({ hubId: 'h', protocolVersion: 'v1', url, authToken: token, pid: 4242 }), {
        mode: 0o600,
      });
    },
  };
}

test('endpoint: AEP_CLINE_HUB_URL needs its token; without either the discovery record is read, and its absence says what to do', () => {
  assert.match(
    JSON.stringify(resolveHubEndpoint({ AEP_CLINE_HUB_URL: 'ws://127.0.0.1:1/hub' })),
    'AEP_CLINE_HUB_TOKEN',
  );
  assert.equal(resolveHubEndpoint({ AEP_CLINE_HUB_URL: 'ws://127.0.0.1:1/hub', AEP_CLINE_HUB_TOKEN: 't' }), {
    url: 'ws://127.0.0.1:1/hub',
    token: 't',
  });
  const d = dataDir();
  try {
    assert.match((resolveHubEndpoint(d.env) as { missing: string }).missing, 'cline hub ensure');
    d.write('ws://127.0.0.1:2/hub', 'tok');
    assert.equal(resolveHubEndpoint(d.env), { url: 'ws://127.0.0.1:2/hub', token: 'tok', pid: 4242 });
    assert.is(discoveryPath({ AEP_CLINE_HUB_DISCOVERY: '/x/y.json' }), '/x/y.json');
  } finally {
    rmSync(d.root, { recursive: true, force: true });
  }
});

test('connects with the token as subprotocol, registers with no capabilities, subscribes; send_input, run.abort and approval.respond go out as hub commands', async () => {
  const hub = await stubHub('secret-1');
  const d = dataDir();
  d.write(hub.url, 'secret-1');
  const conn = new HubConnection({ endpoint: () => resolveHubEndpoint(d.env), clientId: 'aep-test' });
  const t = hubLane(conn);
  try {
    await until(() => t.ready!() && hub.frames.length >= 2, 'registered and subscribed');
    assert.equal(hub.protocols, ['cline-hub-auth.secret-1']);
    const register = hub.frames[0] as { envelope: { command: string; payload: Record<string, unknown> } };
    assert.is(register.envelope.command, 'client.register');
    assert.equal(
      [register.envelope.payload.clientType, register.envelope.payload.capabilities],
      ['aep-adapter-cline', []],
    );
    assert.equal(hub.frames[1], { kind: 'stream.subscribe', clientId: 'aep-test' });
    assert.equal(await t.send!({ session: 's1', commandId: 'c1', text: 'hi', delivery: 'steer' }), { ok: true });
    const sent = hub.frames.at(-1) as { envelope: Record<string, unknown> };
    assert.equal(
      [sent.envelope.command, sent.envelope.sessionId, sent.envelope.payload],
      ['session.send_input', 's1', { prompt: 'hi', delivery: 'steer' }],
    );
    hub.replies.set('session.send_input', {
      ok: false,
      error: { code: 'session_not_found', message: 'Unknown session: s1' },
    });
    assert.equal(await t.send!({ session: 's1', commandId: 'c2', text: 'again' }), {
      ok: false,
      reason: 'refused',
      detail: 'session_not_found',
    });
    assert.equal(await t.interrupt!('s1'), { ok: true });
    assert.is((hub.frames.at(-1) as { envelope: { command: string } }).envelope.command, 'run.abort');
    await t.answer!('s1', 'ap1', false, 'not now');
    assert.equal((hub.frames.at(-1) as { envelope: { payload: unknown } }).envelope.payload, {
      approvalId: 'ap1',
      approved: false,
      reason: 'not now',
    });
  } finally {
    await conn.close();
    await hub.close();
    rmSync(d.root, { recursive: true, force: true });
  }
});

/** A transport on a stub hub found through its discovery record; `close` undoes all of it. */
async function transportOnStub(token: string) {
  const hub = await stubHub(token);
  const d = dataDir();
  d.write(hub.url, token);
  const conn = new HubConnection({ endpoint: () => resolveHubEndpoint(d.env), clientId: 'aep-test' });
  const close = async () => {
    await conn.close();
    await hub.close();
    rmSync(d.root, { recursive: true, force: true });
  };
  return { hub, t: hubLane(conn), close };
}

test('withdraw finds the pending prompt by its text and removes it by id; not listed or not removed is removed false; a refusal is an error', async () => {
  const { hub, t, close } = await transportOnStub('secret-w');
  const commands = () =>
    hub.frames
      .filter((f) => f.kind === 'command')
      .map((f) => (f as { envelope: Record<string, unknown> }).envelope)
      .filter((e) => String(e.command).includes('pending_prompt'));
  try {
    await until(() => t.ready!(), 'registered');
    hub.replies.set('session.pending_prompts', {
      ok: true,
      payload: {
        sessionId: 's1',
        prompts: [
          { id: 'pp_other', prompt: 'another text', delivery: 'queue', attachmentCount: 0 },
          { id: 'pp_mine', prompt: 'take me back', delivery: 'queue', attachmentCount: 0 },
        ],
      },
    });
    hub.replies.set('session.remove_pending_prompt', {
      ok: true,
      payload: { sessionId: 's1', prompts: [], removed: true },
    });
    assert.equal(await t.withdraw!({ session: 's1', commandId: 'c1', text: 'take me back' }), { removed: true });
    assert.equal(
      commands().map((e) => [e.command, e.sessionId, e.payload]),
      [
        ['session.pending_prompts', 's1', {}],
        ['session.remove_pending_prompt', 's1', { promptId: 'pp_mine' }],
      ],
    );
    // Not listed: consumed already; nothing is removed.
    assert.equal(await t.withdraw!({ session: 's1', commandId: 'c2', text: 'read already' }), { removed: false });
    assert.is(commands().length, 3, 'listed, never removed');
    // Listed, but gone by the time the remove arrives.
    hub.replies.set('session.remove_pending_prompt', {
      ok: true,
      payload: { sessionId: 's1', prompts: [], removed: false },
    });
    assert.equal(await t.withdraw!({ session: 's1', commandId: 'c3', text: 'take me back' }), { removed: false });
    hub.replies.set('session.pending_prompts', {
      ok: false,
      error: { code: 'pending_prompts_unavailable', message: 'Pending prompt service is not available.' },
    });
    assert.equal(await t.withdraw!({ session: 's1', commandId: 'c4', text: 'take me back' }), {
      error: 'pending_prompts_unavailable',
    });
  } finally {
    await close();
  }
});

test('hub events become facts: consumption, approvals asked and settled; other events none', async () => {
  const hub = await stubHub('s');
  const conn = new HubConnection({ endpoint: () => ({ url: hub.url, token: 's' }) });
  const t = hubLane(conn, () => 7);
  const facts: LaneFact[] = [];
  t.facts$!.subscribe((f) => facts.push(f));
  try {
    await until(() => t.ready!(), 'registered');
    hub.event('assistant.delta', 's1', { text: 'x' });
    hub.event('session.pending_prompt_submitted', 's1', {
      sessionId: 's1',
      prompt: { id: 'p1', prompt: 'STEER', delivery: 'steer' },
    });
    hub.event('approval.requested', 's1', {
      approvalId: 'ap1',
      toolName: 'run_commands',
      toolCallId: 'call_1',
      inputJson: '{"commands":["rm -rf x"]}',
    });
    hub.event('approval.resolved', 's1', { approvalId: 'ap1', approved: true });
    hub.event('approval.resolved', 's1', { approvalId: 'ap2', approved: false, cancelled: true });
    await until(() => facts.length >= 4, 'facts');
    assert.equal(facts[0], { kind: 'consumed', session: 's1', at: 7, text: 'STEER' });
    const asked = facts[1] as Extract<LaneFact, { kind: 'approval' }>;
    assert.equal(
      [asked.approvalId, asked.request.subject, asked.request.respondVia, asked.request.options?.map((o) => o.id)],
      ['ap1', 'run_commands', ['control', 'oob'], ['approve', 'deny']],
    );
    // D35: what the tool will do rides only as the redacted-class `detail`; the tool input stays out.
    assert.is(asked.request.detail, 'rm -rf x');
    assert.not.ok(
      JSON.stringify({ ...asked, request: { ...asked.request, detail: undefined } }).includes('rm -rf'),
      'the tool input stays out',
    );
    assert.equal(facts.slice(2), [
      { kind: 'approval.resolved', session: 's1', at: 7, approvalId: 'ap1', approved: true },
      { kind: 'approval.resolved', session: 's1', at: 7, approvalId: 'ap2' },
    ]);
  } finally {
    await conn.close();
    await hub.close();
  }
});

/**
 * The hub's answer to a queued send_input, as Cline 3.0.65 was seen to give it (e2e/cline-start):
 * `run.started` naming the command's request id, the pending listing with the prompt's id, and,
 * when the agent is idle, its submission, all before the reply.
 */
function hubTakes(hub: StubHub, clientId: string, o: { id: string; idle: boolean; others?: unknown[] }) {
  hub.before.set('session.send_input', (env) => {
    const session = String(env.sessionId);
    const prompt = String((env.payload as { prompt: string }).prompt);
    const entry = { id: o.id, prompt, delivery: 'queue', attachmentCount: 0 };
    hub.event('run.started', session, { requestId: env.requestId, clientId });
    hub.event('session.pending_prompts', session, { sessionId: session, prompts: [...(o.others ?? []), entry] });
    if (!o.idle) return;
    hub.event('session.pending_prompts', session, { sessionId: session, prompts: [] });
    hub.event('session.pending_prompt_submitted', session, { sessionId: session, prompt: entry });
  });
}

const commandsOf = (hub: StubHub) =>
  hub.frames
    .filter((f) => f.kind === 'command')
    .map((f) => (f as { envelope: Record<string, unknown> }).envelope)
    .filter((e) => e.command !== 'client.register');

test('startTurn on an idle session: a queued send_input the hub submits before its reply began the turn: delivered started, named by the prompt id', async () => {
  const { hub, t, close } = await transportOnStub('secret-s1');
  const facts: LaneFact[] = [];
  t.facts$.subscribe((f) => facts.push(f));
  try {
    await until(() => t.ready!(), 'registered');
    hubTakes(hub, 'aep-test', { id: 'pending_1', idle: true });
    assert.equal(await t.startTurn!({ session: 's1', commandId: 'c1', text: 'wake up', otherwise: 'steer' }), {
      ok: true,
      ref: 'pending_1',
    });
    assert.equal(
      commandsOf(hub).map((e) => [e.command, e.sessionId, e.payload]),
      [['session.send_input', 's1', { prompt: 'wake up', delivery: 'queue' }]],
      'queued, never steered: the hub begins a turn with a queued prompt only when the agent is idle',
    );
    const delivered = facts.filter((f) => f.kind === 'delivered');
    assert.equal(delivered, [
      { kind: 'delivered', session: 's1', at: delivered[0]!.at, commandId: 'c1', ref: 'pending_1', started: true },
    ]);
    // Its consumption is still said, as for any prompt the hub submits.
    assert.ok(facts.some((f) => f.kind === 'consumed' && f.text === 'wake up'));
  } finally {
    await close();
  }
});

test('startTurn on a busy session: still pending at the reply, it waits for the next turn (became queue) or is folded into the running one (became steer); its later submission is delivered, not started', async () => {
  const { hub, t, close } = await transportOnStub('secret-s2');
  const facts: LaneFact[] = [];
  t.facts$.subscribe((f) => facts.push(f));
  const delivered = () => facts.filter((f): f is Extract<LaneFact, { kind: 'delivered' }> => f.kind === 'delivered');
  try {
    await until(() => t.ready!(), 'registered');
    const other = { id: 'pending_0', prompt: 'the person typed this', delivery: 'queue', attachmentCount: 0 };
    hubTakes(hub, 'aep-test', { id: 'pending_2', idle: false, others: [other] });
    assert.equal(await t.startTurn!({ session: 's2', commandId: 'c2', text: 'after you', otherwise: 'queue' }), {
      ok: true,
      ref: 'pending_2',
      became: 'queue',
    });
    assert.is(commandsOf(hub).length, 1, 'a queue stays as the hub holds it');
    hubTakes(hub, 'aep-test', { id: 'pending_3', idle: false });
    hub.replies.set('session.update_pending_prompt', { ok: true, payload: { sessionId: 's2', updated: true } });
    assert.equal(await t.startTurn!({ session: 's2', commandId: 'c3', text: 'now please', otherwise: 'steer' }), {
      ok: true,
      ref: 'pending_3',
      became: 'steer',
    });
    const update = commandsOf(hub).at(-1)!;
    assert.equal(
      [update.command, update.sessionId, update.payload],
      ['session.update_pending_prompt', 's2', { promptId: 'pending_3', delivery: 'steer' }],
    );
    assert.equal(delivered(), [], 'nothing submitted yet');
    // Another prompt with the same text is not this one: the receipt names the hub's id.
    hub.event('session.pending_prompt_submitted', 's2', {
      sessionId: 's2',
      prompt: { id: 'pending_9', prompt: 'now please', delivery: 'queue' },
    });
    hub.event('session.pending_prompt_submitted', 's2', {
      sessionId: 's2',
      prompt: { id: 'pending_3', prompt: 'now please', delivery: 'steer' },
    });
    hub.event('session.pending_prompt_submitted', 's2', {
      sessionId: 's2',
      prompt: { id: 'pending_2', prompt: 'after you', delivery: 'queue' },
    });
    await until(() => delivered().length >= 2, 'both receipts');
    assert.equal(
      delivered().map((f) => [f.commandId, f.ref, f.started]),
      [
        ['c3', 'pending_3', false],
        ['c2', 'pending_2', false],
      ],
    );
  } finally {
    await close();
  }
});

test("startTurn: a run.started for another client's request names no start; a refusal or a hub that is down is not taken; a steer the hub finds gone because the next turn took it became a queue", async () => {
  const { hub, t, close } = await transportOnStub('secret-s3');
  const facts: LaneFact[] = [];
  t.facts$.subscribe((f) => facts.push(f));
  try {
    await until(() => t.ready!(), 'registered');
    // The request id is this client's, but the hub says another client sent it: not this start.
    hubTakes(hub, 'someone-else', { id: 'pending_4', idle: false });
    hub.replies.set('session.update_pending_prompt', { ok: true, payload: { sessionId: 's3', updated: true } });
    assert.equal(await t.startTurn!({ session: 's3', commandId: 'c4', text: 'x', otherwise: 'steer' }), {
      ok: true,
      became: 'queue',
    });
    assert.is(commandsOf(hub).at(-1)!.command, 'session.send_input', 'no id to steer by: it waits as queued');
    // The running turn ends between the reply and the steer: the hub began the next turn with it.
    hub.before.set('session.send_input', (env) => {
      const prompt = { id: 'pending_5', prompt: 'y', delivery: 'queue' };
      hub.event('run.started', 's3', { requestId: env.requestId, clientId: 'aep-test' });
      hub.event('session.pending_prompts', 's3', { sessionId: 's3', prompts: [prompt] });
    });
    hub.before.set('session.update_pending_prompt', () =>
      hub.event('session.pending_prompt_submitted', 's3', {
        sessionId: 's3',
        prompt: { id: 'pending_5', prompt: 'y', delivery: 'queue' },
      }),
    );
    hub.replies.set('session.update_pending_prompt', { ok: true, payload: { sessionId: 's3', updated: false } });
    assert.equal(await t.startTurn!({ session: 's3', commandId: 'c5', text: 'y', otherwise: 'steer' }), {
      ok: true,
      ref: 'pending_5',
      became: 'queue',
    });
    await until(() => facts.some((f) => f.kind === 'delivered'), 'its receipt');
    assert.equal(
      facts.filter((f) => f.kind === 'delivered').map((f) => [f.commandId, f.started]),
      [['c5', false]],
    );
    hub.before.clear();
    hub.replies.set('session.send_input', {
      ok: false,
      error: { code: 'session_not_found', message: 'Unknown session: s3' },
    });
    assert.equal(await t.startTurn!({ session: 's3', commandId: 'c6', text: 'z', otherwise: 'queue' }), {
      ok: false,
      reason: 'refused',
      detail: 'session_not_found',
    });
    await hub.close();
    await until(() => !t.ready!() || undefined, 'down');
    assert.equal(await t.startTurn!({ session: 's3', commandId: 'c7', text: 'z', otherwise: 'queue' }), {
      ok: false,
      reason: 'unreachable',
      detail: 'hub_unreachable',
    });
  } finally {
    await close();
  }
});

test('fail open: a wrong token or no hub leaves it down (busy), reported once; a lost hub is a lost fact; a restarted hub with a new token is found again, and each return is said', async () => {
  const errors: SteeringError[] = [];
  const backs: string[] = [];
  const hub = await stubHub('right');
  const d = dataDir();
  d.write(hub.url, 'wrong');
  const conn = new HubConnection({
    endpoint: () => resolveHubEndpoint(d.env),
    reconnectMs: 50,
    onError: (e) => errors.push(e),
    onBack: (url) => backs.push(url),
  });
  const t = hubLane(conn);
  const facts: LaneFact[] = [];
  t.facts$!.subscribe((f) => facts.push(f));
  try {
    await new Promise((r) => setTimeout(r, 400));
    assert.not.ok(t.ready!());
    assert.equal(await t.send!({ session: 's', commandId: 'c', text: 'x' }), {
      ok: false,
      reason: 'refused',
      detail: 'hub_unreachable',
    });
    assert.ok(errors.length >= 1 && errors.length <= 2, `reported once per problem, got ${errors.length}`);
    assert.match(errors[0]!.message, 'hooks are still observed');
    d.write(hub.url, 'right');
    await until(() => t.ready!(), 'registered after the record changed');
    // The log said the hub was unreachable: it also says when it is back.
    assert.equal(backs, [hub.url]);
    const port = hub.port;
    await hub.close();
    await until(() => facts.some((f) => f.kind === 'lost'), 'lost');
    assert.not.ok(t.ready!());
    const again = await stubHub('new-token', port);
    d.write(again.url, 'new-token');
    await until(() => t.ready!(), 'reconnected to the restarted hub');
    assert.equal(backs, [hub.url, again.url]);
    await again.close();
  } finally {
    await conn.close();
    rmSync(d.root, { recursive: true, force: true });
  }
});

test.run();
