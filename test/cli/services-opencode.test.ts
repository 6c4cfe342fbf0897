// `aep-steer up opencode` and `aep-steer run opencode` with a stand-in `opencode` (AEP_OPENCODE_BIN):
// its `serve` answers the routes the adapter follows (session list, running sessions, the event
// stream) only with the OPENCODE_SERVER_PASSWORD of its environment, as 1.18.33 does; its `attach`
// writes down what it was given and exits with a code of its own. `up opencode` starts the server
// in the folder it runs in, the password in a mode-600 file in the state dir and never on a
// command line, before the adapter, which follows it; `status` asks it with the password; `down
// opencode` ends it. `run opencode` starts what is missing and runs the TUI attached to that
// server with the password in its environment, reusing it the next time. `--serve URL` attaches.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/readme-blocks.js';
import { listening, servicesRig } from '../support/services-rig.js';
import { alive } from '../support/spawned-servers.js';

let relayPort = 0;
let hookPort = 0;
let servePort = 0;
const ports = () => ['--relay-port', String(relayPort), '--hook-port', `opencode=${hookPort}`];

/** A stand-in `opencode`: `serve` behind Basic auth with OPENCODE_SERVER_PASSWORD; `attach` reports and exits 7. */
const STAND_IN = (reports: string) => `const { appendFileSync } = require('node:fs');
const { createServer } = require('node:http');
const args = process.argv.slice(2);
const password = process.env.OPENCODE_SERVER_PASSWORD;
const report = (o) => appendFileSync(${JSON.stringify(reports)}, JSON.stringify({ pid: process.pid, argv: args, cwd: process.cwd(), password, ...o }) + '\\n');
if (args[0] === 'attach') { report({ kind: 'attach' }); process.exit(7); }
if (args[0] !== 'serve' || !password) process.exit(3);
report({ kind: 'serve' });
const port = Number(args[args.indexOf('--port') + 1]);
const want = 'Basic ' + Buffer.from('opencode:' + password).toString('base64');
createServer((req, res) => {
  if (req.headers.authorization !== want) { res.writeHead(401); return res.end(); }
  const json = (o) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(o)); };
  if (req.url === '/api/event') { res.writeHead(200, { 'content-type': 'text/event-stream' }); return res.write('data: {"id":"evt_0","type":"server.connected","data":{}}\\n\\n'); }
  if (req.url === '/api/session') return json({ data: [] });
  if (req.url === '/api/session/active') return json({ data: {} });
  res.writeHead(404); res.end();
}).listen(port, '127.0.0.1');
`;

const rig = servicesRig('aep-opencode-up-', {
  inProject: true,
  unset: ['OPENCODE_SERVER_PASSWORD'],
  async env(r) {
    relayPort = await freePort();
    hookPort = await freePort();
    servePort = await freePort();
    return {
      AEP_OPENCODE_BIN: r.standIn('opencode', STAND_IN(r.reports())),
      AEP_PORT: String(relayPort),
      AEP_HOOK_PORT: String(hookPort),
      AEP_OPENCODE_SERVE_PORT: String(servePort),
    };
  },
});
const { cli, state, project, reported, record } = rig;

test('up opencode starts `opencode serve` in this folder behind a mode-600 password file, the adapter follows it; down opencode ends it', async () => {
  const r = await cli(['up', 'opencode', '--instruct', ...ports()]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  const passwordFile = join(state(), 'opencode-serve.password');
  const url = `http://127.0.0.1:${servePort}`;
  assert.match(r.stdout, 'opencode-serve: started (pid ');
  assert.match(r.stdout, `serving ${url} for ${project()}; its password is in ${passwordFile} (mode 600)`);
  assert.ok(
    r.stdout.indexOf('opencode-serve: started') < r.stdout.indexOf('adapter-opencode: started'),
    'server first',
  );
  assert.is(statSync(passwordFile).mode & 0o777, 0o600, 'the password file is mode 600');
  const password = readFileSync(passwordFile, 'utf8').trim();
  const [server] = reported();
  assert.is(server!.password, password, 'the server requires the password in the file');
  assert.is(server!.cwd, project(), 'and serves the folder up ran in');
  assert.equal(server!.argv, ['serve', '--hostname', '127.0.0.1', '--port', String(servePort)]);
  assert.not.match(JSON.stringify(record('opencode-serve').argv), password, 'no command line carries the password');
  const adapterArgv = (record('adapter-opencode').argv as string[]).join(' ');
  assert.ok(adapterArgv.includes(`--serve ${url} --serve-password-file ${passwordFile}`), adapterArgv);

  const again = await cli(['up', 'opencode', '--instruct', ...ports()]);
  assert.is(again.status, 0, again.stderr);
  assert.match(again.stdout, `opencode-serve: already runs (pid ${server!.pid}`);
  assert.is(reported().length, 1, 'not started twice');

  const st = await cli(['status', '--json']);
  const row = (JSON.parse(st.stdout) as { name: string; relayLink: string }[]).find((x) => x.name === 'opencode-serve');
  assert.is(row?.relayLink, 'serving', 'status asks the server with its password');

  const down = await cli(['down', 'opencode']);
  assert.is(down.status, 0, down.stderr);
  assert.match(down.stdout, 'adapter-opencode: stopped');
  assert.match(down.stdout, `opencode-serve: stopped (pid ${server!.pid})`);
  assert.ok(down.stdout.indexOf('adapter-opencode') < down.stdout.indexOf('opencode-serve'), 'the adapter first');
  assert.not.ok(alive(server!.pid), 'the server ended');
  assert.ok(await listening(relayPort), 'the relay was not named and runs on');
});

test('run opencode starts what is missing and runs `opencode attach URL` with the password in its environment; the next run reuses it', async () => {
  const r = await cli(['run', 'opencode', '--continue']);
  assert.is(r.status, 7, `the TUI's own exit code: ${r.stdout}${r.stderr}`);
  assert.match(r.stdout, 'opencode-serve: started');
  assert.match(r.stdout, 'adapter-opencode: started');
  const url = `http://127.0.0.1:${servePort}`;
  const password = readFileSync(join(state(), 'opencode-serve.password'), 'utf8').trim();
  const attach = reported().filter((x) => x.kind === 'attach');
  assert.is(attach.length, 1);
  assert.equal(attach[0]!.argv, ['attach', url, '--dir', project(), '--continue']);
  assert.is(attach[0]!.password, password, 'the password reaches the TUI in its environment');
  assert.ok((record('adapter-opencode').argv as string[]).includes('--instruct'), 'the adapter takes instructions');

  const second = await cli(['run', 'opencode']);
  assert.is(second.status, 7, second.stderr);
  assert.is(second.stdout, '', 'nothing started the second time');
  assert.is(reported().filter((x) => x.kind === 'serve').length, 1, 'one server');
  assert.ok(alive(record('opencode-serve').pid), 'the server outlives the TUI, for down to stop');
});

test("up opencode --serve URL follows the person's server and down leaves it running", async () => {
  const passwordFile = join(rig.dir, 'my.password');
  writeFileSync(passwordFile, 'the-persons-password\n', { mode: 0o600 });
  const own = await rig.personsServer(
    [rig.env.AEP_OPENCODE_BIN!, 'serve', '--port', String(servePort)],
    { OPENCODE_SERVER_PASSWORD: 'the-persons-password' },
    servePort,
  );
  try {
    const url = `http://127.0.0.1:${servePort}`;
    const r = await cli(['up', 'opencode', '--serve', url, '--serve-token-file', passwordFile, ...ports()]);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, `opencode-serve: attached to the server at ${url}`);
    const adapterArgv = (record('adapter-opencode').argv as string[]).join(' ');
    assert.ok(adapterArgv.includes(`--serve ${url} --serve-password-file ${passwordFile}`), adapterArgv);
    await cli(['down']);
    assert.ok(alive(own.pid), "the person's server runs on");
  } finally {
    own.stop();
  }
});

test('bad input: no opencode binary, or --serve for two vendors at once, says what to do and starts nothing', async () => {
  rig.env.AEP_OPENCODE_BIN = join(rig.dir, 'nowhere', 'opencode');
  const r = await cli(['up', 'opencode', ...ports()]);
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stderr, 'no opencode binary is on PATH: install opencode 1.18.33');
  const both = await cli(['up', 'qwen-code', 'opencode', '--serve', ...ports()]);
  assert.is(both.status, 1, both.stderr);
  assert.match(both.stderr, 'run `aep-steer up qwen-code --serve` and `aep-steer up opencode` apart');
  assert.not.ok(await listening(relayPort), 'nothing started');
});

test.run();
