// The stand-in agent server against its contract (openhands-agent-server.md §2), so the bridge's
// tests rest on a server that really speaks it; and the bridge CLI against a wrong key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { projectRoot } from '../../support/shared-dir.js';
import { startMockOpenAi, type MockOpenAi } from '../../support/mock-openai.js';
import { startOpenHandsServer, type StandIn } from '../../support/openhands-server.js';

const KEY = 'oh-key-0';

async function withServer(
  fn: (s: StandIn, model: MockOpenAi) => Promise<void>,
  opts: { keys?: string[]; maxSubscribers?: number; authWindowMs?: number } = {},
): Promise<void> {
  const model = await startMockOpenAi();
  const server = await startOpenHandsServer({
    modelUrl: model.baseUrl,
    keys: opts.keys ?? [KEY],
    ...(opts.maxSubscribers ? { maxSubscribers: opts.maxSubscribers } : {}),
    ...(opts.authWindowMs ? { authWindowMs: opts.authWindowMs } : {}),
  });
  try {
    await fn(server, model);
  } finally {
    await server.close();
    await model.close();
  }
}

/** Opens a socket and collects frames until it closes or `count` frames arrived. */
function socket(
  url: string,
  opts: { headers?: Record<string, string>; first?: unknown; count?: number } = {},
): Promise<{ frames: Record<string, unknown>[]; code?: number }> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers: opts.headers ?? {} });
    const frames: Record<string, unknown>[] = [];
    ws.on('open', () => {
      if (opts.first !== undefined) ws.send(JSON.stringify(opts.first));
    });
    ws.on('message', (raw) => {
      frames.push(JSON.parse(String(raw)) as Record<string, unknown>);
      if (opts.count !== undefined && frames.length >= opts.count) {
        ws.close();
        resolve({ frames });
      }
    });
    ws.on('close', (code) => resolve({ frames, code }));
    ws.on('error', () => {});
  });
}

const wsUrl = (s: StandIn, id: string, q = 'resend_mode=all') => `ws://127.0.0.1:${s.port}/sockets/events/${id}?${q}`;

test('REST: X-Session-API-Key on every /api route (401 without it), 404 for an unknown conversation, 422 for a malformed body', async () => {
  await withServer(async (s) => {
    const id = s.create({ message: 'hi' });
    const get = (path: string, key?: string) =>
      fetch(`${s.url}${path}`, { headers: key ? { 'x-session-api-key': key } : {} });
    assert.is((await get('/api/conversations/search')).status, 401);
    assert.is((await get('/api/conversations/search', 'nope')).status, 401);
    const search = (await (await get('/api/conversations/search', KEY)).json()) as {
      items: { id: string; execution_status: string }[];
      next_page_id: null;
    };
    assert.equal(
      search.items.map((c) => [c.id, c.execution_status]),
      [[id, 'idle']],
    );
    assert.is(search.next_page_id, null);
    assert.is((await get('/api/conversations/nope', KEY)).status, 404);
    const post = (path: string, body: string) =>
      fetch(`${s.url}${path}`, {
        method: 'POST',
        headers: { 'x-session-api-key': KEY, 'content-type': 'application/json' },
        body,
      });
    assert.is((await post(`/api/conversations/${id}/events`, '{not json')).status, 422);
    assert.is((await post(`/api/conversations/${id}/events`, JSON.stringify({ content: 'not a list' }))).status, 422);
    assert.is(
      (
        await post(
          `/api/conversations/${id}/events`,
          JSON.stringify({ role: 'assistant', content: [{ type: 'text', text: 'x' }] }),
        )
      ).status,
      500,
      'user-only, asserted server-side',
    );
    assert.is((await post(`/api/conversations/nope/events`, JSON.stringify({ content: [] }))).status, 404);
    assert.is((await post(`/api/conversations/${id}/interrupt`, '{}')).status, 200, 'idle: falls back to pause()');
    assert.is(s.conversation(id)!.status, 'paused');
    assert.is((await post(`/api/conversations/${id}/pause`, '{}')).status, 400, 'pause acts only from idle or running');
  });
});

test('REST search pages at most 100 conversations and points at the next page', async () => {
  await withServer(async (s) => {
    for (let i = 0; i < 105; i += 1) s.create();
    const page = async (q: string) =>
      (await (
        await fetch(`${s.url}/api/conversations/search?${q}`, { headers: { 'x-session-api-key': KEY } })
      ).json()) as { items: unknown[]; next_page_id: string | null };
    const first = await page('limit=500');
    assert.is(first.items.length, 100);
    assert.is(typeof first.next_page_id, 'string');
    const second = await page(`page_id=${first.next_page_id}`);
    assert.is(second.items.length, 5);
    assert.is(second.next_page_id, null);
  });
});

test('socket: three auth paths (query, header, first frame); full_state first, then the resend', async () => {
  await withServer(async (s) => {
    const id = s.create({ message: 'hi' });
    const logged = s.conversation(id)!.events.length;
    for (const way of [
      socket(wsUrl(s, id, `resend_mode=all&session_api_key=${KEY}`), { count: 1 + logged }),
      socket(wsUrl(s, id), { headers: { 'x-session-api-key': KEY }, count: 1 + logged }),
      socket(wsUrl(s, id), { first: { type: 'auth', session_api_key: KEY }, count: 1 + logged }),
    ]) {
      const { frames } = await way;
      assert.equal([frames[0]!.kind, frames[0]!.key], ['ConversationStateUpdateEvent', 'full_state']);
      assert.equal(
        frames.slice(1).map((f) => f.kind),
        ['SystemPromptEvent', 'MessageEvent'],
      );
      assert.ok(
        frames.every((f) => !('parent_id' in f)),
        'v1.36 transport shape strips parent_id',
      );
    }
  });
});

test('socket: 4001 for a wrong key or no auth frame in the window, 4004 for an unknown conversation, 1013 over the cap', async () => {
  await withServer(
    async (s) => {
      const id = s.create();
      assert.is((await socket(wsUrl(s, id), { first: { type: 'auth', session_api_key: 'wrong' } })).code, 4001);
      assert.is((await socket(wsUrl(s, id, 'session_api_key=wrong'))).code, 4001);
      assert.is((await socket(wsUrl(s, id))).code, 4001, 'auth window elapsed');
      assert.is((await socket(wsUrl(s, 'nope'), { first: { type: 'auth', session_api_key: KEY } })).code, 4004);
      const held = new WebSocket(wsUrl(s, id, `session_api_key=${KEY}`));
      await new Promise((r) => held.once('message', r));
      assert.is((await socket(wsUrl(s, id, `session_api_key=${KEY}`))).code, 1013);
      held.close();
    },
    { maxSubscribers: 1, authWindowMs: 150 },
  );
});

test('the agent loop reads its event log: a message appended during a step reaches the next model request; run:false on an idle one runs nothing', async () => {
  await withServer(
    async (s, model) => {
      const id = s.create({ message: '[[TURN]] [[TOOLS:1]] go' });
      const hold = model.hold();
      s.run(id);
      await hold.arrived;
      s.send(id, 'APPENDED-DURING-STEP', false);
      hold.release();
      await s.until(id, 'finished');
      const requests = model.modelRequests();
      assert.ok(requests.length >= 2);
      assert.not.ok(requests[0]!.text.includes('APPENDED-DURING-STEP'));
      assert.ok(requests[1]!.text.includes('APPENDED-DURING-STEP'));
      const count = requests.length;
      s.send(id, 'WHILE-FINISHED', false);
      assert.is(s.conversation(id)!.status, 'idle', 'an append resets finished to idle');
      await new Promise((r) => setTimeout(r, 100));
      assert.is(model.modelRequests().length, count, 'nothing runs it');
    },
    { keys: [] },
  );
});

test('the bridge CLI with a wrong key: a clear error saying what to do, and it keeps running and recovers once the key is right', async () => {
  await withServer(async (s) => {
    const id = s.create({ message: 'hi' });
    const dir = mkdtempSync(join(tmpdir(), 'aep-oh-cli-'));
    const child = spawn(
      process.execPath,
      [
        join(projectRoot, 'bin', 'aep-steer.js'),
        'adapter',
        'openhands',
        '--port',
        '0',
        '--no-relay',
        '--server',
        s.url,
        '--server-key',
        'wrong-key',
        '--poll',
        '0.05',
        '--log',
        join(dir, 'oh.jsonl'),
        '--secret',
        'openhands-cli-secret-0123',
      ],
      { env: { ...process.env, AEP_STATE_DIR: join(dir, 'state') }, stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    const until = async (pred: () => boolean | Promise<boolean>, what: string) => {
      // Generous: the CLI starts through tsx, slow on a loaded machine.
      for (let i = 0; i < 600; i += 1) {
        if (await pred()) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`timed out waiting for ${what}; stderr: ${stderr}`);
    };
    try {
      await until(() => /SOURCE_UNAUTHORIZED/.test(stderr), 'the key error');
      assert.match(
        stderr,
        /refused the session API key \(401\): give the bridge one of the server's OH_SESSION_API_KEYS_\* with --server-key or AEP_OPENHANDS_KEY/,
      );
      assert.not.ok(stderr.includes('wrong-key'), 'the key itself is never printed');
      const port = Number(/health on http:\/\/127\.0\.0\.1:(\d+)\/healthz/.exec(stderr)?.[1]);
      const health = async () =>
        (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as Record<string, unknown>;
      assert.equal(await health(), { ok: true, relay: 'off', source: 'unauthorized' });
      assert.is(child.exitCode, null, 'still running');
      const reported = stderr.split('SOURCE_UNAUTHORIZED').length;
      await new Promise((r) => setTimeout(r, 300));
      assert.is(stderr.split('SOURCE_UNAUTHORIZED').length, reported, 'reported once, not once per poll');
      s.setKeys(['wrong-key']);
      await until(async () => (await health()).source === 'ok', 'recovery');
      await until(
        () => s.requests.some((r) => r.transport === 'ws-upgrade' && r.path === `/sockets/events/${id}`),
        'the socket',
      );
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

test.run();
