// The command-hook shim as a real process against a real loopback server: it relays the hook body
// and the reply, and on every failure prints the neutral reply and exits 0 (D15).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { shimPath } from '../../src/adapters/install.js';

function runShim(args: string[], stdin: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(shimPath(), args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(stdin);
  });
}

type Handler = (body: string, res: import('node:http').ServerResponse) => void;
async function serve(handler: Handler): Promise<{ server: Server; url: string; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      bodies.push(body);
      handler(body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook/abcdefghijklmnop`, bodies };
}
const stop = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });

const hook = JSON.stringify({
  session_id: 's1',
  hook_event_name: 'SessionStart',
  note: 'quote \' and "double" and\nnewline',
});

test("relays the hook body unchanged and prints the adapter's reply", async () => {
  const reply = '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"hi there"}}';
  const { server, url, bodies } = await serve((_b, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(reply);
  });
  try {
    const r = await runShim([url, '{}'], hook);
    assert.is(r.code, 0);
    assert.is(r.stdout.trim(), reply);
    assert.equal(bodies, [hook]);
  } finally {
    await stop(server);
  }
});

test('adapter down: neutral reply, exit 0', async () => {
  const { server, url } = await serve(() => undefined);
  await stop(server); // the port is now closed
  const r = await runShim([url, '{}'], hook);
  assert.is(r.code, 0);
  assert.is(r.stdout.trim(), '{}');
});

test('adapter error status: neutral reply, never the error body', async () => {
  const { server, url } = await serve((_b, res) => {
    res.writeHead(500);
    res.end('{"oops":true}');
  });
  try {
    const r = await runShim([url, '{}'], hook);
    assert.is(r.code, 0);
    assert.is(r.stdout.trim(), '{}');
  } finally {
    await stop(server);
  }
});

test('an empty 200 prints the neutral reply', async () => {
  const { server, url } = await serve((_b, res) => {
    res.writeHead(200);
    res.end();
  });
  try {
    const r = await runShim([url, '{}'], hook);
    assert.is(r.stdout.trim(), '{}');
  } finally {
    await stop(server);
  }
});

test('an adapter that never answers is cut off by the total limit and the neutral reply goes out', async () => {
  const { server, url } = await serve(() => undefined); // never responds
  try {
    const r = await runShim(['-t', '1', url, '{"decision":null}'], hook);
    assert.is(r.code, 0);
    assert.is(r.stdout.trim(), '{"decision":null}');
  } finally {
    await stop(server);
  }
});

test('no neutral reply given: prints nothing on failure; no URL: neutral and exit 0', async () => {
  const none = await runShim(['http://127.0.0.1:1/hook/abcdefghijklmnop'], hook);
  assert.is(none.code, 0);
  assert.is(none.stdout, '');
  const noUrl = await runShim([], hook);
  assert.is(noUrl.code, 0);
  assert.is(noUrl.stdout, '');
});

test.run();
