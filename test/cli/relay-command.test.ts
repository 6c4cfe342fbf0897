import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { relayOptions } from '../../src/cli/relay-command.js';
import { projectRoot } from '../support/shared-dir.js';

const flags = { host: '127.0.0.1', port: '0', store: '/tmp/x.db', buffer: '100', maxSessions: '7' };

test('flags become relay options; --memory wins over --store', () => {
  const o = relayOptions({ ...flags, memory: true, token: 't', maxBody: '1024', maxBatch: '9' });
  assert.equal(o, {
    host: '127.0.0.1',
    port: 0,
    storePath: ':memory:',
    bufferCap: 100,
    sessionCap: 7,
    limits: { maxBody: 1024, maxBatch: 9 },
    token: 't',
  });
  assert.is(relayOptions(flags).storePath, '/tmp/x.db');
});

test('bad numbers and a bad tokens file are CONFIG_INVALID errors', () => {
  const code = (f: () => unknown) => {
    try {
      f();
      return undefined;
    } catch (err) {
      return (err as { code?: string }).code;
    }
  };
  assert.is(
    code(() => relayOptions({ ...flags, port: 'eighty' })),
    'CONFIG_INVALID',
  );
  assert.is(
    code(() => relayOptions({ ...flags, buffer: '0' })),
    'CONFIG_INVALID',
  );
  const dir = mkdtempSync(join(tmpdir(), 'relay-cli-'));
  const f = join(dir, 'tokens.json');
  writeFileSync(f, '{"tokens":[{"token":"a"}]}', { mode: 0o600 });
  assert.is(
    code(() => relayOptions({ ...flags, tokens: f })),
    'CONFIG_INVALID',
  );
  writeFileSync(f, '{"tokens":[{"token":"a","identity":"ops","commands":["control.*"]}]}');
  assert.equal(relayOptions({ ...flags, tokens: f }).tokens, [
    { token: 'a', identity: 'ops', commands: ['control.*'] },
  ]);
});

test('`aep-steer relay` runs as a process: SQLite file store, token, clean exit 0 on SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-cli-'));
  const store = join(dir, 'data', 'relay.db');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(projectRoot, 'test/support/relay-cli-entry.ts'), 'relay', '--port', '0', '--store', store],
    {
      cwd: projectRoot,
      env: { ...process.env, AEP_TOKEN: 'cli-token' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`relay exited ${code}: ${stderr}`)));
  });
  assert.not.match(stderr, /cli-token/);
  assert.match(stderr, /token required/);
  assert.is((await fetch(`${url}/events`)).status, 401);
  assert.is((await fetch(`${url}/events`, { headers: { authorization: 'Bearer cli-token' } })).status, 200);
  assert.ok(existsSync(store));
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  assert.is(await exit, 0);
});

test.run();
