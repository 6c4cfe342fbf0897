// The adapter's relay link around its handshake: a link greeted before the runtime subscribed
// still carries the runtime's events (the Cline adapter opens its hub between connecting and
// starting); a relay that accepts the socket and never answers hello, or answers too late, is
// given up after the hello bound and retried, said once; a real relay that appears on the port
// then gets everything the adapter's log holds.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server, type Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import type { SteeringError } from '../../src/protocol/errors.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { testRelay } from '../support/relay-store.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { acceptsFor } from '../../src/streams/run.js';
import { adapter } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { freshSession } from '../support/relay-harness.js';
import { until } from '../support/until.js';

const TOKEN = 'tok';

/** Every event of one session the relay stored, by type. */
async function stored(url: string, session: string): Promise<string[]> {
  const c = await RelayConsumer.connect({ url, token: TOKEN, agent: 'test-cli' });
  const seen: AepEvent[] = [];
  await c.subscribe({ filter: { session }, from: [{ session }] }, { onEvent: (e) => seen.push(e) });
  await new Promise((r) => setTimeout(r, 50));
  await c.close();
  return seen.map((e) => e.type);
}

/** A WebSocket server that completes the upgrade, takes the hello and answers after `answerMs` (never if undefined). */
async function stallingServer(
  answerMs?: number,
  port = 0,
): Promise<{ port: number; hellos: () => number; closes: () => number; close(): Promise<void> }> {
  const wss = new WebSocketServer({ port, host: '127.0.0.1' });
  await new Promise((r) => wss.once('listening', r));
  let hellos = 0;
  let closes = 0;
  wss.on('connection', (ws) => {
    ws.on('close', () => (closes += 1));
    ws.on('message', () => {
      hellos += 1;
      if (answerMs !== undefined)
        setTimeout(
          () =>
            ws.send(
              JSON.stringify({
                type: 'hello',
                versions: ['0.1'],
                role: 'both',
                identity: { agent: 'late' },
                capabilities: {},
              }),
            ),
          answerMs,
        );
    });
  });
  return {
    port: (wss.address() as { port: number }).port,
    hellos: () => hellos,
    closes: () => closes,
    close: () =>
      new Promise<void>((r) => {
        for (const c of wss.clients) c.terminate();
        wss.close(() => r());
      }),
  };
}

/** A TCP server that accepts and never says a byte (not even the HTTP upgrade). */
async function silentTcp(): Promise<{ server: Server; port: number; accepted: () => number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((s) => {
    accepted += 1;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    server,
    port: (server.address() as { port: number }).port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A link to a local port that gives up a handshake after `helloTimeoutMs` and retries at once. */
const quickLink = (port: number, errors: SteeringError[], helloTimeoutMs = 150) =>
  connectRelay({
    url: `ws://127.0.0.1:${port}/socket`,
    token: TOKEN,
    agent: 'test-agent',
    helloTimeoutMs,
    backoffInitialMs: 20,
    backoffMaxMs: 50,
    onError: (e) => errors.push(e),
  });

test("a link greeted before the runtime subscribed still sends the runtime's events", async () => {
  const relay = await testRelay({ port: 0, storePath: ':memory:', token: TOKEN });
  const surface = fakeSurface();
  const link = connectRelay({
    url: relay.socketUrl,
    token: TOKEN,
    agent: surface.token,
    accepts: acceptsFor(surface, true),
  });
  // The hello lands while the adapter is still starting (as while the Cline adapter opens its hub).
  await link.ready();
  const a = await adapter({ surface, relay: link });
  const s = freshSession();
  await a.post(hookBody('SessionStart', s));
  await until(
    async () => (await stored(relay.socketUrl, s)).includes('session.started'),
    "the relay stored the session's events",
    5000,
  );
  await a.handle.close();
  await relay.close();
});

test('a late subscriber to the link state hears that it is up', async () => {
  const relay = await testRelay({ port: 0, storePath: ':memory:', token: TOKEN });
  const link = connectRelay({ url: relay.socketUrl, token: TOKEN, agent: 'test-agent' });
  await link.ready();
  const seen: boolean[] = [];
  const sub = link.state$.subscribe((up) => seen.push(up));
  assert.equal(seen, [true]);
  await relay.close();
  await until(() => seen.length === 2, 'the loss', 5000);
  assert.equal(seen, [true, false]);
  sub.unsubscribe();
  await link.close();
});

test('a relay that accepts the socket and never answers hello: the link gives up, retries, says so once; a real relay then gets the whole log', async () => {
  const stall = await stallingServer();
  const port = stall.port;
  const errors: SteeringError[] = [];
  const surface = fakeSurface();
  const link = connectRelay({
    url: `ws://127.0.0.1:${port}/socket`,
    token: TOKEN,
    agent: surface.token,
    accepts: acceptsFor(surface, true),
    helloTimeoutMs: 200,
    backoffInitialMs: 20,
    backoffMaxMs: 50,
    onError: (e) => errors.push(e),
  });
  const a = await adapter({ surface, relay: link });
  const s = freshSession();
  await a.post(hookBody('SessionStart', s));
  await a.post(hookBody('PreToolUse', s, { tool_name: 'Bash' }));
  // Several handshakes were tried and given up; each socket was closed, not left open.
  await until(
    () => stall.hellos() >= 3 && stall.closes() >= 2,
    'three hellos, each socket closed after the bound',
    10_000,
  );
  assert.not.ok(link.connected);
  const said = errors.filter((e) => /no hello/.test(e.message));
  assert.is(said.length, 1, errors.map((e) => e.message).join(' | '));
  assert.is(said[0]!.code, 'RELAY_UNREACHABLE');
  assert.match(said[0]!.message, new RegExp(`127\\.0\\.0\\.1:${port}.*200 ms`));
  assert.is(
    errors.filter((e) => /closed before the connection/.test(e.message)).length,
    0,
    "the link's own give-up is not reported as a socket error",
  );
  await stall.close();
  // A real relay on the same port: the link connects and resends everything its log holds.
  const relay = await testRelay({ port, storePath: ':memory:', token: TOKEN });
  await link.ready();
  await until(
    async () => {
      const types = await stored(relay.socketUrl, s);
      return types.includes('session.started') && types.includes('tool.requested');
    },
    'the logged events on the relay',
    10_000,
  );
  await a.handle.close();
  await relay.close();
});

test('a relay whose hello comes after the bound is given up and retried; one that answers within it connects', async () => {
  const late = await stallingServer(400);
  const errors: SteeringError[] = [];
  const link = quickLink(late.port, errors);
  await until(() => late.hellos() >= 2, 'a second handshake', 10_000);
  await new Promise((r) => setTimeout(r, 500));
  assert.not.ok(link.connected, 'a hello after the bound does not count: that socket was already given up');
  assert.is(errors.filter((e) => /no hello/.test(e.message)).length, 1);
  await link.close();
  await late.close();
  const inTime = await stallingServer(50);
  const ok = quickLink(inTime.port, errors, 2000);
  await ok.ready();
  assert.ok(ok.connected);
  await ok.close();
  await inTime.close();
});

test('a server that accepts TCP and never answers the upgrade is given up after the same bound', async () => {
  const tcp = await silentTcp();
  const errors: SteeringError[] = [];
  const link = quickLink(tcp.port, errors);
  await until(() => tcp.accepted() >= 3, 'three connection attempts', 10_000);
  assert.is(errors.filter((e) => /no hello/.test(e.message)).length, 1);
  await link.close();
  await tcp.close();
});

test('after a hello the next stall is said again (once per outage, not once per retry)', async () => {
  const first = await stallingServer();
  const port = first.port;
  const errors: SteeringError[] = [];
  const link = quickLink(port, errors);
  await until(() => first.hellos() >= 2, 'two stalled handshakes', 10_000);
  await first.close();
  const relay = await testRelay({ port, storePath: ':memory:', token: TOKEN });
  await link.ready();
  await relay.close();
  const second = await stallingServer(undefined, port);
  await until(() => second.hellos() >= 2, 'two stalled handshakes on the second outage', 10_000);
  assert.is(errors.filter((e) => /no hello/.test(e.message)).length, 2);
  await link.close();
  await second.close();
});

test('the consumer gives up a relay that never answers hello within its bound and moves on to the next node', async () => {
  const stall = await stallingServer();
  const relay = await testRelay({ port: 0, storePath: ':memory:', token: TOKEN });
  const t0 = Date.now();
  const err = await RelayConsumer.connect({
    url: `ws://127.0.0.1:${stall.port}/socket`,
    token: TOKEN,
    agent: 'test-cli',
    timeoutMs: 200,
  }).then(
    () => undefined,
    (e: SteeringError) => e,
  );
  assert.ok(err !== undefined);
  assert.is(err!.code, 'RELAY_UNREACHABLE');
  assert.match(err!.message, /no hello from relay at .* within 200 ms/);
  assert.ok(Date.now() - t0 < 5000);
  await until(() => stall.closes() >= 1, 'the stalled socket closed', 5000);
  const c = await RelayConsumer.connect({
    url: `ws://127.0.0.1:${stall.port}/socket,${relay.socketUrl}`,
    token: TOKEN,
    agent: 'test-cli',
    timeoutMs: 200,
  });
  assert.ok((await c.roster()) !== undefined);
  await c.close();
  await stall.close();
  await relay.close();
});

test('the consumer: a hello after its bound is a failure (the socket is dropped); one within it connects', async () => {
  const late = await stallingServer(600);
  const err = await RelayConsumer.connect({
    url: `ws://127.0.0.1:${late.port}/socket`,
    agent: 'test-cli',
    timeoutMs: 150,
  }).then(
    () => undefined,
    (e: SteeringError) => e,
  );
  assert.match(err?.message ?? '', /no hello from relay at .* within 150 ms/);
  await until(() => late.closes() >= 1, 'the late socket closed', 5000);
  await late.close();
  const inTime = await stallingServer(50);
  const c = await RelayConsumer.connect({
    url: `ws://127.0.0.1:${inTime.port}/socket`,
    agent: 'test-cli',
    timeoutMs: 2000,
  });
  await c.close();
  await inTime.close();
});

test.run();
