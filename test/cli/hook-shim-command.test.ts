// `aep-steer hook <vendor>` (the Node fallback shim) against a real loopback server: it relays,
// and every failure prints the vendor's neutral reply (D15).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { writeSecret } from '../../src/adapters/install.js';
import { runHookShim, type HookShimFlags } from '../../src/cli/hook-shim-command.js';

async function run(token: string, flags: HookShimFlags, input: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  let out = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stdin.end(input);
  await runHookShim(token, flags, { stdin, stdout, env });
  return out;
}

async function serve(status: number, reply: string | undefined): Promise<{ server: Server; port: number; bodies: string[] }> {
  const bodies: string[] = [];
  const server = createServer((req, res) => {
    let b = '';
    req.on('data', (c: Buffer) => (b += c.toString()));
    req.on('end', () => {
      bodies.push(`${req.url} ${b}`);
      if (reply === undefined) return; // never answers
      res.writeHead(status).end(reply);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, bodies };
}
const stop = (s: Server) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); });
const body = '{"session_id":"s","hook_event_name":"PreToolUse"}';

test('relays to the URL built from the stored secret and prints the reply', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-hook-'));
  const { server, port, bodies } = await serve(200, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"x"}}');
  try {
    writeSecret('stored-secret-0123456789', { AEP_STATE_DIR: dir });
    const out = await run('claude-code', { port: String(port) }, body, { AEP_STATE_DIR: dir });
    assert.is(out, '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"x"}}\n');
    assert.equal(bodies, [`/hook/stored-secret-0123456789 ${body}`]);
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
});

test('error status, empty reply, no answer, nothing listening, no secret: the neutral reply', async () => {
  const bad = await serve(500, '{"nope":1}');
  const empty = await serve(200, '');
  const silent = await serve(200, undefined);
  const closed = await serve(200, '{}');
  await stop(closed.server);
  try {
    assert.is(await run('claude-code', { url: `http://127.0.0.1:${bad.port}/hook/x` }, body), '{}\n');
    assert.is(await run('claude-code', { url: `http://127.0.0.1:${empty.port}/hook/x` }, body), '{}\n');
    assert.is(await run('claude-code', { url: `http://127.0.0.1:${silent.port}/hook/x`, timeout: '0.3' }, body), '{}\n');
    assert.is(await run('claude-code', { url: `http://127.0.0.1:${closed.port}/hook/x` }, body), '{}\n');
    assert.is(await run('claude-code', {}, body, { AEP_STATE_DIR: join(tmpdir(), 'aep-hook-none-xyz') }), '{}\n');
    assert.is(await run('no-such-vendor', { url: `http://127.0.0.1:${closed.port}/hook/x` }, body), '', 'an unknown vendor has no neutral reply to print');
  } finally {
    await Promise.all([stop(bad.server), stop(empty.server), stop(silent.server)]);
  }
});

test.run();
