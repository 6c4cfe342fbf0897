// `aep-steer adapter`: flags over environment over vendor defaults (D16), the hello's
// control.accepts gate (D5), and a relay that is down never holding up a hook (D15).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  adapterConfig,
  DEFAULT_RELAY_URL,
  runAdapter,
  type AdapterFlags,
  type RunningAdapter,
} from '../../src/cli/adapter-command.js';
import { command } from '../../src/protocol/index.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';

let dir = '';
test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'aep-adapter-cmd-'));
});
test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
});

const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({ AEP_STATE_DIR: join(dir, 'state'), ...extra });

function postHook(url: string, body: Record<string, unknown>): Promise<{ status: number; body: string }> {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
      (res) => {
        let out = '';
        res.on('data', (c: Buffer) => (out += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: out }));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, limitMs = 15_000): Promise<T> {
  const end = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`never saw ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('defaults come from the vendor table and the state dir', () => {
  const cfg = adapterConfig('claude-code', {}, env());
  assert.is(cfg.port, 8377);
  assert.is(cfg.attentionTimeoutMs, 55_000);
  assert.is(cfg.instruct, false);
  assert.is(cfg.relayUrl, DEFAULT_RELAY_URL);
  assert.is(cfg.logPath, join(dir, 'state', 'logs', 'claude-code.jsonl'));
  assert.is(cfg.ttlMs, 3_600_000, "D37: the D26 TTL bounds every vendor's queue, Claude Code included");
  assert.is(cfg.inspectPort, undefined);
  assert.is(
    readFileSync(join(dir, 'state', 'secret'), 'utf8').trim(),
    cfg.secret,
    'the secret is the one the installer shares',
  );
});

test('environment variables set what flags do not; flags win', () => {
  const e = env({
    AEP_HOOK_PORT: '9001',
    AEP_INSTRUCT: '1',
    AEP_ATTENTION_TIMEOUT_MS: '1500',
    AEP_INSTRUCT_TTL_MS: '60000',
    AEP_RELAY: 'ws://127.0.0.1:1/socket',
    AEP_TOKEN: 'tok',
    AEP_LOG: join(dir, 'x.jsonl'),
  });
  const fromEnv = adapterConfig('claude-code', { relay: true }, e);
  assert.equal(
    [
      fromEnv.port,
      fromEnv.instruct,
      fromEnv.attentionTimeoutMs,
      fromEnv.ttlMs,
      fromEnv.relayUrl,
      fromEnv.token,
      fromEnv.logPath,
    ],
    [9001, true, 1500, 60_000, 'ws://127.0.0.1:1/socket', 'tok', join(dir, 'x.jsonl')],
  );
  const fromFlags = adapterConfig(
    'claude-code',
    { port: '9002', attentionTimeoutMs: '2500', relay: 'ws://127.0.0.1:2/socket', token: 'flag', inspect: '0' },
    e,
  );
  assert.equal(
    [fromFlags.port, fromFlags.attentionTimeoutMs, fromFlags.relayUrl, fromFlags.token, fromFlags.inspectPort],
    [9002, 2500, 'ws://127.0.0.1:2/socket', 'flag', 0],
  );
  assert.is(adapterConfig('claude-code', { relay: false }, e).relayUrl, undefined, '--no-relay');
});

test("AEP_PORT is the relay's port and never moves an adapter's hook port", () => {
  assert.is(adapterConfig('claude-code', { relay: true }, env({ AEP_PORT: '9100' })).port, 8377);
  assert.is(adapterConfig('codex', { relay: true }, env({ AEP_PORT: '9100', AEP_HOOK_PORT: '9101' })).port, 9101);
});

test('bad flags and unknown vendors are CONFIG_INVALID errors', () => {
  for (const [token, flags] of [
    ['nobody', {}],
    ['claude-code', { port: '70000' }],
    ['claude-code', { port: 'x' }],
    ['claude-code', { attentionTimeoutMs: '0' }],
    ['claude-code', { secret: 'short' }],
  ] as const) {
    try {
      adapterConfig(token, flags, env());
      assert.unreachable(`${token} ${JSON.stringify(flags)}`);
    } catch (e) {
      assert.is((e as { code?: string }).code, 'CONFIG_INVALID', JSON.stringify(flags));
    }
  }
});

async function withStack(
  instruct: boolean,
  fn: (s: { relay: RelayHandle; running: RunningAdapter; consumer: RelayConsumer }) => Promise<void>,
  vendor = 'claude-code',
  flags: AdapterFlags = {},
  extraEnv: NodeJS.ProcessEnv = {},
): Promise<void> {
  const relay = await startRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const cfg = adapterConfig(
    vendor,
    { port: '0', relay: relay.socketUrl, token: 'tok', instruct, log: join(dir, 'a.jsonl'), ...flags },
    env(extraEnv),
  );
  const running = await runAdapter(cfg, () => undefined);
  const consumer = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'tester' });
  try {
    await fn({ relay, running, consumer });
  } finally {
    await consumer.close();
    await running.close();
    await relay.close();
  }
}

const sessionStart = (session: string) => ({
  session_id: session,
  hook_event_name: 'SessionStart',
  source: 'startup',
  cwd: '/p',
  transcript_path: '/t',
});

test('D5: the hello lists the instruct verb only with the gate open, and the relay refuses it otherwise', async () => {
  for (const instruct of [true, false]) {
    await withStack(instruct, async ({ running, consumer }) => {
      const session = `gate-${String(instruct)}`;
      await postHook(running.adapter.hookUrl, sessionStart(session));
      const entry = await until('roster entry', async () =>
        (await consumer.roster()).find((e) => e.session === session),
      );
      const accepts = (entry.control as { accepts?: string[] }).accepts ?? [];
      assert.ok(accepts.includes('control.attention.respond'));
      assert.is(accepts.includes('x.claude-code.control.instruct'), instruct);
      const s = await consumer.send(
        command({ agent: 'tester' }, session, {
          type: 'x.claude-code.control.instruct',
          data: { text: 'hello' },
          capture: 'redacted',
        }),
      );
      assert.is(s.outcome, instruct ? 'accepted' : 'refused', JSON.stringify(s));
    });
  }
});

test('the hello declares control.attention.respond only while a held loop is enabled: VS Code and Hermes by their gate', async () => {
  const cases: [string, AdapterFlags, NodeJS.ProcessEnv, boolean][] = [
    ['claude-code', {}, {}, true],
    ['vscode', {}, {}, false],
    ['vscode', { control: true, gateTools: 'editFile' }, {}, true],
    ['vscode', {}, { AEP_VSCODE_CONTROL: '1' }, true],
    ['hermes', {}, {}, false],
    ['hermes', { control: true }, {}, true],
    ['hermes', {}, { AEP_HERMES_CONTROL: '1', AEP_HERMES_GATE_TOOLS: 'terminal' }, true],
  ];
  for (const [vendor, flags, extraEnv, respond] of cases) {
    await withStack(
      true,
      async ({ running, consumer }) => {
        const session = `hello-${vendor}-${String(respond)}-${Object.keys(flags).length}`;
        const start =
          vendor === 'hermes'
            ? { session_id: session, hook_event_name: 'on_session_start', extra: {} }
            : sessionStart(session);
        await postHook(running.adapter.hookUrl, start);
        const entry = await until('roster entry', async () =>
          (await consumer.roster()).find((e) => e.session === session),
        );
        const accepts = (entry.control as { accepts?: string[] }).accepts ?? [];
        const what = `${vendor} ${JSON.stringify(flags)} ${JSON.stringify(extraEnv)}`;
        assert.is(accepts.includes('control.attention.respond'), respond, what);
        assert.ok(accepts.includes(`x.${vendor}.control.instruct`), what);
        // The relay refuses a respond the adapter did not declare (D17), before it reaches the adapter.
        if (!respond) {
          const s = await consumer.send(
            command({ agent: 'tester' }, session, {
              type: 'control.attention.respond',
              subject: 'r-1',
              data: { answer: { option: 'allow' } },
            }),
          );
          assert.equal(
            [s.outcome, s.outcome === 'refused' ? s.code : undefined],
            ['refused', 'unsupported'],
            JSON.stringify(s),
          );
        }
      },
      vendor,
      flags,
      extraEnv,
    );
  }
});

test('--control and --gate-tools (or their variables) build the gated surface; other vendors refuse them', () => {
  const on = adapterConfig('vscode', { control: true, gateTools: 'editFile' }, env());
  assert.equal([on.control, on.gateTools, on.surface.holds], [true, 'editFile', true]);
  const held = on.surface.classify({
    session_id: 's',
    hook_event_name: 'PreToolUse',
    tool_name: 'editFile',
    tool_input: {},
  });
  assert.is(held.class.kind, 'held');
  assert.is(
    on.surface.classify({ session_id: 's', hook_event_name: 'PreToolUse', tool_name: 'readFile', tool_input: {} }).class
      .kind,
    'moment',
  );
  const fromEnv = adapterConfig('hermes', {}, env({ AEP_HERMES_CONTROL: '1', AEP_HERMES_GATE_TOOLS: 'terminal' }));
  assert.equal([fromEnv.control, fromEnv.gateTools, fromEnv.surface.holds], [true, 'terminal', true]);
  const off = adapterConfig('vscode', {}, env({ AEP_HERMES_CONTROL: '1' }));
  assert.equal([off.control, off.surface.holds], [false, false], "another vendor's variable does not count");
  for (const [token, flags] of [
    ['claude-code', { control: true }],
    ['codex', { gateTools: 'Bash' }],
    ['vscode', { control: true, gateTools: '(' }],
  ] as const) {
    try {
      adapterConfig(token, flags, env());
      assert.unreachable(`${token} ${JSON.stringify(flags)}`);
    } catch (e) {
      assert.is((e as { code?: string }).code, 'CONFIG_INVALID', JSON.stringify(flags));
    }
  }
});

test('D15: with the relay down hooks are still answered, and the link catches up once it is up', async () => {
  const probe = await startRelay({ port: 0, storePath: ':memory:', token: 'tok' });
  const port = probe.port;
  await probe.close(); // now nothing listens there
  const cfg = adapterConfig(
    'claude-code',
    { port: '0', relay: `ws://127.0.0.1:${port}/socket`, token: 'tok', instruct: true, log: join(dir, 'a.jsonl') },
    env(),
  );
  const running = await runAdapter(cfg, () => undefined);
  let relay: RelayHandle | undefined;
  try {
    const r = await postHook(running.adapter.hookUrl, sessionStart('offline-1'));
    assert.is(r.status, 200);
    assert.equal(JSON.parse(r.body), {});
    const pre = await postHook(running.adapter.hookUrl, {
      session_id: 'offline-1',
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: {},
    });
    assert.is(pre.status, 200);
    relay = await startRelay({ port, storePath: ':memory:', token: 'tok' });
    const consumer = await RelayConsumer.connect({ url: relay.socketUrl, token: 'tok', agent: 'tester' });
    try {
      await until('the adapter to reconnect and claim its session', async () =>
        (await consumer.roster()).find((e) => e.session === 'offline-1'),
      );
    } finally {
      await consumer.close();
    }
  } finally {
    await running.close();
    await relay?.close();
  }
});

test('Cline hub gates: AEP_CLINE_HUB observes, AEP_CLINE_HUB_CONTROL (or --hub-control) also controls; --hub-url/--hub-token win; other vendors refuse --hub', () => {
  assert.is(adapterConfig('cline', {}, env()).userPlane, undefined, 'off by default: observe-only through hooks');
  assert.equal(adapterConfig('cline', {}, env({ AEP_CLINE_HUB: '1' })).userPlane?.control, false);
  assert.equal(adapterConfig('cline', {}, env({ AEP_CLINE_HUB_CONTROL: '1' })).userPlane?.control, true);
  const flagged = adapterConfig(
    'cline',
    { hubControl: true, hubUrl: 'ws://127.0.0.1:9/hub', hubToken: 'tok' },
    env({ AEP_CLINE_HUB_URL: 'ws://127.0.0.1:1/hub' }),
  );
  assert.equal(
    [flagged.userPlane?.control, flagged.userPlane?.env.AEP_CLINE_HUB_URL, flagged.userPlane?.env.AEP_CLINE_HUB_TOKEN],
    [true, 'ws://127.0.0.1:9/hub', 'tok'],
  );
  assert.throws(() => adapterConfig('codex', { hub: true }, env()), /codex takes no --hub: --hub is for cline/);
});

test('qwen serve lane: --serve and --serve-token-file over AEP_QWEN_SERVE_URL / _TOKEN_FILE; a loose or missing file, a bad URL and other vendors refused', () => {
  assert.is(adapterConfig('qwen-code', {}, env()).lane, undefined, 'off by default: hooks only');
  const file = join(dir, 'serve.token');
  writeFileSync(file, 'tok\n', { mode: 0o600 });
  const flagged = adapterConfig(
    'qwen-code',
    { serve: 'http://127.0.0.1:4170', serveTokenFile: file },
    env({ AEP_QWEN_SERVE_URL: 'http://127.0.0.1:1' }),
  );
  assert.equal(
    [flagged.lane?.spec.name, flagged.lane?.url, flagged.lane?.tokenFile],
    ['serve', 'http://127.0.0.1:4170', file],
  );
  const fromEnv = adapterConfig('qwen-code', {}, env({ AEP_QWEN_SERVE_URL: 'http://127.0.0.1:4171' }));
  assert.equal(
    [fromEnv.lane?.url, fromEnv.lane?.tokenFile],
    ['http://127.0.0.1:4171', undefined],
    'a token-less loopback daemon',
  );
  chmodSync(file, 0o644);
  assert.throws(
    () => adapterConfig('qwen-code', { serve: 'http://127.0.0.1:4170', serveTokenFile: file }, env()),
    /chmod 600/,
  );
  assert.throws(
    () => adapterConfig('qwen-code', { serve: 'http://127.0.0.1:4170', serveTokenFile: join(dir, 'none') }, env()),
    /cannot read the token file/,
  );
  assert.throws(() => adapterConfig('qwen-code', { serve: 'ws://127.0.0.1:4170' }, env()), /http\(s\) URL/);
  assert.throws(() => adapterConfig('qwen-code', { serveTokenFile: file }, env()), /needs --serve/);
  assert.throws(
    () => adapterConfig('vscode', { serve: 'http://127.0.0.1:4170' }, env()),
    /vscode takes no --serve: --serve is for qwen-code/,
  );
});

test('the adapter opens the serve lane it is given and closes it; hooks do not wait on it', async () => {
  const cfg = adapterConfig(
    'qwen-code',
    { port: '0', relay: false, log: join(dir, 'q.jsonl'), serve: 'http://127.0.0.1:1' },
    env(),
  );
  const running = await runAdapter(cfg, () => undefined);
  try {
    assert.equal(
      running.lanes?.map((l) => l.name),
      ['serve'],
    );
    assert.is(running.lanes![0]!.reaches('any'), false, 'nothing listens there');
    const r = await postHook(running.adapter.hookUrl, { hook_event_name: 'SessionStart', session_id: 's-1' });
    assert.is(r.status, 200);
  } finally {
    await running.close();
  }
});

test.run();
