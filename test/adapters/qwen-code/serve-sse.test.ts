// The qwen serve SSE follower against a loopback stand-in stream: frames become envelopes, a
// dropped stream is reopened with `Last-Event-ID` (the daemon replays from its ring after it),
// the bearer comes from the token file, and `session_died` ends the stream for good.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serveClient } from '../../../src/adapters/qwen-code/serve/client.js';
import type { ServeEvent } from '../../../src/adapters/qwen-code/serve/maps.js';
import { followSession } from '../../../src/adapters/qwen-code/serve/sse.js';
import { until } from '../../support/until.js';

const frame = (id: number, type: string, data: Record<string, unknown> = {}) =>
  `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify({ id, v: 1, type, data })}\n\n`;

test('a dropped stream reopens after the last event id it saw, and session_died completes it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-qwen-sse-'));
  const tokenFile = join(dir, 'token');
  writeFileSync(tokenFile, 'tok-1\n', { mode: 0o600 });
  const seen: { path?: string; auth?: string; last?: string }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    seen.push({ path: req.url, auth: req.headers.authorization, last: req.headers['last-event-id'] as string });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (seen.length === 1) {
      // Two frames, the second split across writes, then the connection drops.
      res.write(frame(1, 'session_update'));
      const two = frame(2, 'turn_complete', { stopReason: 'end_turn' });
      res.write(two.slice(0, 20));
      setTimeout(() => {
        res.write(two.slice(20));
        setTimeout(() => res.destroy(), 20);
      }, 20);
    } else {
      res.write(frame(3, 'mid_turn_message_injected', { messageIds: ['m-1'] }));
      res.write(frame(4, 'session_died'));
      res.write(frame(5, 'session_update'));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const events: ServeEvent[] = [];
  let completed = false;
  let opened = 0;
  const sub = followSession(serveClient({ url, tokenFile }), 'sess/1', {
    retryMs: 20,
    onOpen: () => opened++,
  }).subscribe({
    next: (e) => events.push(e),
    complete: () => (completed = true),
  });
  try {
    await until(() => completed, 'the stream to complete', 5000);
    assert.equal(
      events.map((e) => [e.id, e.type]),
      [
        [1, 'session_update'],
        [2, 'turn_complete'],
        [3, 'mid_turn_message_injected'],
        [4, 'session_died'],
      ],
    );
    assert.is(seen.length, 2, 'one reconnect, none after session_died');
    assert.equal(seen[0], { path: '/session/sess%2F1/events', auth: 'Bearer tok-1', last: undefined });
    assert.equal(seen[1], { path: '/session/sess%2F1/events', auth: 'Bearer tok-1', last: '2' });
    assert.is(opened, 2);
  } finally {
    sub.unsubscribe();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
