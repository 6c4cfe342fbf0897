// Every command that names a vendor takes its token or its CLI's name (`claude`, `qwen`), from the
// one alias list in src/adapters/vendors.ts, and says the token in what it prints. Each command runs
// as a person runs it: bin/aep-steer.js in a temp HOME and state dir.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tableFor, vendorAliases, vendorToken, vendorTokens } from '../../src/adapters/registry.js';
import { freePort } from '../support/readme-blocks.js';
import { servicesRig } from '../support/services-rig.js';
import { startTestStack } from './support.js';

const rig = servicesRig('aep-vendor-names-', {
  env: (r) => ({ CLAUDE_CONFIG_DIR: join(r.dir, 'claude'), FORCE_COLOR: '0' }),
});
const { cli } = rig;

test('the alias list: each CLI binary and each native-lane command names its own vendor', () => {
  assert.equal(Object.fromEntries(vendorAliases()), { claude: 'claude-code', qwen: 'qwen-code' });
  for (const token of vendorTokens()) {
    const table = tableFor(token)!;
    assert.is(vendorToken(token), token);
    if (table.cli !== undefined) assert.is(vendorToken(table.cli.bin), token, `${table.cli.bin} → ${token}`);
    for (const lane of table.lanes ?? [])
      if (lane.joins === 'owned' && lane.command !== undefined)
        assert.is(vendorToken(lane.command), token, `${lane.command} → ${token}`);
  }
  assert.is(vendorToken('claud'), undefined);
});

test('install and uninstall take claude and name claude-code', async () => {
  const project = join(rig.dir, 'project');
  const i = await cli(['install', 'claude', '--project', project]);
  assert.is(i.status, 0, i.stderr);
  assert.match(i.stdout, `claude-code: wrote ${join(project, '.claude', 'settings.local.json')}`);
  assert.match(readFileSync(join(project, '.claude', 'settings.local.json'), 'utf8'), 'aep-steer-hook.sh');
  const u = await cli(['uninstall', 'qwen', '--project', project]);
  assert.is(u.status, 0, u.stderr);
  assert.match(u.stdout, /^qwen-code: /);
  const back = await cli(['uninstall', 'claude', '--project', project]);
  assert.is(back.status, 0, back.stderr);
  assert.match(back.stdout, `claude-code: wrote ${join(project, '.claude', 'settings.local.json')}`);
  assert.match(back.stdout, 'removed the adapter hooks');
});

test('install mcp takes the orchestrator by its CLI name', async () => {
  const project = join(rig.dir, 'project');
  const r = await cli(['install', 'mcp', 'claude', '--project', project, '--token', 'mcp-test-token']);
  assert.is(r.status, 0, r.stderr);
  assert.match(r.stdout, `mcp claude-code: wrote ${join(project, '.mcp.json')}`);
});

test('up, status and down take qwen (and --hook-port qwen=N) and name qwen-code', async () => {
  const relayPort = await freePort();
  const hookPort = await freePort();
  const up = await cli(['up', 'qwen', '--relay-port', String(relayPort), '--hook-port', `qwen=${hookPort}`]);
  assert.is(up.status, 0, `${up.stdout}${up.stderr}`);
  assert.match(up.stdout, 'adapter-qwen-code: started (pid ');
  const status = await cli(['status', '--json']);
  const rows = JSON.parse(status.stdout) as { name: string; port: number; running: boolean }[];
  assert.equal(
    rows.map((r) => [r.name, r.port, r.running]),
    [
      ['relay', relayPort, true],
      ['adapter-qwen-code', hookPort, true],
    ],
  );
  const down = await cli(['down', 'qwen']);
  assert.is(down.status, 0, down.stderr);
  assert.match(down.stdout, 'adapter-qwen-code: stopped (pid ');
  assert.not.match(down.stdout, 'relay');
});

test('doctor takes claude and names claude-code', async () => {
  const r = await cli(['doctor', 'claude', '--relay', 'ws://127.0.0.1:1/socket']);
  assert.is(r.status, 1, r.stderr);
  assert.is(r.stderr, '');
  assert.match(r.stdout, 'fix: aep-steer install claude-code, then AEP_INSTRUCT=1 aep-steer up claude-code');
  assert.match(r.stdout, 'then run aep-steer doctor claude-code again');
});

test('adapter takes qwen and serves as qwen-code', async () => {
  const r = await cli(['adapter', 'qwen', '--port', '0', '--no-relay'], 'hooks on http://127.0.0.1:');
  assert.match(
    r.stderr,
    /aep-steer adapter qwen-code \(\d+\.\d+\.\d+\): hooks on http:\/\/127\.0\.0\.1:\d+\/hook\/<secret>/,
  );
});

test('run takes claude and qwen and names the vendor by its token', async () => {
  const c = await cli(['run', 'claude']);
  assert.is(c.status, 3);
  assert.match(c.stderr, 'no claude-code adapter was set up here');
  // Whether qwen-code has a lane `run` takes is the lane's business; the answer names the token.
  const q = await cli(['run', 'qwen']);
  assert.ok(q.status !== 0 && q.status !== null, `exit ${q.status}`);
  assert.match(q.stderr, /^run: .*qwen-code/);
  assert.not.match(q.stderr, /\bqwen\b(?!-code)/);
});

test('instruct --vendor claude sends x.claude-code.control.instruct, which the adapter takes', async () => {
  const stack = await startTestStack();
  try {
    const s = await stack.openSession();
    const r = await cli([
      'instruct',
      '--session',
      s.session,
      '--vendor',
      'claude',
      '--relay',
      stack.relayUrl,
      '--token',
      stack.token,
      '--no-wait',
      'Run the tests first.',
    ]);
    assert.is(r.status, 0, `${r.stdout}${r.stderr}`);
    const sent = await stack.waitFor((e) => e.type.endsWith('.control.instruct') && e.session === s.session);
    assert.is(sent.type, 'x.claude-code.control.instruct');
  } finally {
    await stack.stop();
  }
});

test('an unknown name is still refused by each command, as it was given', async () => {
  const r = await cli(['up', 'claud']);
  assert.is(r.status, 1);
  assert.match(r.stderr, 'unknown vendor "claud"; known: claude-code, codex');
  const d = await cli(['doctor', 'claud']);
  assert.is(d.status, 2);
  assert.match(d.stderr, 'doctor: unknown vendor "claud"');
});

test.run();
