// `uninstall mcp <vendor>` puts every config file back as `install mcp` found it: a file install
// created is gone again (no empty .mcp.json, no settings.local.json holding only an approval, no
// empty config.toml), a key it added goes, a file that held other things keeps them byte for
// byte. And `install mcp` says the auth the server will really use.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installMcp, uninstallMcp } from '../../src/mcp/install.js';
import { BIN } from './support.js';

let dir = '';
const env = (): NodeJS.ProcessEnv => ({ HOME: join(dir, 'home'), AEP_STATE_DIR: join(dir, 'state') });
const RELAY = 'ws://127.0.0.1:9999/socket';

test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'aep-mcp-restore-'));
  mkdirSync(join(dir, 'home'), { recursive: true });
});
test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
});

test('claude-code --project in an empty project: uninstall leaves no .mcp.json, no .claude/, no approval', () => {
  const project = join(dir, 'proj');
  mkdirSync(project);
  installMcp('claude-code', { project, relay: RELAY, env: env() });
  assert.ok(existsSync(join(project, '.mcp.json')));
  assert.ok(existsSync(join(project, '.claude', 'settings.local.json')));
  const r = uninstallMcp('claude-code', { project, env: env() });
  assert.ok(r.changed);
  assert.ok(r.notes.some((n) => n.includes('withdrew the approval')));
  assert.not.ok(existsSync(join(project, '.mcp.json')), 'no empty .mcp.json left');
  assert.not.ok(existsSync(join(project, '.claude')), 'the .claude directory install made is gone');
  assert.not.ok(existsSync(join(dir, 'state', 'mcp-installed.json')), 'nothing remembered once all is undone');
});

test('files that held other things before: after uninstall each is byte for byte what it was', () => {
  const project = join(dir, 'proj');
  mkdirSync(join(project, '.claude'), { recursive: true });
  // Written the way the installers write JSON, so a rewrite that changes nothing is visible as such.
  const mcp = `${JSON.stringify({ other: 1 }, null, 2)}\n`;
  const settings = `${JSON.stringify({ hooks: { Stop: [] }, enabledMcpjsonServers: ['theirs'] }, null, 2)}\n`;
  const empty = `${JSON.stringify({ mcpServers: {} }, null, 2)}\n`;
  writeFileSync(join(project, '.mcp.json'), mcp);
  writeFileSync(join(project, '.claude', 'settings.local.json'), settings);
  installMcp('claude-code', { project, relay: RELAY, env: env() });
  assert.match(readFileSync(join(project, '.claude', 'settings.local.json'), 'utf8'), '"aep-steer"');
  uninstallMcp('claude-code', { project, env: env() });
  assert.is(readFileSync(join(project, '.mcp.json'), 'utf8'), mcp, 'mcpServers, which install added, is gone again');
  assert.is(readFileSync(join(project, '.claude', 'settings.local.json'), 'utf8'), settings, 'only our approval went');

  // An empty mcpServers the user had stays: only what install added goes.
  writeFileSync(join(project, '.mcp.json'), empty);
  installMcp('claude-code', { project, relay: RELAY, env: env() });
  uninstallMcp('claude-code', { project, env: env() });
  assert.is(readFileSync(join(project, '.mcp.json'), 'utf8'), empty);
});

test("install twice, uninstall once: still back to nothing (the first install's note is kept)", () => {
  const project = join(dir, 'proj');
  mkdirSync(project);
  installMcp('claude-code', { project, relay: RELAY, env: env() });
  installMcp('claude-code', { project, relay: 'ws://127.0.0.1:9998/socket', env: env() });
  uninstallMcp('claude-code', { project, env: env() });
  assert.not.ok(existsSync(join(project, '.mcp.json')));
  assert.not.ok(existsSync(join(project, '.claude')));
});

test('codex: a config.toml install created is removed; ~/.codex made for it goes too', () => {
  const e = env();
  installMcp('codex', { relay: RELAY, env: e });
  const file = join(dir, 'home', '.codex', 'config.toml');
  assert.ok(existsSync(file));
  assert.ok(uninstallMcp('codex', { env: e }).changed);
  assert.not.ok(existsSync(file), 'no empty config.toml left');
  assert.not.ok(existsSync(join(dir, 'home', '.codex')));
});

test('install mcp states the auth the server will use: a token file, the local token, or AEP_TOKEN for a remote relay', () => {
  const project = join(dir, 'proj');
  mkdirSync(project);
  const withFile = installMcp('claude-code', { project, relay: RELAY, tokenFile: join(dir, 'tok'), env: env() });
  assert.ok(
    withFile.notes.includes(`auth: the relay token in ${join(dir, 'tok')} (read at each start; it must stay mode 600)`),
    withFile.notes.join('\n'),
  );
  assert.not.ok(
    withFile.notes.some((n) => n.includes('AEP_TOKEN')),
    'a token file wins over AEP_TOKEN: no word of it',
  );

  const local = installMcp('claude-code', { project, relay: RELAY, env: env() });
  const note = local.notes.find((n) => n.startsWith('auth:'))!;
  assert.match(
    note,
    `auth: the local token in ${join(dir, 'state', 'token')} (not there yet: the relay creates it on its first start)`,
  );
  assert.match(note, "AEP_TOKEN when the agent's environment sets it");

  const remote = installMcp('claude-code', { project, relay: 'wss://relay.example:8787/socket', env: env() });
  assert.match(
    remote.notes.find((n) => n.startsWith('auth:'))!,
    "auth: AEP_TOKEN from the agent's environment; without it wss://relay.example:8787/socket refuses every command",
  );

  // The CLI prints it.
  const run = spawnSync(
    process.execPath,
    [BIN, 'install', 'mcp', 'claude-code', '--project', project, '--relay', RELAY, '--token-file', join(dir, 'tok')],
    { env: { ...process.env, ...env() }, encoding: 'utf8' },
  );
  assert.is(run.status, 0, run.stderr);
  assert.match(run.stdout, `auth: the relay token in ${join(dir, 'tok')}`);
  const un = spawnSync(process.execPath, [BIN, 'uninstall', 'mcp', 'claude-code', '--project', project], {
    env: { ...process.env, ...env() },
    encoding: 'utf8',
  });
  assert.is(un.status, 0, un.stderr);
  assert.match(un.stdout, `removed ${join(project, '.mcp.json')}`);
  assert.match(un.stdout, 'withdrew the approval in');
  assert.not.ok(existsSync(join(project, '.mcp.json')));
});

test.run();
