// The adapter in the foreground, as a person runs it beside an agent's TUI: a relay that is down
// for seconds is said once with its reason and once when it is back, never once per retry; and a
// taken port (hook, relay, console) says which process holds it and the flag that moves it,
// never that the relay is unreachable.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { freePort } from '../support/readme-blocks.js';
import { AEP_BIN } from '../support/services-rig.js';
import { until } from '../support/until.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let dir = '';
test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'aep-outage-'));
});
test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => {
  const e: NodeJS.ProcessEnv = { ...process.env, HOME: join(dir, 'home'), AEP_STATE_DIR: join(dir, 'state') };
  for (const k of ['AEP_PORT', 'AEP_HOOK_PORT', 'AEP_RELAY', 'AEP_TOKEN']) delete e[k];
  return e;
};

function run(args: string[]): { child: ChildProcess; stderr: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [AEP_BIN, ...args], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return { child, stderr: () => err, exited };
}

const count = (text: string, re: RegExp) => text.split('\n').filter((l) => re.test(l)).length;

test('relay down for seconds: one outage line with its reason, one line when it is back; the same for a loss later', async () => {
  const port = await freePort();
  const url = `ws://127.0.0.1:${port}/socket`;
  const a = run([
    'adapter',
    'claude-code',
    '--port',
    '0',
    '--relay',
    url,
    '--token',
    'outage-token',
    '--log',
    join(dir, 'a.jsonl'),
  ]);
  let relay: RelayHandle | undefined;
  try {
    await until(() => a.stderr().includes('hooks on http://127.0.0.1:'), 'the adapter start', 15_000);
    // The link retries at least every second: four seconds are several failed attempts.
    await sleep(4000);
    relay = await startRelay({ port, storePath: ':memory:', token: 'outage-token' });
    await until(() => a.stderr().includes('relay connected'), 'the relay back', 15_000);
    let text = a.stderr();
    assert.is(count(text, /relay unreachable/), 1, text);
    assert.match(text, `aep-steer adapter: relay unreachable: ${url}; retrying every second`);
    assert.match(text, /reason: relay link: connect ECONNREFUSED 127\.0\.0\.1:\d+ \[RELAY_UNREACHABLE\]/);
    assert.is(count(text, /RELAY_UNREACHABLE/), 1, text);
    assert.is(count(text, /relay connected/), 1, text);
    assert.match(text, `aep-steer adapter: relay connected: ${url} (reachable again)`);

    // Lost after being connected: said once with the reason, then back once.
    await relay.close();
    relay = undefined;
    await sleep(4000);
    relay = await startRelay({ port, storePath: ':memory:', token: 'outage-token' });
    await until(() => a.stderr().includes('relay reconnected'), 'the relay back again', 15_000);
    text = a.stderr();
    assert.is(count(text, /relay lost/), 1, text);
    assert.match(text, `aep-steer adapter: relay lost: ${url}; reconnecting every second`);
    assert.is(count(text, /RELAY_UNREACHABLE/), 2, text);
    assert.is(count(text, /relay reconnected/), 1, text);
  } finally {
    a.child.kill('SIGTERM');
    await a.exited;
    await relay?.close();
  }
});

async function hold(): Promise<{ server: Server; port: number }> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as { port: number }).port };
}

test('a taken hook port names its holder and --port, and says nothing about the relay', async () => {
  const { server, port } = await hold();
  try {
    // The relay is down too: a start that fails on its port must not report the relay.
    const a = run([
      'adapter',
      'claude-code',
      '--port',
      String(port),
      '--relay',
      `ws://127.0.0.1:${await freePort()}/socket`,
      '--log',
      join(dir, 'a.jsonl'),
    ]);
    assert.is(await a.exited, 1);
    const text = a.stderr();
    assert.match(text, `hook port ${port} on 127.0.0.1 is taken by pid ${process.pid} (`);
    assert.match(text, 'move it with --port (AEP_HOOK_PORT) [PORT_IN_USE]');
    assert.not.match(text, /unreachable|RELAY_/i);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('a taken relay port names its holder and --port (AEP_PORT)', async () => {
  const { server, port } = await hold();
  try {
    const r = run(['relay', '--port', String(port), '--memory']);
    assert.is(await r.exited, 1);
    assert.match(r.stderr(), `relay port ${port} on 127.0.0.1 is taken by pid ${process.pid} (`);
    assert.match(r.stderr(), 'move it with --port (AEP_PORT) [PORT_IN_USE]');
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test('a taken console port names its holder and --port, exit 4', async () => {
  const { server, port } = await hold();
  try {
    const r = run(['console', '--port', String(port), '--relay', `ws://127.0.0.1:${await freePort()}/socket`]);
    assert.is(await r.exited, 4);
    assert.match(r.stderr(), `console: console port ${port} on 127.0.0.1 is taken by pid ${process.pid} (`);
    assert.match(r.stderr(), 'move it with --port');
    assert.not.match(r.stderr(), /unreachable/i);
  } finally {
    await new Promise((r) => server.close(r));
  }
});

test.run();
