// Zero-config local use: the relay creates the local token on first start (600 in a 700 dir),
// an adapter starting at the same moment agrees on it, and it is only ever offered to a loopback relay.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { withLocalToken, relayOptions } from '../../src/cli/relay-command.js';
import {
  ensureLocalToken,
  isLoopbackUrl,
  localTokenPath,
  readLocalToken,
  tokenFor,
} from '../../src/relay/local-token.js';

const fresh = () => {
  const root = mkdtempSync(join(tmpdir(), 'local-token-'));
  return { root, env: { AEP_STATE_DIR: join(root, 'state') } as NodeJS.ProcessEnv };
};
const flags = { host: '127.0.0.1', port: '0', store: ':memory:', buffer: '10', maxSessions: '5' };

test('first start creates the token mode 600 in a 700 directory; later starts read the same one', () => {
  const { root, env } = fresh();
  const a = ensureLocalToken(env);
  assert.ok(a.created);
  assert.is(a.path, join(root, 'state', 'token'));
  assert.is(statSync(a.path).mode & 0o777, 0o600);
  assert.is(statSync(join(root, 'state')).mode & 0o777, 0o700);
  assert.match(a.token, /^[A-Za-z0-9_-]{32}$/);
  const b = ensureLocalToken(env);
  assert.equal([b.created, b.token], [false, a.token]);
  assert.is(readLocalToken(env), a.token);
  rmSync(root, { recursive: true, force: true });
});

test('a token file someone else wrote first wins (exclusive create)', () => {
  const { root, env } = fresh();
  ensureLocalToken(env);
  writeFileSync(localTokenPath(env), 'from-the-adapter\n');
  assert.is(ensureLocalToken(env).token, 'from-the-adapter');
  rmSync(root, { recursive: true, force: true });
});

test('the relay uses the local token unless given --token, a tokens file or --no-token', () => {
  const { root, env } = fresh();
  const local = withLocalToken(relayOptions(flags), {}, env);
  assert.is(local.options.token, readFileSync(localTokenPath(env), 'utf8').trim());
  assert.match(local.note!, `local token created in ${localTokenPath(env)}`);
  assert.match(withLocalToken(relayOptions(flags), {}, env).note!, 'read from');
  assert.is(withLocalToken(relayOptions({ ...flags, token: 'given' }), { token: 'given' }, env).options.token, 'given');
  assert.is(
    withLocalToken(relayOptions({ ...flags, token: false }), { token: false }, env).options.token,
    undefined,
    '--no-token is watch-only',
  );
  rmSync(root, { recursive: true, force: true });
});

test('the local token goes only to a loopback relay; a given token always wins', () => {
  const { root, env } = fresh();
  const { token } = ensureLocalToken(env);
  for (const url of ['ws://127.0.0.1:8787/socket', 'ws://localhost:1/socket', 'ws://[::1]:2/socket']) {
    assert.ok(isLoopbackUrl(url), url);
    assert.is(tokenFor(url, undefined, env), token);
  }
  assert.is(tokenFor('wss://relay.example.com/socket', undefined, env), undefined);
  assert.is(tokenFor('ws://10.0.0.2:8787/socket', undefined, env), undefined);
  assert.not.ok(isLoopbackUrl('not a url'));
  assert.is(tokenFor('ws://127.0.0.1:8787/socket', 'mine', env), 'mine');
  rmSync(root, { recursive: true, force: true });
});

test.run();
