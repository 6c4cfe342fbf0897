// D47: a running relay makes its signing key on first start (mode 600), publishes the public half
// in its discovery document, and signs the chain heads of what it stores; `audit --verify` with
// `--relay URL` checks the store against that key. A key that is not Ed25519 is refused at start.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../src/relay/server.js';
import { CHECKPOINT_EVERY } from '../../src/relay/store-chain.js';
import { CHECKPOINT_TYPE } from '../../src/protocol/chain.js';
import { runVerify, VERIFY_EXIT } from '../../src/cli/audit-verify.js';
import { emitterFor, ndjson, post } from '../support/relay-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'chain-relay-'));
const io = () => {
  const out: string[] = [];
  const w = { write: (s: string) => out.push(s) };
  return { out, io: { out: w, err: w } as never };
};

test('D47 the relay makes its key, publishes it, signs its heads, and audit --verify --relay checks them', async () => {
  const keyFile = join(dir, 'state', 'relay-signing-key.pem');
  const storePath = join(dir, 'relay.db');
  const relay = await startRelay({ port: 0, storePath, signingKey: keyFile });
  try {
    assert.is(statSync(keyFile).mode & 0o777, 0o600);
    const doc = (await (await fetch(`${relay.url}/.well-known/aep`)).json()) as { audit?: Record<string, string> };
    assert.is(doc.audit?.checkpoint, CHECKPOINT_TYPE);
    assert.match(doc.audit?.public_key ?? '', 'BEGIN PUBLIC KEY');
    const em = emitterFor('chain-relay');
    for (let b = 0; b < (CHECKPOINT_EVERY * 1.5) / 100; b += 1) {
      const evs = Array.from({ length: 100 }, () => em.emit({ type: 'progress.status', data: { phase: 'p' } }));
      assert.is((await post(relay.url, ndjson(evs))).status, 202);
    }
    // A read flushes the group write: every posted event is in the file after it.
    await fetch(`${relay.url}/events?from=${encodeURIComponent(JSON.stringify([{ session: 'chain-relay' }]))}`);
    const ok = io();
    assert.is(await runVerify(storePath, { relay: relay.url }, ok.io), VERIFY_EXIT.intact, ok.out.join(''));
    assert.match(ok.out.join(''), /intact: \d+ rows in 1 chains, [1-9]\d* checkpoints/, ok.out.join(''));
  } finally {
    await relay.close();
  }
});

test('D47 a signing key that is not Ed25519 is refused at start with its own code', async () => {
  const rsa = join(dir, 'rsa.pem');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(rsa, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  const err = await startRelay({ port: 0, storePath: join(dir, 'r2.db'), signingKey: rsa }).catch((e: unknown) => e);
  assert.is((err as { code?: string }).code, 'SIGNING_KEY_INVALID');
  assert.match((err as Error).message, 'not Ed25519');
});

test.run();
