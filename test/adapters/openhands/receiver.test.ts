// The bridge's receiver on its own against the stand-in agent server: the socket close codes it
// must live through. 1013 (subscriber cap) and a key refused on the socket (4001) are retried,
// reported once and clearly; nothing is lost or doubled once it gets in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import WebSocket from 'ws';
import { AgentServer } from '../../../src/adapters/openhands/agent-server.js';
import { startReceiver, type Receiver } from '../../../src/adapters/openhands/receiver.js';
import type { OpenHandsFrame } from '../../../src/adapters/openhands/map.js';
import type { SteeringError } from '../../../src/protocol/index.js';
import { startMockOpenAi } from '../../support/mock-openai.js';
import { startOpenHandsServer, type StandIn } from '../../support/openhands-server.js';

const KEY = 'oh-key-0';

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function withReceiver(
  fn: (s: StandIn, r: Receiver, frames: OpenHandsFrame[], errors: SteeringError[]) => Promise<void>,
  maxSubscribers?: number,
): Promise<void> {
  const model = await startMockOpenAi();
  const server = await startOpenHandsServer({
    modelUrl: model.baseUrl,
    keys: [KEY],
    ...(maxSubscribers ? { maxSubscribers } : {}),
  });
  const errors: SteeringError[] = [];
  const frames: OpenHandsFrame[] = [];
  const receiver = startReceiver({
    server: new AgentServer({ url: server.url, key: KEY }),
    pollMs: 50,
    backoffMs: 20,
    backoffMaxMs: 100,
    onError: (e) => errors.push(e),
  });
  receiver.arrivals$.subscribe((a) => frames.push(a.body as unknown as OpenHandsFrame));
  try {
    await fn(server, receiver, frames, errors);
  } finally {
    await receiver.close();
    await server.close();
    await model.close();
  }
}

test('1013 over the subscriber cap: the receiver retries and attaches once a slot frees, with the whole log', async () => {
  await withReceiver(async (s, _r, frames) => {
    const id = s.create({ message: 'hi' });
    const squatter = new WebSocket(`ws://127.0.0.1:${s.port}/sockets/events/${id}?session_api_key=${KEY}`);
    await new Promise((r) => squatter.once('message', r));
    await until(
      () => s.requests.filter((q) => q.transport === 'ws-upgrade' && !('session_api_key' in q.query)).length >= 2,
      'a retry after 1013',
    );
    assert.equal(frames, []);
    squatter.close();
    await until(() => frames.length >= 3, 'the attach');
    assert.equal(
      frames.map((f) => f.event.kind),
      ['ConversationStateUpdateEvent', 'SystemPromptEvent', 'MessageEvent'],
    );
    assert.is(frames[0]!.first, true);
  }, 1);
});

test('a key refused on the socket (4001): one clear report, health says unauthorized, and it gets in once the key is right', async () => {
  await withReceiver(async (s, r, frames, errors) => {
    const id = s.create({ message: 'hi' });
    await until(() => frames.length >= 3, 'the first attach');
    s.setKeys(['rotated']);
    s.dropSockets();
    await until(() => errors.some((e) => /event socket/.test(e.message)), 'the socket report');
    await new Promise((r) => setTimeout(r, 300));
    const socketErrors = errors.filter((e) => /event socket/.test(e.message));
    assert.is(socketErrors.length, 1);
    assert.match(
      socketErrors[0]!.message,
      /close 4001\): give the bridge one of the server's OH_SESSION_API_KEYS_\* with --server-key or AEP_OPENHANDS_KEY/,
    );
    assert.not.ok(socketErrors[0]!.message.includes(KEY));
    assert.is(errors.length, 2, 'the search 401 and the socket 4001, each once');
    assert.is(r.health(), 'unauthorized');
    s.setKeys([KEY]);
    s.send(id, 'after the rotation');
    await until(() => frames.some((f) => f.event.kind === 'MessageEvent' && f !== frames[2]), 'the resumed socket');
    const ids = frames.map((f) => f.event.id);
    assert.is(new Set(ids).size, ids.length, 'nothing twice');
    assert.is(r.health(), 'ok');
  });
});

test.run();
