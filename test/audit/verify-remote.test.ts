// D47: `aep-steer audit --verify --relay URL` with no file reads a running relay's rows, evicted
// places, checkpoints and heads through `GET /audit/rows`, page by page, and checks them as a store
// file is checked: intact as written, a row changed under the running relay named at that row, a
// key other than the relay's failing every checkpoint. Only an identity with the `audit` right
// reads the rows; a bad cursor is refused with what to do.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRelay } from '../../src/relay/server.js';
import type { TokenEntry } from '../../src/relay/acl.js';
import { openDatabase } from '../../src/relay/sqlite.js';
import { AUDIT_PAGE } from '../../src/relay/audit-rows.js';
import { runVerify, VERIFY_EXIT } from '../../src/cli/audit-verify.js';
import { emitterFor, ndjson, post } from '../support/relay-harness.js';

const dir = mkdtempSync(join(tmpdir(), 'verify-remote-'));
const storePath = join(dir, 'relay.db');
const EVENTS = AUDIT_PAGE + 500;
const tokens: TokenEntry[] = [
  { token: 'emit-tok', identity: 'emitter', emit: [{ agents: ['*'], sessions: ['*'] }] },
  { token: 'audit-tok', identity: 'auditor', audit: true },
  { token: 'watch-tok', identity: 'watcher' },
];

const capture = () => {
  const out: string[] = [];
  const w = { write: (s: string) => out.push(s) };
  return { text: () => out.join(''), io: { out: w, err: w } as never };
};

let relay: Awaited<ReturnType<typeof startRelay>>;

test.before(async () => {
  relay = await startRelay({ port: 0, storePath, signingKey: join(dir, 'key.pem'), tokens });
  const em = emitterFor('remote-verify');
  for (let b = 0; b < EVENTS / 250; b += 1) {
    const evs = Array.from({ length: 250 }, () => em.emit({ type: 'progress.status', data: { phase: 'p' } }));
    const r = await post(relay.url, ndjson(evs), { authorization: 'Bearer emit-tok' });
    assert.is(r.status, 202, JSON.stringify(r.body));
  }
});

test.after(async () => {
  await relay.close();
});

test('a running relay verifies intact over more than one page, with its checkpoints', async () => {
  const c = capture();
  const code = await runVerify(undefined, { relay: relay.url, token: 'audit-tok' }, c.io);
  assert.is(code, VERIFY_EXIT.intact, c.text());
  const m = /intact: (\d+) rows in 1 chains, (\d+) checkpoints/.exec(c.text());
  assert.ok(m, c.text());
  assert.is(Number(m![1]), EVENTS, 'every row was read, across pages');
  assert.ok(Number(m![2]) >= 2, c.text());
});

test('an identity without the audit right is refused, and told what to add', async () => {
  const c = capture();
  assert.is(await runVerify(undefined, { relay: relay.url, token: 'watch-tok' }, c.io), VERIFY_EXIT.usage);
  assert.match(c.text(), 'watcher may not read');
  assert.match(c.text(), '"audit": true');
  const res = await fetch(`${relay.url}/audit/rows?part=rows`, { headers: { authorization: 'Bearer emit-tok' } });
  assert.is(res.status, 403);
});

test('a cursor the relay did not give, or an unknown part, is refused with what to do', async () => {
  const auth = { headers: { authorization: 'Bearer audit-tok' } };
  const bad = await fetch(`${relay.url}/audit/rows?part=rows&after=not-a-cursor`, auth);
  assert.is(bad.status, 400);
  assert.match(((await bad.json()) as { detail: string }).detail, 'start again without it');
  const part = await fetch(`${relay.url}/audit/rows?part=everything`, auth);
  assert.is(part.status, 400);
  assert.match(((await part.json()) as { detail: string }).detail, 'rows, gone, checkpoints, heads');
});

test('another key fails every checkpoint', async () => {
  const other = join(dir, 'other.pem');
  const { publicKey } = generateKeyPairSync('ed25519');
  writeFileSync(other, publicKey.export({ type: 'spki', format: 'pem' }));
  const c = capture();
  const code = await runVerify(undefined, { relay: relay.url, token: 'audit-tok', key: other }, c.io);
  assert.is(code, VERIFY_EXIT.badCheckpoint, c.text());
  assert.match(c.text(), "does not verify with the relay's public key");
});

test('a row changed in the file under the running relay is named at that row', async () => {
  const db = openDatabase(storePath);
  const row = db.prepare('SELECT arrival, raw FROM events ORDER BY arrival LIMIT 1 OFFSET 1234').get() as {
    arrival: number;
    raw: string;
  };
  db.prepare('UPDATE events SET raw = ? WHERE arrival = ?').run(
    row.raw.replace('"phase":"p"', '"phase":"q"'),
    row.arrival,
  );
  db.close();
  const c = capture();
  const code = await runVerify(undefined, { relay: relay.url, token: 'audit-tok' }, c.io);
  assert.is(code, VERIFY_EXIT.broken, c.text());
  assert.match(c.text(), `changed at row ${row.arrival}`);
});

test('--verify with neither a file nor --relay says what to give', async () => {
  const c = capture();
  assert.is(await runVerify(undefined, {}, c.io), VERIFY_EXIT.usage);
  assert.match(c.text(), '--relay URL');
});

test.run();
