// Failing open leaves a trace: the real shell shim and the Node fallback (`aep-steer hook`) answer
// the agent neutrally when the adapter cannot be reached, and write each failed hook into the state
// directory's `hook-trace` (never the secret), keeping `hook-unreachable` until a hook gets through;
// `aep-steer doctor` and the adapter's start read them.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { cline } from '../../src/adapters/cline/table.js';
import { shimPath, writeSecret } from '../../src/adapters/install.js';
import { OUTAGE_FILE, readTrace, shimOutage, TRACE_FILE } from '../../src/adapters/shim-trace.js';
import { adapterConfig, runAdapter } from '../../src/cli/adapter-command.js';
import { runHookShim } from '../../src/cli/hook-shim-command.js';
import { shimTraceChecks } from '../../src/doctor/checks.js';

const SECRET = 'trace-secret-0123456789';
const hook = JSON.stringify({ hookName: 'PreToolUse', taskId: 't1' });

function fresh(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'aep-trace-')), 'state');
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

function runShim(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const p = spawn(shimPath(), args, { stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env.PATH, ...env } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ code, stdout, stderr }));
    p.stdin.end(hook);
  });
}

async function serve(
  status: number | undefined,
  reply = '{"contextModification":"x"}',
): Promise<{ server: Server; port: number }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (status === undefined) return; // never answers
      res.writeHead(status).end(reply);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port };
}
const stop = (s: Server) =>
  new Promise<void>((r) => {
    s.closeAllConnections();
    s.close(() => r());
  });
const closedPort = async (): Promise<number> => {
  const { server, port } = await serve(200);
  await stop(server);
  return port;
};

test('the shell shim: adapter down, wrong secret, too slow: neutral reply, exit 0, one trace line each, never the secret', async () => {
  const dir = fresh();
  writeSecret(SECRET, { AEP_STATE_DIR: dir });
  const secretFile = join(dir, 'secret');
  const down = await closedPort();
  const r1 = await runShim(['-t', '2', '-k', secretFile, `http://127.0.0.1:${down}/hook/`, '{}']);
  assert.equal([r1.code, r1.stdout.trim()], [0, '{}']);
  const wrong = await serve(404, 'nope');
  const r2 = await runShim(['-t', '2', '-k', secretFile, `http://127.0.0.1:${wrong.port}/hook/`, '{}']);
  assert.equal([r2.code, r2.stdout.trim()], [0, '{}']);
  await stop(wrong.server);
  const slow = await serve(undefined);
  const r3 = await runShim(['-t', '1', '-k', secretFile, `http://127.0.0.1:${slow.port}/hook/`, '{}']);
  assert.equal([r3.code, r3.stdout.trim()], [0, '{}']);
  await stop(slow.server);
  const lines = readTrace(dir);
  assert.equal(
    lines.map((l) => l.outcome),
    ['failed curl=7 http=000', 'failed curl=22 http=404', 'failed curl=28 http=000'],
  );
  assert.equal(
    lines.map((l) => l.where),
    [`127.0.0.1:${down}`, `127.0.0.1:${wrong.port}`, `127.0.0.1:${slow.port}`],
  );
  assert.match(lines[0]!.why, 'no adapter listening: start it with `aep-steer adapter <vendor>`');
  assert.match(lines[1]!.why, 'does not know this hook secret');
  assert.match(lines[2]!.why, 'did not answer within 1 s');
  assert.match(lines[0]!.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  const text = readFileSync(join(dir, TRACE_FILE), 'utf8');
  assert.not.ok(text.includes(SECRET), 'the trace never holds the secret');
  assert.is(shimOutage(dir).current?.outcome, 'failed curl=28 http=000', 'the outage marker holds the last failure');
  rmSync(dir, { recursive: true, force: true });
});

test('a delivered hook clears the outage and leaves the trace as it was; AEP_HOOK_TRACE=all traces it too', async () => {
  const dir = fresh();
  writeSecret(SECRET, { AEP_STATE_DIR: dir });
  const secretFile = join(dir, 'secret');
  await runShim(['-k', secretFile, `http://127.0.0.1:${await closedPort()}/hook/`, '{}']);
  assert.ok(existsSync(join(dir, OUTAGE_FILE)));
  const up = await serve(200, '{"contextModification":"hi"}\n');
  const r = await runShim(['-k', secretFile, `http://127.0.0.1:${up.port}/hook/`, '{}']);
  assert.is(r.stdout, '{"contextModification":"hi"}\n', 'the reply exactly, one newline');
  assert.not.ok(existsSync(join(dir, OUTAGE_FILE)));
  assert.is(readTrace(dir).length, 1);
  await runShim(['-k', secretFile, `http://127.0.0.1:${up.port}/hook/`, '{}'], { AEP_HOOK_TRACE: 'all' });
  assert.equal(
    readTrace(dir).map((l) => l.outcome),
    ['failed curl=7 http=000', 'ok curl=0 http=200'],
  );
  await stop(up.server);
  rmSync(dir, { recursive: true, force: true });
});

test('without -k the trace goes to AEP_STATE_DIR; a missing secret is traced as skipped; a full trace moves aside', async () => {
  const dir = fresh();
  const r = await runShim(['-k', join(dir, 'secret'), 'http://127.0.0.1:9/hook/', '{}']);
  assert.equal([r.code, r.stdout.trim()], [0, '{}']);
  assert.equal(
    readTrace(dir).map((l) => l.outcome),
    ['skipped'],
  );
  assert.match(readTrace(dir)[0]!.why, 'cannot read the hook secret');
  writeFileSync(join(dir, TRACE_FILE), 'x'.repeat(70 * 1024));
  await runShim([`http://127.0.0.1:${await closedPort()}/hook/${SECRET}`, '{}'], { AEP_STATE_DIR: dir });
  assert.ok(existsSync(join(dir, `${TRACE_FILE}.1`)));
  const after = readFileSync(join(dir, TRACE_FILE), 'utf8');
  assert.is(after.split('\n').filter(Boolean).length, 1);
  assert.not.ok(after.includes(SECRET));
  // No state directory: nothing is created, the hook still gets its neutral reply.
  const none = join(dir, 'absent');
  const r2 = await runShim([`http://127.0.0.1:${await closedPort()}/hook/x`, '{}'], { AEP_STATE_DIR: none });
  assert.equal([r2.code, r2.stdout.trim(), existsSync(none)], [0, '{}', false]);
  rmSync(dir, { recursive: true, force: true });
});

test('the Node fallback writes the same trace; doctor fails while the outage lasts and passes once a hook got through', async () => {
  const dir = fresh();
  const env = { AEP_STATE_DIR: dir };
  writeSecret(SECRET, env);
  const port = await closedPort();
  const call = async (p: number, e: NodeJS.ProcessEnv = env) => {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c: Buffer) => (out += c.toString()));
    stdin.end(hook);
    await runHookShim('cline', { port: String(p) }, { stdin, stdout, stderr: new PassThrough(), env: e });
    return out;
  };
  assert.is((await call(port)).trim(), '{}');
  const [line] = readTrace(dir);
  assert.equal([line!.outcome, line!.where], ['failed http=000', `127.0.0.1:${port}`]);
  assert.match(line!.why, `no adapter is listening on 127.0.0.1:${port}`);
  const [check] = shimTraceChecks(cline, env);
  assert.is(check!.ok, false);
  assert.match(check!.detail, `could not reach the adapter on 127.0.0.1:${port}`);
  assert.is(check!.fix, 'start the adapter: AEP_INSTRUCT=1 aep-steer up cline');
  // An adapter starting now says what the hooks missed meanwhile.
  const said: string[] = [];
  const cfg = adapterConfig('cline', { port: '0', relay: false, log: join(dir, 'cline.jsonl') }, env);
  const running = await runAdapter(
    cfg,
    () => {},
    (l) => said.push(l),
  );
  assert.ok(
    said.some((l) => l.includes('before this start the last hook') && l.includes(`127.0.0.1:${port}`)),
    said.join(' | '),
  );
  assert.is((await call(running.adapter.port)).trim(), '{}');
  const [after] = shimTraceChecks(cline, env);
  assert.is(after!.ok, true);
  assert.match(after!.detail, '1 hook failed open before');
  await running.close();
  // No trace at all: doctor has nothing to say about it.
  assert.equal(shimTraceChecks(cline, { AEP_STATE_DIR: fresh() }), []);
  rmSync(dir, { recursive: true, force: true });
});

test.run();
