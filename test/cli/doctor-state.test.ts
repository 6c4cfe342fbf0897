// D21, D47: doctor's state check covers the signing keys the relay and the adapter make in the
// state directory: a key others may read is named with the chmod that fixes it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stateChecks } from '../../src/doctor/checks.js';

const fresh = () => {
  const dir = join(mkdtempSync(join(tmpdir(), 'doctor-state-')), 'state');
  mkdirSync(dir, { mode: 0o700 });
  return { dir, env: { AEP_STATE_DIR: dir } as NodeJS.ProcessEnv };
};

test("an adapter's signing key others may read is named, with the chmod that fixes it", () => {
  const { dir, env } = fresh();
  const key = join(dir, 'adapter-signing-key.pem');
  writeFileSync(key, 'k', { mode: 0o600 });
  chmodSync(key, 0o644);
  const [c] = stateChecks(env);
  assert.is(c!.ok, false);
  assert.match(c!.detail, key);
  assert.is(c!.fix, `chmod 600 ${key}`);
});

test("the relay's key and a loose directory each get their own fix; private keys pass and are counted", () => {
  const { dir, env } = fresh();
  const relayKey = join(dir, 'relay-signing-key.pem');
  writeFileSync(relayKey, 'k', { mode: 0o600 });
  chmodSync(relayKey, 0o640);
  chmodSync(dir, 0o755);
  const [bad] = stateChecks(env);
  assert.is(bad!.fix, `chmod 700 ${dir} && chmod 600 ${relayKey}`);
  chmodSync(dir, 0o700);
  chmodSync(relayKey, 0o600);
  writeFileSync(join(dir, 'adapter-signing-key.pem'), 'k', { mode: 0o600 });
  const [ok] = stateChecks(env);
  assert.is(ok!.ok, true, ok!.detail);
  assert.match(ok!.detail, 'both signing keys 600');
});

test.run();
