// D21 attacks from a browser: a page on another site using a token it found, and DNS rebinding
// (a name the attacker controls, pointed at 127.0.0.1, so the page counts as same-origin). The
// relay used to answer every origin with `Access-Control-Allow-Origin: *`, upgrade any socket
// and serve any Host.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:http';
import type { RelayHandle } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import { TOKENS, tokensRelay } from './fixture.js';

let relay: RelayHandle;
test.before(async () => {
  relay = await tokensRelay({ allowOrigins: ['http://localhost:5173'] });
});
test.after(async () => {
  await relay.close();
});

/** One raw HTTP exchange with the headers a browser would send (Host and Origin included). */
function raw(
  path: string,
  headers: Record<string, string>,
  method = 'GET',
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: relay.port,
        path,
        method,
        headers: { authorization: `Bearer ${TOKENS.watcher}`, ...headers },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** A WebSocket upgrade request; resolves with 101 or the refusal's status. */
function upgrade(headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({
      host: '127.0.0.1',
      port: relay.port,
      path: '/socket',
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        authorization: `Bearer ${TOKENS.watcher}`,
        ...headers,
      },
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve(res.statusCode ?? 0);
    });
    req.on('response', (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

test('a page on another origin cannot open the socket or read the stream; the allowed origin can', async () => {
  assert.is(await upgrade({ origin: 'https://evil.example' }), 403);
  assert.is(await upgrade({ origin: 'null' }), 403);
  assert.is(await upgrade({ origin: 'http://localhost:5173' }), 101);
  // Not a browser: no Origin at all, as every CLI and adapter connects.
  assert.is(await upgrade({}), 101);
  const evil = await raw('/events', { origin: 'https://evil.example' });
  assert.is(evil.status, 403);
  assert.is(evil.headers['access-control-allow-origin'], undefined);
  assert.match(evil.body, /--allow-origin https:\/\/evil.example/);
  const preflight = await raw(
    '/events',
    { origin: 'https://evil.example', 'access-control-request-method': 'POST' },
    'OPTIONS',
  );
  assert.is(preflight.status, 403);
  assert.is(preflight.headers['access-control-allow-origin'], undefined);
});

test('no wildcard CORS: an allowed origin is echoed by name, and a request without Origin gets no CORS at all', async () => {
  const ok = await raw('/events', { origin: 'http://localhost:5173' });
  assert.is(ok.status, 200);
  assert.is(ok.headers['access-control-allow-origin'], 'http://localhost:5173');
  assert.is(ok.headers.vary, 'origin');
  const plain = await raw('/events', {});
  assert.is(plain.status, 200);
  assert.is(plain.headers['access-control-allow-origin'], undefined);
  const open = await testRelay({ port: 0, storePath: ':memory:' });
  const r = await fetch(`${open.url}/events`, { headers: { origin: 'https://evil.example' } });
  assert.is(r.status, 403);
  assert.is(r.headers.get('access-control-allow-origin'), null);
  await open.close();
});

test('DNS rebinding: a Host the relay does not serve is refused on HTTP, SSE and the socket', async () => {
  const host = 'rebind.attacker.example:8787';
  const discovery = await raw('/events', { host });
  assert.is(discovery.status, 421);
  assert.match(discovery.body, /--allow-host rebind.attacker.example/);
  assert.is((await raw('/stream', { host })).status, 421);
  assert.is(await upgrade({ host }), 403);
  // The names a loopback relay is reached by still work.
  for (const h of [`127.0.0.1:${relay.port}`, `localhost:${relay.port}`, `[::1]:${relay.port}`]) {
    assert.is((await raw('/events', { host: h })).status, 200, h);
  }
  // --allow-host adds a name.
  const named = await testRelay({ port: 0, storePath: ':memory:', allowHosts: ['relay.internal'] });
  const ok = await new Promise<number>((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: named.port, path: '/events', headers: { host: 'relay.internal' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end();
  });
  assert.is(ok, 200);
  await named.close();
});

test.run();
