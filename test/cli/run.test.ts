// `aep-steer run`: a vendor with no native lane, no adapter set up, and no adapter answering each
// say what to do next and exit with their own code; nothing is started. `run codex` refuses,
// before anything starts, when this terminal lacks the key codex's model provider reads; it
// starts its own app-server with the caller's environment (not the adapter's), which the adapter
// joins and which ends with the TUI. `run qwen-code` opens a session of its own on the daemon the
// adapter's serve lane is attached to, sends the prompt, prints the answer and leaves.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { spawn } from 'node:child_process';
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ensureSecret } from '../../src/adapters/install.js';
import { RUN_EXIT, runVendor } from '../../src/cli/run-command.js';
import { adapterConfig, runAdapter } from '../../src/cli/adapter-command.js';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { socketAnswers } from '../../src/adapters/codex/app-server/serve.js';
import { freePort } from '../support/readme-blocks.js';
import { alive } from '../support/spawned-servers.js';
import { textSink } from '../support/tui.js';
import { until } from '../support/until.js';

const root = join(import.meta.dirname, '..', '..');
const dirs: string[] = [];
const stateDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'aep-run-'));
  dirs.push(d);
  return d;
};
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A Codex config whose model provider reads its key from MOCK_API_KEY (vendor-clis-observed §2.2). */
function codexHomeWithEnvKey(dir: string): string {
  const home = join(dir, 'codex-home');
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, 'config.toml'),
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      '',
      '[model_providers.mock]',
      'name = "mock"',
      'base_url = "http://127.0.0.1:9/v1"',
      'env_key = "MOCK_API_KEY"',
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  return home;
}

/**
 * A stand-in `codex`: `app-server --listen unix://P` serves JSON-RPC over WebSocket there (what
 * the adapter's lane asks at its start) and writes down the environment and directory it runs
 * with and each client that says hello; `--remote ADDR …` is the TUI, which writes down its
 * arguments and exits at once.
 */
function standInCodex(dir: string): { bin: string; reports: () => Record<string, unknown>[] } {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const reports = join(dir, 'reports');
  mkdirSync(reports, { recursive: true });
  const ws = join(root, 'node_modules', 'ws', 'index.js');
  writeFileSync(
    join(bin, 'codex'),
    `#!${process.execPath}
const { appendFileSync } = require('node:fs');
const { createServer } = require('node:http');
const args = process.argv.slice(2);
const report = (o) => appendFileSync(${JSON.stringify(join(reports, 'r'))} + process.pid + '.jsonl', JSON.stringify({ pid: process.pid, ...o }) + '\\n');
if (args[0] === 'app-server') {
  const path = args[2].slice('unix://'.length);
  report({ role: 'server', key: process.env.MOCK_API_KEY ?? null, cwd: process.cwd() });
  const { WebSocketServer } = require(${JSON.stringify(ws)});
  const server = createServer();
  new WebSocketServer({ server }).on('connection', (c) => c.on('message', (d) => {
    const m = JSON.parse(String(d));
    if (m.method === 'initialize') report({ role: 'hello', client: m.params.clientInfo.name });
    if (m.id !== undefined) c.send(JSON.stringify({ id: m.id, result: m.method === 'thread/loaded/list' ? { data: [] } : {} }));
  }));
  server.listen(path);
  process.on('SIGTERM', () => process.exit(0));
} else {
  report({ role: 'tui', args });
}
`,
  );
  chmodSync(join(bin, 'codex'), 0o755);
  return {
    bin,
    reports: () =>
      readdirSync(reports).flatMap((f) =>
        readFileSync(join(reports, f), 'utf8')
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as Record<string, unknown>),
      ),
  };
}

test('a vendor with no native lane is a usage error naming those that have one', async () => {
  const err = textSink();
  const code = await runVendor('cline', [], {}, { err: err.stream }, { AEP_STATE_DIR: stateDir() });
  assert.is(code, RUN_EXIT.usage);
  assert.match(
    err.text(),
    'run: cline has no native lane to run on; `aep-steer run` takes claude-code, codex, qwen-code',
  );
});

test('no adapter set up here: says how to start one', async () => {
  const err = textSink();
  const code = await runVendor('codex', [], {}, { err: err.stream }, { AEP_STATE_DIR: stateDir() });
  assert.is(code, RUN_EXIT.noAdapter);
  assert.match(err.text(), 'no codex adapter was set up here; start it first: `aep-steer adapter codex --instruct`');
});

test('no adapter answers on the port: says so and how to start it', async () => {
  const dir = stateDir();
  ensureSecret(undefined, { AEP_STATE_DIR: dir });
  // A port that was free a moment ago: nothing listens on it.
  const port = await freePort();
  const err = textSink();
  const code = await runVendor('codex', [], { port: String(port) }, { err: err.stream }, { AEP_STATE_DIR: dir });
  assert.is(code, RUN_EXIT.noAdapter);
  assert.match(err.text(), `run: no adapter answers on 127.0.0.1:${port}`);
  assert.match(err.text(), 'start it first');
});

test('run codex without the key its model provider reads: refused before anything starts, naming the variable', async () => {
  const dir = stateDir();
  const codex = standInCodex(dir);
  const env = {
    AEP_STATE_DIR: dir,
    HOME: dir,
    CODEX_HOME: codexHomeWithEnvKey(dir),
    PATH: `${codex.bin}:${process.env.PATH}`,
  };
  ensureSecret(undefined, env);
  const err = textSink();
  const code = await runVendor('codex', [], { port: '9' }, { err: err.stream }, env);
  assert.is(code, RUN_EXIT.noCredentials, err.text());
  assert.match(err.text(), 'run: codex would fail its first prompt: this terminal lacks MOCK_API_KEY');
  assert.match(err.text(), 'model provider "mock"');
  assert.match(err.text(), 'export MOCK_API_KEY=<your key> here and run again');
  assert.equal(codex.reports(), [], 'no app-server and no TUI were started');
});

test("run codex starts its app-server with the caller's environment, the adapter joins it, and it ends with the TUI", async () => {
  const dir = stateDir();
  const codex = standInCodex(dir);
  // The adapter's environment, as `aep-steer up` had it: no model key.
  const adapterEnv = { AEP_STATE_DIR: dir, HOME: dir, PATH: `${codex.bin}:${process.env.PATH}` };
  const cfg = adapterConfig(
    'codex',
    { port: '0', relay: false, instruct: true, log: join(dir, 'a.jsonl') },
    adapterEnv,
  );
  const running = await runAdapter(cfg, () => undefined);
  try {
    const caller = { ...adapterEnv, CODEX_HOME: codexHomeWithEnvKey(dir), MOCK_API_KEY: 'from-this-terminal' };
    const err = textSink();
    const code = await runVendor(
      'codex',
      ['--model', 'x'],
      { port: String(running.adapter.port) },
      { err: err.stream },
      caller,
    );
    assert.is(code, 0, err.text());
    const reports = codex.reports();
    const server = reports.find((r) => r.role === 'server');
    assert.is(server?.key, 'from-this-terminal', 'the app-server has the key of the terminal `run` ran in');
    assert.is(server?.cwd, process.cwd(), 'and runs in its directory');
    assert.ok(
      reports.some((r) => r.role === 'hello' && r.client === 'aep-steer'),
      'the adapter joined the server before the TUI ran',
    );
    const tui = reports.find((r) => r.role === 'tui');
    assert.equal(((tui?.args ?? []) as string[]).slice(0, 2), ['--remote', `unix://${codexSocketPath(dir)}`]);
    assert.ok(((tui?.args ?? []) as string[]).includes('--model'), "the person's own arguments pass on");
    await until(() => !alive(server!.pid as number), 'the app-server ends once the TUI has exited');
    assert.not.ok(existsSync(codexSocketPath(dir)), 'its socket is gone');
  } finally {
    await running.close();
  }
});

test("a run beside another's app-server starts a server of its own; the adapter follows both; the other's runs on", async () => {
  const dir = stateDir();
  const codex = standInCodex(dir);
  const adapterEnv = { AEP_STATE_DIR: dir, HOME: dir, PATH: `${codex.bin}:${process.env.PATH}` };
  const cfg = adapterConfig(
    'codex',
    { port: '0', relay: false, instruct: true, log: join(dir, 'a.jsonl') },
    adapterEnv,
  );
  const running = await runAdapter(cfg, () => undefined);
  // The first run's server, still serving its TUI.
  mkdirSync(join(dir, 'codex'), { recursive: true, mode: 0o700 });
  const first = spawn(join(codex.bin, 'codex'), ['app-server', '--listen', `unix://${codexSocketPath(dir)}`], {
    stdio: 'ignore',
    env: { ...adapterEnv, MOCK_API_KEY: 'first' },
  });
  try {
    // Listening, not only bound: a socket that takes no connection yet would look left behind.
    await until(() => socketAnswers(codexSocketPath(dir)), 'the first server to listen', 20_000);
    const caller = { ...adapterEnv, CODEX_HOME: codexHomeWithEnvKey(dir), MOCK_API_KEY: 'second' };
    const err = textSink();
    const code = await runVendor('codex', [], { port: String(running.adapter.port) }, { err: err.stream }, caller);
    assert.is(code, 0, err.text());
    const own = join(dir, 'codex', `app-server-${process.pid}.sock`);
    const tui = codex.reports().find((r) => r.role === 'tui');
    assert.equal(
      ((tui?.args ?? []) as string[]).slice(0, 2),
      ['--remote', `unix://${own}`],
      'its TUI joined its own server',
    );
    const servers = codex.reports().filter((r) => r.role === 'server');
    assert.equal(servers.map((r) => r.key).sort(), ['first', 'second']);
    const hellos = codex
      .reports()
      .filter((r) => r.role === 'hello')
      .map((r) => r.pid);
    assert.equal([...new Set(hellos)].sort(), servers.map((r) => r.pid).sort(), 'the adapter joined both');
    assert.ok(alive(first.pid!), "the other run's server runs on");
    assert.ok(existsSync(codexSocketPath(dir)));
  } finally {
    first.kill('SIGTERM');
    await new Promise((r) => first.once('exit', r));
    await running.close();
  }
});

test('run codex where the app-server cannot start: says why and exits 4, nothing else runs', async () => {
  const dir = stateDir();
  const env = { AEP_STATE_DIR: dir, HOME: dir, PATH: join(dir, 'no-bin') };
  const cfg = adapterConfig('codex', { port: '0', relay: false, instruct: true, log: join(dir, 'a.jsonl') }, env);
  const running = await runAdapter(cfg, () => undefined);
  try {
    const err = textSink();
    const code = await runVendor('codex', [], { port: String(running.adapter.port) }, { err: err.stream }, env);
    assert.is(code, RUN_EXIT.laneFailed, err.text());
    assert.match(err.text(), 'run: cannot start the app-server: cannot run codex');
    assert.match(err.text(), 'AEP_CODEX_BIN');
  } finally {
    await running.close();
  }
});

/**
 * A stand-in `qwen serve` daemon behind a bearer token: the routes the serve lane and `run
 * qwen-code` use, with shapes as 0.24.4 sends them (bench/servers/qwen-serve.ts); a prompt's
 * turn answers at once with text naming the prompt.
 */
async function standInDaemon(token: string, workspace: string) {
  const seen: { method: string; path: string; body: unknown }[] = [];
  const streams = new Map<string, Set<ServerResponse>>();
  let seq = 0;
  const emit = (session: string, frame: Record<string, unknown>) => {
    const id = ++seq;
    for (const s of streams.get(session) ?? [])
      s.write(`id: ${id}\ndata: ${JSON.stringify({ id, v: 1, ...frame })}\n\n`);
  };
  const server = createHttpServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = text === '' ? undefined : JSON.parse(text);
      seen.push({ method: req.method ?? '', path: url.pathname, body });
      const json = (status: number, o: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(o));
      };
      if (req.headers.authorization !== `Bearer ${token}`) return json(401, { error: 'unauthorized' });
      const parts = url.pathname.split('/');
      if (url.pathname === '/capabilities') return json(200, { v: 1, mode: 'http-bridge', workspaceCwd: workspace });
      if (url.pathname.endsWith('/sessions/live-state'))
        return json(200, { sessions: [...streams.keys()].map((sessionId) => ({ sessionId })) });
      if (req.method === 'POST' && url.pathname === '/session') {
        if (body?.cwd !== workspace) return json(400, { error: 'workspace_mismatch' });
        const id = `s-${streams.size + 1}`;
        streams.set(id, new Set());
        return json(200, { sessionId: id });
      }
      const session = parts[2]!;
      const what = parts.slice(3).join('/');
      if (what === 'events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('retry: 3000\n\n');
        streams.get(session)?.add(res);
        res.on('close', () => streams.get(session)?.delete(res));
        return;
      }
      if (what === 'turns/current') return json(200, { state: 'idle' });
      if (what === 'approval-mode') return json(200, {});
      if (what === 'prompt') {
        const promptId = `p-${seq + 1}`;
        const said = String(body?.prompt?.[0]?.text ?? '');
        json(202, { promptId });
        const update = (u: Record<string, unknown>) =>
          emit(session, { type: 'session_update', promptId, data: { sessionId: session, update: u } });
        update({ sessionUpdate: 'user_message_chunk', content: { type: 'text', text: said } });
        update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `STAND-IN ANSWERS ${said}` } });
        emit(session, {
          type: 'turn_complete',
          promptId,
          data: { sessionId: session, promptId, stopReason: 'end_turn' },
        });
        return;
      }
      json(404, { error: 'no such route' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    seen,
    close: () =>
      new Promise<void>((r) => {
        for (const set of streams.values()) for (const s of set) s.end();
        server.close(() => r());
      }),
  };
}

test("run qwen-code: a session of its own on the serve lane's daemon, its prompt sent, the answer printed, then it leaves", async () => {
  const dir = stateDir();
  const tokenFile = join(dir, 'serve.token');
  writeFileSync(tokenFile, 'tok-123\n', { mode: 0o600 });
  const daemon = await standInDaemon('tok-123', process.cwd());
  const env = { AEP_STATE_DIR: dir, HOME: dir };
  const cfg = adapterConfig(
    'qwen-code',
    {
      port: '0',
      relay: false,
      instruct: true,
      log: join(dir, 'a.jsonl'),
      serve: daemon.url,
      serveTokenFile: tokenFile,
    },
    env,
  );
  const running = await runAdapter(cfg, () => undefined);
  try {
    const out = textSink();
    const err = textSink();
    const code = await runVendor(
      'qwen-code',
      ['--approval-mode', 'yolo', 'hello', 'daemon'],
      { port: String(running.adapter.port) },
      { err: err.stream, out: out.stream, in: Readable.from([]) },
      env,
    );
    assert.is(code, 0, err.text());
    assert.match(out.text(), 'STAND-IN ANSWERS hello daemon');
    assert.match(err.text(), 'run: qwen-code session s-1 on');
    assert.match(err.text(), 'aep-steer instruct --session s-1 --delivery steer');
    const posted = (path: string) => daemon.seen.find((r) => r.method === 'POST' && r.path === path)?.body;
    assert.equal(posted('/session'), { cwd: process.cwd() }, 'the session is opened in the folder `run` runs in');
    assert.equal(posted('/session/s-1/approval-mode'), { mode: 'yolo' });
    assert.equal(posted('/session/s-1/prompt'), { prompt: [{ type: 'text', text: 'hello daemon' }] });
  } finally {
    await running.close();
    await daemon.close();
  }
});

test('run qwen-code where the adapter has no serve lane: says how to start it with one', async () => {
  const dir = stateDir();
  const env = { AEP_STATE_DIR: dir, HOME: dir };
  const cfg = adapterConfig('qwen-code', { port: '0', relay: false, log: join(dir, 'a.jsonl') }, env);
  const running = await runAdapter(cfg, () => undefined);
  try {
    const err = textSink();
    // By the name of its CLI, as a person types it.
    const code = await runVendor('qwen', ['hi'], { port: String(running.adapter.port) }, { err: err.stream }, env);
    assert.is(code, RUN_EXIT.laneFailed, err.text());
    assert.match(err.text(), 'has no serve lane');
    assert.match(err.text(), '`aep-steer up qwen-code --serve --instruct`');
  } finally {
    await running.close();
  }
});

test.run();
