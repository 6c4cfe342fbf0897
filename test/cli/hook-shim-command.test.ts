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

const scratch = mkdtempSync(join(tmpdir(), 'aep-hook-state-'));
let said = '';

async function run(
  token: string,
  flags: HookShimFlags,
  input: string,
  env: NodeJS.ProcessEnv = { AEP_STATE_DIR: scratch },
): Promise<string> {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  said = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (said += c.toString()));
  stdin.end(input);
  await runHookShim(token, flags, { stdin, stdout, stderr, env });
  return out;
}

async function serve(
  status: number,
  reply: string | undefined,
): Promise<{ server: Server; port: number; bodies: string[] }> {
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
const stop = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });
const body = '{"session_id":"s","hook_event_name":"PreToolUse"}';

test('relays to the URL built from the stored secret and prints the reply', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-hook-'));
  const { server, port, bodies } = await serve(
    200,
    '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"x"}}',
  );
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
    assert.is(
      await run('claude-code', { url: `http://127.0.0.1:${silent.port}/hook/x`, timeout: '0.3' }, body),
      '{}\n',
    );
    assert.is(await run('claude-code', { url: `http://127.0.0.1:${closed.port}/hook/x` }, body), '{}\n');
    assert.is(await run('claude-code', {}, body, { AEP_STATE_DIR: join(tmpdir(), 'aep-hook-none-xyz') }), '{}\n');
    assert.is(
      await run('no-such-vendor', { url: `http://127.0.0.1:${closed.port}/hook/x` }, body),
      '',
      'an unknown vendor has no neutral reply to print',
    );
  } finally {
    await Promise.all([stop(bad.server), stop(empty.server), stop(silent.server)]);
  }
});

test('stderr says once why the adapter could not be reached, with what to do; a hook that gets through resets it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'aep-hook-once-'));
  const env = { AEP_STATE_DIR: dir };
  const closed = await serve(200, '{}');
  await stop(closed.server);
  const wrongSecret = await serve(404, '{"error":"not-found"}');
  const ok = await serve(200, '{}');
  try {
    assert.is(await run('claude-code', {}, body, env), '{}\n');
    assert.match(
      said,
      `aep-steer hook claude-code: no hook secret in ${join(dir, 'secret')}: run \`aep-steer install claude-code\``,
    );
    writeSecret('stored-secret-0123456789', env);
    await run('claude-code', { port: String(closed.port) }, body, env);
    assert.match(
      said,
      `no adapter is listening on 127.0.0.1:${closed.port}: start it with \`aep-steer adapter <vendor>\``,
    );
    await run('claude-code', { port: String(closed.port) }, body, env);
    assert.is(said, '', 'the same reason is not repeated under the next hook');
    await run('claude-code', { port: String(wrongSecret.port) }, body, env);
    assert.match(said, 'does not know this hook secret (HTTP 404): run `aep-steer install <vendor>` again');
    await run('claude-code', { port: String(ok.port) }, body, env);
    assert.is(said, '', 'a hook that gets through says nothing');
    await run('claude-code', { port: String(closed.port) }, body, env);
    assert.match(said, 'no adapter is listening', 'a new outage is said again');
    await run('claude-code', { port: String(closed.port), timeout: '0.2' }, body, env);
    assert.is(said, '');
    await run('no-such-vendor', {}, body, env);
    assert.match(said, 'unknown vendor "no-such-vendor"; known: claude-code');
  } finally {
    await Promise.all([stop(wrongSecret.server), stop(ok.server)]);
    rmSync(dir, { recursive: true, force: true });
  }
});

test.after(() => rmSync(scratch, { recursive: true, force: true }));

test.run();
