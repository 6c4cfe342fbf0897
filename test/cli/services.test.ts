// `aep-steer up` / `status` / `down` against real processes: the real relay and a real Claude Code
// adapter started from bin/aep-steer.js, in a temp HOME and state dir, on free ports. What `up`
// starts runs detached with its output in the state dir's logs (never the caller's pipes); a
// killed service shows as not running; `down` leaves nothing listening; a taken port starts nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StatusRow } from '../../src/cli/services-status.js';
import { freePort } from '../support/readme-blocks.js';
import { AEP_BIN, hold, listening, servicesRig } from '../support/services-rig.js';
import { alive } from '../support/spawned-servers.js';

let relayPort = 0;
let hookPort = 0;
const rig = servicesRig('aep-services-', {
  async env() {
    relayPort = await freePort();
    hookPort = await freePort();
    return {};
  },
});
const { cli, state } = rig;

async function status(): Promise<{ rows: StatusRow[]; code: number | null }> {
  const r = await cli(['status', '--json']);
  return { rows: JSON.parse(r.stdout) as StatusRow[], code: r.status };
}

const record = (name: string) => rig.record(name) as { pid: number; startTicks: string };
const upArgs = () => ['up', 'claude-code', '--relay-port', String(relayPort), '--hook-port', String(hookPort)];

test("up starts the relay and the adapter detached, output in the logs, ready; nothing holds the caller's pipes after", async () => {
  const r = await cli(upArgs());
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, `relay: started (pid `);
  assert.match(r.stdout, `adapter-claude-code: started (pid `);
  // EOF on both pipes right after up exits: no service kept a copy of them.
  assert.ok(r.closedAt - r.exitedAt < 1000, `the pipes stayed open ${r.closedAt - r.exitedAt} ms after up exited`);

  // Ready when up returned: the relay serves and the adapter's link is up.
  assert.ok(await listening(relayPort));
  assert.ok(await listening(hookPort));
  const { rows, code } = await status();
  assert.is(code, 0);
  assert.equal(
    rows.map((x) => [x.name, x.running, x.port]),
    [
      ['relay', true, relayPort],
      ['adapter-claude-code', true, hookPort],
    ],
  );
  assert.is(rows[1]!.relayLink, 'connected');
  assert.is(rows[0]!.relayLink, 'serving');

  const logs = join(state(), 'logs');
  assert.is(statSync(logs).mode & 0o777, 0o700);
  for (const row of rows) {
    assert.is(statSync(row.log).mode & 0o777, 0o600, row.log);
    assert.is(statSync(join(state(), 'run', `${row.name}.pid`)).mode & 0o777, 0o600);
    // stdin closed, stdout and stderr the log file; its own process group (detached).
    assert.is(readlinkSync(`/proc/${row.pid}/fd/0`), '/dev/null');
    assert.is(readlinkSync(`/proc/${row.pid}/fd/1`), row.log);
    assert.is(readlinkSync(`/proc/${row.pid}/fd/2`), row.log);
    const stat = readFileSync(`/proc/${row.pid}/stat`, 'utf8')
      .slice(readFileSync(`/proc/${row.pid}/stat`, 'utf8').lastIndexOf(')') + 2)
      .split(' ');
    assert.is(Number(stat[2]), row.pid, 'process group id is its own pid');
  }
  assert.match(
    readFileSync(rows[1]!.log, 'utf8'),
    `aep-steer adapter: relay connected: ws://127.0.0.1:${relayPort}/socket`,
  );
  assert.match(readFileSync(rows[0]!.log, 'utf8'), `relay: socket ws://127.0.0.1:${relayPort}/socket`);
  const text = await cli(['status']);
  assert.match(text.stdout, /relay\s+\d+\s+\d+\s+running\s+serving/);
  assert.match(text.stdout, /adapter-claude-code\s+\d+\s+\d+\s+running\s+connected/);
});

test('up twice: the second reports what runs and starts nothing', async () => {
  assert.is((await cli(upArgs())).status, 0);
  const before = [record('relay').pid, record('adapter-claude-code').pid];
  const again = await cli(upArgs());
  assert.is(again.status, 0, again.stderr);
  assert.match(again.stdout, `relay: already runs (pid ${before[0]}, port ${relayPort}`);
  assert.match(again.stdout, `adapter-claude-code: already runs (pid ${before[1]}, port ${hookPort}`);
  assert.not.match(again.stdout, 'started (pid');
  assert.equal([record('relay').pid, record('adapter-claude-code').pid], before);
  assert.is((await status()).rows.length, 2);
});

test('a service killed with -9 shows as not running; up starts only it again; down stops everything, nothing listens', async () => {
  assert.is((await cli(upArgs())).status, 0);
  const relayPid = record('relay').pid;
  const adapterPid = record('adapter-claude-code').pid;
  process.kill(adapterPid, 'SIGKILL');
  for (let i = 0; i < 100 && alive(adapterPid); i++) await new Promise((r) => setTimeout(r, 20));
  const s = await status();
  assert.is(s.code, 1, 'status exits 1 while something up started is not running');
  assert.equal(
    s.rows.map((x) => [x.name, x.running]),
    [
      ['relay', true],
      ['adapter-claude-code', false],
    ],
  );
  assert.match((await cli(['status'])).stdout, 'adapter-claude-code is not running');

  const restart = await cli(upArgs());
  assert.is(restart.status, 0, restart.stderr);
  assert.match(restart.stdout, `relay: already runs (pid ${relayPid}`);
  assert.match(restart.stdout, 'adapter-claude-code: started');
  const newAdapter = record('adapter-claude-code').pid;
  assert.is.not(newAdapter, adapterPid);

  const down = await cli(['down']);
  assert.is(down.status, 0, down.stderr);
  assert.match(down.stdout, `adapter-claude-code: stopped (pid ${newAdapter})`);
  assert.match(down.stdout, `relay: stopped (pid ${relayPid})`);
  assert.not.ok(alive(relayPid));
  assert.not.ok(alive(newAdapter));
  assert.not.ok(await listening(relayPort), 'the relay port is closed');
  assert.not.ok(await listening(hookPort), 'the hook port is closed');
  assert.equal(readdirSync(join(state(), 'run')), []);
  assert.match((await cli(['status'])).stdout, 'nothing started by aep-steer up runs');
});

test('down never signals a process that is no longer the one up started (a reused pid)', async () => {
  const stranger = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
  try {
    await new Promise((r) => stranger.once('spawn', r));
    const pid = stranger.pid!;
    // A record naming the stranger's pid with another start time: what a reused pid looks like.
    const { mkdirSync } = await import('node:fs');
    mkdirSync(join(state(), 'run'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(state(), 'run', 'relay.pid'),
      JSON.stringify({
        name: 'relay',
        pid,
        startTicks: '1',
        argv: [],
        port: relayPort,
        log: join(state(), 'logs', 'relay.log'),
        startedAt: new Date().toISOString(),
      }),
      { mode: 0o600 },
    );
    assert.is((await status()).rows[0]!.running, false);
    const down = await cli(['down']);
    assert.match(down.stdout, `relay: was not running (pid ${pid} has ended); removed its record`);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(alive(pid), 'the other process still runs');
    assert.not.ok(existsSync(join(state(), 'run', 'relay.pid')));
  } finally {
    stranger.kill('SIGKILL');
  }
});

test('up with the hook port taken names the port, its holder and the flag, exits 3, starts nothing', async () => {
  const blocker = await hold(hookPort);
  try {
    const r = await cli(upArgs());
    assert.is(r.status, 3, r.stderr);
    assert.match(r.stderr, `up: claude-code hook port ${hookPort} on 127.0.0.1 is taken by pid ${process.pid} (`);
    assert.match(r.stderr, 'move it with --hook-port claude-code=<port>');
    assert.match(r.stderr, 'nothing was started');
    assert.not.match(r.stderr + r.stdout, /unreachable/i);
    assert.not.ok(await listening(relayPort), 'no relay was left running');
    assert.equal((await status()).rows, []);
  } finally {
    await new Promise((r) => blocker.close(r));
  }
});

test('up with the relay port taken names --relay-port and leaves nothing running', async () => {
  const blocker = await hold(relayPort);
  try {
    const r = await cli(upArgs());
    assert.is(r.status, 3, r.stderr);
    assert.match(r.stderr, `up: relay port ${relayPort} on 127.0.0.1 is taken by pid ${process.pid} (`);
    assert.match(r.stderr, 'move it with --relay-port (AEP_PORT)');
    assert.not.ok(await listening(hookPort), 'no adapter was left running');
    assert.equal((await status()).rows, []);
  } finally {
    await new Promise((r) => blocker.close(r));
  }
});

test('a service that does not become ready in time: up stops what it started in that call and exits 1', async () => {
  const r = await cli([...upArgs(), '--timeout-ms', '1']);
  assert.is(r.status, 1, r.stdout);
  assert.match(r.stderr, 'up: relay did not become ready within 1 ms');
  assert.match(r.stderr, 'up: stopped what this run started (relay)');
  assert.not.ok(await listening(relayPort));
  assert.not.ok(await listening(hookPort));
  assert.equal((await status()).rows, []);
});

/** A relay that refuses the adapter (a tokens file without the local token): the adapter never links up. */
function refusingRelayEnv(): void {
  const tokens = join(rig.dir, 'tokens.json');
  writeFileSync(tokens, JSON.stringify({ tokens: [{ token: 'only-this-one', identity: 'someone' }] }), { mode: 0o600 });
  rig.env['AEP_TOKENS_FILE'] = tokens;
}

test("an adapter whose relay link never comes up: up prints its log's reason, stops the relay it started, exits 1", async () => {
  refusingRelayEnv();
  const r = await cli([...upArgs(), '--timeout-ms', '3000']);
  assert.is(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, 'relay: started', 'the relay itself was ready');
  assert.match(r.stderr, 'up: adapter-claude-code did not become ready within 3000 ms');
  assert.match(r.stderr, /relay refused this adapter: ws:\/\/127\.0\.0\.1:\d+\/socket; retrying every second/);
  assert.match(r.stderr, /relay refused the connection: HTTP 401/);
  assert.match(r.stderr, 'up: stopped what this run started (relay, adapter-claude-code)');
  assert.not.ok(await listening(relayPort));
  assert.not.ok(await listening(hookPort));
  assert.equal((await status()).rows, []);
});

test('up interrupted while it waits stops what that call started', async () => {
  refusingRelayEnv();
  const child = spawn(process.execPath, [AEP_BIN, ...upArgs()], { env: rig.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  for (let i = 0; i < 400 && !existsSync(join(state(), 'run', 'adapter-claude-code.pid')); i++)
    await new Promise((r) => setTimeout(r, 25));
  const pids = [record('relay').pid, record('adapter-claude-code').pid];
  child.kill('SIGINT');
  const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  assert.is(code, 130, out);
  assert.match(out, 'up: interrupted; stopping what this run started');
  for (const pid of pids) assert.not.ok(alive(pid), `pid ${pid} still runs`);
  assert.not.ok(await listening(relayPort));
  assert.equal((await status()).rows, []);
});

test.run();
