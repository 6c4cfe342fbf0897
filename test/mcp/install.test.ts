// `aep-steer install mcp <vendor>` on real files in a temp dir: the entry it writes, merging with
// the user's own servers, idempotence, uninstall taking out only ours, a malformed config refused
// untouched, the token kept in a private file, and the written entry starting a working server.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { installMcp, uninstallMcp, MCP_ENTRY } from '../../src/mcp/install.js';
import { BIN } from './support.js';

let dir = '';
const env = (): NodeJS.ProcessEnv => ({ HOME: join(dir, 'home'), AEP_STATE_DIR: join(dir, 'state') });
const json = (p: string) => JSON.parse(readFileSync(p, 'utf8')) as Record<string, Record<string, unknown>>;

test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), 'aep-mcp-install-'));
});
test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
});

test("claude-code --project: .mcp.json gets the server next to the user's own, approved in settings.local.json", () => {
  const project = join(dir, 'proj');
  mkdirSync(project, { recursive: true });
  writeFileSync(
    join(project, '.mcp.json'),
    JSON.stringify({ mcpServers: { theirs: { command: 'their-server' } }, other: 1 }),
  );
  const r = installMcp('claude-code', {
    project,
    relay: 'ws://127.0.0.1:9999/socket',
    tokenFile: join(dir, 'tok'),
    env: env(),
  });
  assert.ok(r.changed);
  assert.is(r.file, join(project, '.mcp.json'));
  const cfg = json(r.file);
  assert.equal(cfg['mcpServers']!['theirs'], { command: 'their-server' });
  assert.is(cfg['other'] as unknown, 1);
  const ours = cfg['mcpServers']![MCP_ENTRY] as { type: string; command: string; args: string[] };
  assert.is(ours.type, 'stdio');
  assert.is(ours.command, process.execPath);
  assert.equal(ours.args, [BIN, 'mcp', '--relay', 'ws://127.0.0.1:9999/socket', '--token-file', join(dir, 'tok')]);
  assert.not.match(readFileSync(r.file, 'utf8'), /"--token"/);
  assert.equal(json(join(project, '.claude', 'settings.local.json'))['enabledMcpjsonServers'], [
    MCP_ENTRY,
  ] as unknown as Record<string, unknown>);
  // Idempotent, then uninstall removes only ours.
  assert.not.ok(
    installMcp('claude-code', { project, relay: 'ws://127.0.0.1:9999/socket', tokenFile: join(dir, 'tok'), env: env() })
      .changed,
  );
  assert.ok(uninstallMcp('claude-code', { project, env: env() }).changed);
  assert.equal(json(r.file)['mcpServers'], { theirs: { command: 'their-server' } });
  assert.not.ok(uninstallMcp('claude-code', { project, env: env() }).changed);
});

test('claude-code user scope: mcpServers in ~/.claude.json (or $CLAUDE_CONFIG_DIR/.claude.json), other keys kept', () => {
  const home = join(dir, 'home');
  mkdirSync(home, { recursive: true });
  writeFileSync(join(home, '.claude.json'), JSON.stringify({ numStartups: 3 }));
  const r = installMcp('claude-code', { relay: 'ws://127.0.0.1:1/socket', env: env() });
  assert.is(r.file, join(home, '.claude.json'));
  assert.is(json(r.file)['numStartups'] as unknown, 3);
  assert.ok(json(r.file)['mcpServers']![MCP_ENTRY]);
  assert.ok(
    r.notes.some((n) => n.includes('AEP_TOKEN')),
    'says where the token comes from without --token-file',
  );
  const cfg = installMcp('claude-code', {
    relay: 'ws://127.0.0.1:1/socket',
    env: { ...env(), CLAUDE_CONFIG_DIR: join(dir, 'cfg') },
  });
  assert.is(cfg.file, join(dir, 'cfg', '.claude.json'));
});

test('a malformed .mcp.json is refused and left as it was', () => {
  const project = join(dir, 'proj');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, '.mcp.json'), '{ nope');
  assert.throws(
    () => installMcp('claude-code', { project, relay: 'ws://x/socket', env: env() }),
    /not valid JSON; fix it first, nothing was changed/,
  );
  assert.is(readFileSync(join(project, '.mcp.json'), 'utf8'), '{ nope');
});

test("codex: a [mcp_servers.aep-steer] table in config.toml with a tool timeout above instruct's wait; the rest kept", () => {
  const home = join(dir, 'codex-home');
  mkdirSync(home, { recursive: true });
  const mine = 'model = "o4"\n\n[mcp_servers.theirs]\ncommand = "x"\n\n[hooks.state."a"]\ntrusted_hash = "h"\n';
  writeFileSync(join(home, 'config.toml'), mine);
  const e = { ...env(), CODEX_HOME: home };
  const r = installMcp('codex', { relay: 'ws://127.0.0.1:2/socket', tokenFile: '/t', sender: 'lead', env: e });
  const toml = readFileSync(r.file, 'utf8');
  assert.ok(toml.startsWith(mine.trimEnd()));
  assert.match(
    toml,
    `[mcp_servers.aep-steer]\ncommand = ${JSON.stringify(process.execPath)}\nargs = [${JSON.stringify(BIN)}, "mcp", "--relay", "ws://127.0.0.1:2/socket", "--token-file", "/t", "--sender", "lead"]\ntool_timeout_sec = 660\n`,
  );
  // Reinstalling with another relay replaces our table, once.
  installMcp('codex', { relay: 'ws://127.0.0.1:3/socket', env: e });
  const again = readFileSync(r.file, 'utf8');
  assert.is(again.split('[mcp_servers.aep-steer]').length, 2);
  assert.match(again, 'ws://127.0.0.1:3/socket');
  assert.not.match(again, 'ws://127.0.0.1:2/socket');
  assert.ok(uninstallMcp('codex', { env: e }).changed);
  assert.is(readFileSync(r.file, 'utf8'), mine);
  assert.throws(
    () => installMcp('nope', { relay: 'ws://x', env: e }),
    /no MCP config writer for "nope"; known: claude-code, codex/,
  );
});

test('the CLI: install mcp keeps --token in a mode-600 file, and the entry it wrote starts a server that answers tools/list', async () => {
  const project = join(dir, 'proj');
  mkdirSync(project, { recursive: true });
  const run = spawnSync(
    process.execPath,
    [
      BIN,
      'install',
      'mcp',
      'claude-code',
      '--project',
      project,
      '--relay',
      'ws://127.0.0.1:9/socket',
      '--token',
      'orchestrator-token',
    ],
    { env: { ...process.env, ...env() }, encoding: 'utf8' },
  );
  assert.is(run.status, 0, run.stderr);
  const tokenFile = join(dir, 'state', 'mcp-token');
  assert.match(run.stdout, `stored the relay token in ${tokenFile} (mode 600)`);
  assert.match(run.stdout, `wrote ${join(project, '.mcp.json')}`);
  assert.is(statSync(tokenFile).mode & 0o777, 0o600);
  assert.is(readFileSync(tokenFile, 'utf8'), 'orchestrator-token\n');
  assert.not.match(readFileSync(join(project, '.mcp.json'), 'utf8'), 'orchestrator-token');

  const entry = json(join(project, '.mcp.json'))['mcpServers']![MCP_ENTRY] as { command: string; args: string[] };
  const client = new Client({ name: 'install-check', version: '0' });
  await client.connect(
    new StdioClientTransport({
      command: entry.command,
      args: entry.args,
      env: { PATH: process.env['PATH'] ?? '' },
      stderr: 'ignore',
    }),
  );
  try {
    const { tools } = await client.listTools();
    assert.ok(tools.some((t) => t.name === 'instruct'));
  } finally {
    await client.close();
  }

  const usage = spawnSync(process.execPath, [BIN, 'install', 'mcp'], {
    env: { ...process.env, ...env() },
    encoding: 'utf8',
  });
  assert.is(usage.status, 1);
  assert.match(usage.stderr, 'name the orchestrating agent: aep-steer install mcp <claude-code|codex>');
  assert.not.ok(existsSync(join(dir, 'home', '.claude.json')));
});

test('a token file others can read is refused with the fix', () => {
  const file = join(dir, 'loose-token');
  writeFileSync(file, 'tok\n', { mode: 0o644 });
  const run = spawnSync(process.execPath, [BIN, 'mcp', '--relay', 'ws://127.0.0.1:9/socket', '--token-file', file], {
    encoding: 'utf8',
    input: '',
  });
  assert.is(run.status, 1);
  assert.match(run.stderr, `token file ${file} is readable by others (mode 644); run chmod 600 ${file}`);
});

test.run();
