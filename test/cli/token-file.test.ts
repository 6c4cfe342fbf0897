// `console` and `mcp` read the relay token from `--token-file`: they work against a relay that
// requires that token, and no process's command line carries it (D39). The state dir holds no
// local token, so nothing but the file can be what lets them in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { startMcp, BIN } from '../mcp/support.js';

const TOKEN = `file-only-${Date.now().toString(36)}-token`;
let dir = '';
let relay: RelayHandle;
let tokenFile = '';

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'aep-token-file-'));
  relay = await startRelay({ port: 0, storePath: ':memory:', token: TOKEN });
  tokenFile = join(dir, 'relay-token');
  writeFileSync(tokenFile, `${TOKEN}\n`, { mode: 0o600 });
});
test.after(async () => {
  await relay.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every command line on the machine this user can read that holds `text`. */
function commandLinesHolding(text: string): string[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
        return cmd.includes(text) ? [cmd] : [];
      } catch {
        return [];
      }
    });
}

const freshState = () => ({ HOME: join(dir, 'home'), AEP_STATE_DIR: join(dir, 'state') });

test("console --token-file: the page follows the relay with the file's token; no command line holds it", async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, ...freshState() };
  delete env['AEP_TOKEN'];
  const child = spawn(
    process.execPath,
    [BIN, 'console', '--port', '0', '--relay', relay.socketUrl, '--token-file', tokenFile],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  try {
    for (let i = 0; i < 200 && !/http:\/\/127\.0\.0\.1:\d+\/\S+\//.test(out); i++)
      await new Promise((r) => setTimeout(r, 25));
    const url = /http:\/\/127\.0\.0\.1:\d+\/\S+\//.exec(out)?.[0];
    assert.ok(url, out);
    let connected = false;
    for (let i = 0; i < 200 && !connected; i++) {
      const s = (await (await fetch(`${url}state`)).json()) as { relay: { connected: boolean } };
      connected = s.relay.connected;
      if (!connected) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(connected, `the console's follower never got in: ${out}`);
    assert.equal(commandLinesHolding(TOKEN), []);
    assert.ok(commandLinesHolding(tokenFile).length > 0, 'the console runs with the file named');
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
});

test('mcp --token-file: list_sessions answers from the relay; no command line holds the token', async () => {
  const mcp = await startMcp(['--relay', relay.socketUrl, '--token-file', tokenFile], freshState());
  try {
    const r = await mcp.call('list_sessions', {});
    assert.not.ok(r.isError, r.text);
    assert.equal(commandLinesHolding(TOKEN), []);
    assert.ok(commandLinesHolding(tokenFile).length > 0, 'the server runs with the file named');
  } finally {
    await mcp.close();
  }
  // Without the file the same server is refused: the file is what let it in.
  const bare = await startMcp(['--relay', relay.socketUrl], freshState());
  try {
    const r = await bare.call('list_sessions', {});
    assert.ok(r.isError, r.text);
  } finally {
    await bare.close();
  }
});

test.run();
