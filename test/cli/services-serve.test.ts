// `aep-steer up qwen-code --serve` with a stand-in `qwen` (AEP_QWEN_BIN; it serves /health behind
// the token and starts a child, as the real daemon starts its agent): the daemon is started in the
// folder `up` runs in, its token in a mode-600 file and in its environment (never its command
// line), before the adapter, whose serve lane names it; `status` asks it with the token; `down
// qwen-code` leaves no process of it. A daemon already answering with the token is attached to
// and left running. And before anything starts, `up` warns of a vendor whose CLI would lack its
// model key here, and of project hooks Qwen Code's folder trust would ignore.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '../support/readme-blocks.js';
import { hold, listening, servicesRig } from '../support/services-rig.js';
import { alive } from '../support/spawned-servers.js';

/** A stand-in `qwen`: `serve --hostname H --port P --require-auth` answers /health only with QWEN_SERVER_TOKEN. */
const STAND_IN = (reports: string) => `const { appendFileSync } = require('node:fs');
const { spawn } = require('node:child_process');
const { createServer } = require('node:http');
const args = process.argv.slice(2);
const token = process.env.QWEN_SERVER_TOKEN;
if (args[0] !== 'serve' || !args.includes('--require-auth') || !token) process.exit(3);
const port = Number(args[args.indexOf('--port') + 1]);
// Its agent child, as the daemon starts one: down must end it too.
const agent = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
appendFileSync(${JSON.stringify(reports)}, JSON.stringify({ pid: process.pid, agent: agent.pid, argv: args, cwd: process.cwd(), token }) + '\\n');
createServer((req, res) => {
  if (req.headers.authorization !== 'Bearer ' + token) { res.writeHead(401); return res.end(); }
  const json = (o) => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(JSON.stringify(o)); };
  if (req.url === '/health') return json({ status: 'ok' });
  if (req.url === '/capabilities') return json({ v: 1, mode: 'http-bridge', workspaceCwd: process.cwd() });
  if (req.url.endsWith('/sessions/live-state')) return json({ sessions: [] });
  res.writeHead(404); res.end();
}).listen(port, '127.0.0.1');
`;

let relayPort = 0;
let hookPort = 0;
let servePort = 0;
const ports = () => [
  '--relay-port',
  String(relayPort),
  '--hook-port',
  `qwen-code=${hookPort}`,
  '--serve-port',
  String(servePort),
];

const rig = servicesRig('aep-serve-up-', {
  inProject: true,
  unset: ['OPENAI_API_KEY', 'CODEX_HOME'],
  async env(r) {
    relayPort = await freePort();
    hookPort = await freePort();
    servePort = await freePort();
    return { AEP_QWEN_BIN: r.standIn('qwen', STAND_IN(r.reports())) };
  },
});
const { cli, state, project, reported, record } = rig;

test('up qwen-code --serve starts the daemon in this folder with its token file, the adapter attaches; down qwen-code leaves no process of it', async () => {
  const r = await cli(['up', 'qwen-code', '--serve', '--instruct', ...ports()]);
  assert.is(r.status, 0, r.stdout + r.stderr);
  const tokenFile = join(state(), 'qwen-serve.token');
  const url = `http://127.0.0.1:${servePort}`;
  assert.match(r.stdout, `qwen-serve: started (pid `);
  assert.match(r.stdout, `serving ${url} for ${project()}; its token is in ${tokenFile} (mode 600)`);
  assert.ok(
    r.stdout.indexOf('qwen-serve: started') < r.stdout.indexOf('adapter-qwen-code: started'),
    'the daemon first',
  );
  assert.is(statSync(tokenFile).mode & 0o777, 0o600, 'the token file is mode 600');
  const token = readFileSync(tokenFile, 'utf8').trim();
  const [daemon] = reported();
  assert.is(daemon!.token, token, 'the daemon requires the token in the file');
  assert.is(daemon!.cwd, project(), 'and serves the folder up ran in');
  assert.equal(daemon!.argv, ['serve', '--hostname', '127.0.0.1', '--port', String(servePort), '--require-auth']);
  assert.not.match(JSON.stringify(record('qwen-serve').argv), token, 'no command line carries the token');
  const adapterArgv = record('adapter-qwen-code').argv as string[];
  assert.ok(adapterArgv.join(' ').includes(`--serve ${url} --serve-token-file ${tokenFile}`), adapterArgv.join(' '));
  assert.match(readFileSync(join(state(), 'logs', 'adapter-qwen-code.log'), 'utf8'), `serve lane ${url}`);

  const again = await cli(['up', 'qwen-code', '--serve', '--instruct', ...ports()]);
  assert.is(again.status, 0, again.stderr);
  assert.match(again.stdout, `qwen-serve: already runs (pid ${daemon!.pid}`);
  assert.is(reported().length, 1, 'not started twice');

  const st = await cli(['status', '--json']);
  const row = (JSON.parse(st.stdout) as { name: string; relayLink: string }[]).find((x) => x.name === 'qwen-serve');
  assert.is(row?.relayLink, 'serving', 'status asks the daemon with its token');

  const down = await cli(['down', 'qwen-code']);
  assert.is(down.status, 0, down.stderr);
  assert.match(down.stdout, 'adapter-qwen-code: stopped');
  assert.match(down.stdout, `qwen-serve: stopped (pid ${daemon!.pid})`);
  assert.ok(down.stdout.indexOf('adapter-qwen-code') < down.stdout.indexOf('qwen-serve'), 'the adapter first');
  assert.not.ok(alive(daemon!.pid as number), 'the daemon ended');
  assert.not.ok(alive(daemon!.agent as number), "and its agent child with it (the daemon's process group)");
  assert.ok(await listening(relayPort), 'the relay was not named and runs on');
});

test('a daemon already answering on the port with the token is attached to, and down leaves it running', async () => {
  const tokenFile = join(rig.dir, 'my.token');
  writeFileSync(tokenFile, 'the-persons-token\n', { mode: 0o600 });
  const own = await rig.personsServer(
    [rig.env.AEP_QWEN_BIN!, 'serve', '--port', String(servePort), '--require-auth'],
    { QWEN_SERVER_TOKEN: 'the-persons-token' },
    servePort,
  );
  try {
    const r = await cli(['up', 'qwen-code', '--serve', '--serve-token-file', tokenFile, ...ports()]);
    assert.is(r.status, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      `qwen-serve: attached to the daemon at http://127.0.0.1:${servePort} (token ${tokenFile}); up did not start it and down leaves it running`,
    );
    assert.ok((record('adapter-qwen-code').argv as string[]).includes('--serve'));
    await cli(['down']);
    assert.ok(alive(own.pid), "the person's daemon runs on");
  } finally {
    own.stop();
  }
});

test('--serve without qwen-code: says which vendor it is for, nothing starts', async () => {
  const r = await cli(['up', 'claude-code', '--serve', '--relay-port', String(relayPort)]);
  assert.is(r.status, 1, r.stderr);
  assert.match(r.stderr, '`aep-steer up qwen-code --serve`');
  assert.not.ok(await listening(relayPort));
});

test('up warns, before anything starts, of a model key the CLIs would lack here and of hooks folder trust would ignore', async () => {
  const codexHome = join(rig.dir, 'home', '.codex');
  mkdirSync(codexHome, { recursive: true });
  writeFileSync(
    join(codexHome, 'config.toml'),
    'model_provider = "mock"\n\n[model_providers.mock]\nname = "mock"\nenv_key = "MOCK_API_KEY"\nwire_api = "responses"\n',
  );
  const qwenDir = join(rig.dir, 'home', '.qwen');
  mkdirSync(qwenDir, { recursive: true });
  writeFileSync(
    join(qwenDir, 'settings.json'),
    JSON.stringify({ security: { auth: { selectedType: 'openai' }, folderTrust: { enabled: true } } }),
  );
  mkdirSync(join(project(), '.qwen'), { recursive: true });
  writeFileSync(join(project(), '.qwen', 'settings.json'), JSON.stringify({ hooks: { Stop: [] } }));
  // The relay's port is taken: up stops there, after its warnings and before it starts anything.
  const blocker = await hold(relayPort);
  try {
    const args = ['up', 'codex', 'qwen-code', '--serve', '--relay-port', String(relayPort)];
    const hooks = ['--hook-port', `codex=${await freePort()}`, '--hook-port', `qwen-code=${hookPort}`];
    const r = await cli([...args, ...hooks, '--serve-port', String(servePort)]);
    assert.is(r.status, 3, r.stderr);
    assert.match(r.stderr, 'up: warning: codex started from this terminal would lack MOCK_API_KEY');
    assert.match(
      r.stderr,
      'export MOCK_API_KEY=<your key> in the terminal you start codex (or `aep-steer run codex`) in',
    );
    assert.match(r.stderr, 'up: warning: the qwen serve daemon up starts here lacks OPENAI_API_KEY');
    assert.match(r.stderr, '`aep-steer down qwen-serve` and `aep-steer up qwen-code --serve` again');
    assert.match(r.stderr, `Qwen Code's folder trust is on and ${project()} is not trusted`);
    assert.match(r.stderr, `add "${project()}": "TRUST_FOLDER" to ${join(qwenDir, 'trustedFolders.json')}`);
    assert.ok(r.stderr.indexOf('warning') < r.stderr.indexOf('nothing was started'));

    // With the key here and the folder trusted, nothing is said of either.
    writeFileSync(join(qwenDir, 'trustedFolders.json'), JSON.stringify({ [project()]: 'TRUST_FOLDER' }));
    rig.env.MOCK_API_KEY = 'set';
    rig.env.OPENAI_API_KEY = 'set';
    const quiet = await cli([...args, ...hooks, '--serve-port', String(servePort)]);
    assert.is(quiet.status, 3, quiet.stderr);
    assert.not.match(quiet.stderr, 'warning');
  } finally {
    await new Promise((r) => blocker.close(r));
  }
});

test.run();
