// D47: an adapter with its own key (a file in its state directory, mode 600, made on first
// start) signs the head each generation of its log starts from, so a compacted log's start is
// vouched for. `audit --verify LOG` checks every signed head: a log through rotations,
// compaction and a restart is intact; a head signed by another key, or a compacted start whose
// signature was stripped, exits 4 naming the header; a signed log checked without a key is a
// usage error that says which key to give.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { signLogHead } from '../../src/protocol/chain.js';
import { verifyLog } from '../../src/audit/verify-log.js';
import { runVerify, VERIFY_EXIT } from '../../src/cli/audit-verify.js';
import { headerGeneration } from '../../src/streams/log.js';
import { adapter, steerRounds, tempLog } from '../support/adapter.js';
import { instructCmd } from '../support/session-steps.js';
import { until } from '../support/until.js';

const stateDir = mkdtempSync(join(tmpdir(), 'log-head-'));
const keyFile = join(stateDir, 'adapter-signing-key.pem');
const env = { AEP_STATE_DIR: stateDir };

/** A log written by an adapter with its key, through rotations, compaction and a restart. */
async function signedLog(): Promise<string> {
  const logPath = tempLog();
  const opts = { logPath, segmentBytes: 4096, keepSegments: 1, signingKey: keyFile };
  const first = await adapter(opts);
  await steerRounds(first, 'sg', 6, 24);
  await first.handle.close();
  const second = await adapter(opts);
  second.handle.command(instructCmd('after-restart', 'one more', 'sg-0'));
  await until(() => second.events.some((e) => e.cause === 'after-restart'), 'the ack after the restart');
  await second.handle.close();
  return logPath;
}

const LOG = await signedLog();
const files = () =>
  readdirSync(dirname(LOG))
    .filter((f) => f.includes('.seg-'))
    .sort()
    .map((f) => join(dirname(LOG), f));

function verify(path: string, opts: { key?: string; env?: NodeJS.ProcessEnv }) {
  const out: string[] = [];
  const w = { write: (s: string) => out.push(s) };
  return runVerify(path, opts, { out: w, err: w } as never).then((code) => ({ code, text: out.join('') }));
}

/** A copy of the log's directory, with the oldest kept segment's header rewritten by `edit`. */
function withOldestHeader(edit: (h: Record<string, unknown>) => Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'log-head-copy-'));
  for (const f of [...files(), LOG]) writeFileSync(join(dir, f.slice(dirname(LOG).length + 1)), readFileSync(f));
  const oldest = join(dir, files()[0]!.slice(dirname(LOG).length + 1));
  const lines = readFileSync(oldest, 'utf8').split('\n');
  lines[0] = JSON.stringify(edit(JSON.parse(lines[0]!) as Record<string, unknown>));
  writeFileSync(oldest, lines.join('\n'));
  return join(dir, LOG.slice(dirname(LOG).length + 1));
}

test('D47 the adapter makes its key mode 600 and signs every generation head; the compacted log verifies whole', async () => {
  assert.is(statSync(keyFile).mode & 0o777, 0o600);
  const segs = files();
  assert.ok(!segs.some((f) => f.endsWith('.seg-000000')), 'the first generation was compacted away');
  const header = JSON.parse(readFileSync(segs[0]!, 'utf8').split('\n')[0]!) as { n: number; s?: string; key?: string };
  assert.ok(header.n > 0, 'the oldest kept file starts from a compacted head');
  assert.type(header.s, 'string');
  assert.ok(headerGeneration(segs[0]!) > 0, 'a signed header is still read as a header');
  const v = verifyLog(LOG);
  assert.equal(v.breaks, []);
  assert.is(v.signed, segs.length + 1);
  const r = await verify(LOG, { env });
  assert.is(r.code, VERIFY_EXIT.intact, r.text);
  assert.match(r.text, `from compacted head ${header.n}, ${segs.length + 1} signed heads`);
});

test('D47 a compacted head signed by another key fails with exit 4, naming the header', async () => {
  const other = generateKeyPairSync('ed25519');
  const path = withOldestHeader((h) => ({
    ...h,
    ...signLogHead(h.g as number, { n: h.n as number, head: h.h as string }, other.privateKey, other.publicKey),
  }));
  const r = await verify(path, { key: keyFile });
  assert.is(r.code, VERIFY_EXIT.badCheckpoint, r.text);
  assert.match(r.text, /header events\.jsonl\.seg-\d+:1: its signature does not verify with the adapter's key/);
});

test('D47 a compacted head whose signature was stripped fails with exit 4: nothing vouches for its start', async () => {
  const path = withOldestHeader(({ s: _s, key: _k, ...h }) => h);
  const r = await verify(path, { key: keyFile });
  assert.is(r.code, VERIFY_EXIT.badCheckpoint, r.text);
  assert.match(r.text, /is not signed/);
});

test('D47 a signed log checked with no key at hand is a usage error naming the key to give', async () => {
  const r = await verify(LOG, { env: { AEP_STATE_DIR: mkdtempSync(join(tmpdir(), 'no-key-')) } });
  assert.is(r.code, VERIFY_EXIT.usage);
  assert.match(r.text, 'give --key FILE');
});

test('D47 an adapter key others may read, or one that is not Ed25519, stops the start with its own code', async () => {
  const loose = join(stateDir, 'loose.pem');
  writeFileSync(loose, readFileSync(keyFile), { mode: 0o644 });
  const rsa = join(stateDir, 'rsa.pem');
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(rsa, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  for (const [file, why] of [
    [loose, 'may be read by others'],
    [rsa, 'not Ed25519'],
  ] as const) {
    const err = await adapter({ signingKey: file }).catch((e: unknown) => e);
    assert.is((err as { code?: string }).code, 'SIGNING_KEY_INVALID');
    assert.match((err as Error).message, why);
  }
});

test.run();
