// D47: a relay's SQLite store holds one hash chain per source beside its rows, and signed
// checkpoints of the heads. A store written through evictions verifies whole; an edit, deletion,
// insertion or reorder of its rows is named at the row it touched, whether made with SQL or by
// changing one byte of the file; another key makes every checkpoint fail.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { copyFileSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { RelayStore, type Admission } from '../../src/relay/store.js';
import { ensureSigningKey } from '../../src/relay/signing-key.js';
import { openDatabase } from '../../src/relay/sqlite.js';
import { CHECKPOINT_EVERY } from '../../src/relay/store-chain.js';
import { verifyStore } from '../../src/audit/verify-store.js';
import { rowHash } from '../../src/protocol/chain.js';
import { validateEvent } from '../../src/protocol/validate.js';
import { runVerify, VERIFY_EXIT } from '../../src/cli/audit-verify.js';

const dir = mkdtempSync(join(tmpdir(), 'chain-store-'));
const keyFile = join(dir, 'key.pem');
const key = ensureSigningKey(keyFile);
const SOURCES = ['aep://host-a/agent/claude-code', 'aep://host-b/agent/codex', 'aep://host-c/agent/cli'];

/** A store written by the relay's own store class: three sources, six sessions, a small buffer. */
async function writeStore(path: string, events: number): Promise<void> {
  const store = RelayStore.open({ path, bufferCap: 150, sessionCap: 5, signingKey: keyFile });
  let seq = 0;
  for (let b = 0; b < events / 50; b += 1) {
    const batch: Admission[] = [];
    for (let i = 0; i < 50; i += 1) {
      seq += 1;
      const source = SOURCES[seq % 3]!;
      const session = `s${(seq >> 4) % 6}`;
      const agent = source.split('/').at(-1)!;
      const time = new Date(1_790_000_000_000 + seq).toISOString();
      const e = {
        aep: '0.1',
        id: `e${seq}`,
        type: 'session.status',
        source,
        agent,
        time,
        session,
        seq,
        data: { n: seq },
      };
      batch.push({ session, source, id: e.id, epoch: 0, seq, raw: JSON.stringify(e) });
    }
    store.admitAll(batch);
  }
  await store.close();
}

const BASE = join(dir, 'base.db');
await writeStore(BASE, 2500);
const pub = key.publicKey;

function copy(): string {
  const path = join(dir, `t-${Math.random().toString(36).slice(2)}.db`);
  copyFileSync(BASE, path);
  return path;
}

const sql = (path: string, text: string, ...params: (string | number)[]) => {
  const db = openDatabase(path);
  try {
    return db.prepare(text).all(...params) as Record<string, unknown>[];
  } finally {
    db.close();
  }
};

/** Rows of one source still held, in arrival order. */
const rowsOf = (path: string, source: string) =>
  sql(path, 'SELECT arrival, n, prev, raw FROM events WHERE source = ? ORDER BY arrival', source) as {
    arrival: number;
    n: number;
    prev: string;
    raw: string;
  }[];

test('D47 a store written through evictions verifies whole, with signed checkpoints', () => {
  const v = verifyStore(BASE, pub);
  assert.equal(v.breaks, []);
  assert.equal(v.badCheckpoints, []);
  assert.is(v.sources, 3);
  assert.ok(v.checkpoints >= Math.floor(2500 / CHECKPOINT_EVERY), `${v.checkpoints} checkpoints`);
  const held = sql(BASE, 'SELECT count(*) AS c FROM events')[0]!.c as number;
  assert.ok(held < 1500, `rows were evicted (${2500 - held}) and still the chains link`);
  assert.is(statSync(keyFile).mode & 0o777, 0o600);
  // The chain sits beside the envelope: every stored event and every checkpoint is a valid AEP event.
  for (const r of sql(BASE, 'SELECT raw FROM events UNION ALL SELECT raw FROM checkpoints'))
    assert.equal(validateEvent(JSON.parse(r.raw as string), { registry: false }), []);
});

test('D47 a changed, deleted, copied or reordered row is named at that row', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(...SOURCES),
      fc.nat(),
      fc.constantFrom('edit', 'delete', 'insert', 'swap'),
      (source, pick, how) => {
        const path = copy();
        const rows = rowsOf(path, source);
        // A row whose successor in the chain is still held (not evicted): what a reader would check.
        const held = rows.flatMap((r, k) => (k + 1 < rows.length && rows[k + 1]!.n === r.n + 1 ? [k] : []));
        const i = held[pick % held.length]!;
        const r = rows[i]!;
        const next = rows[i + 1]!;
        if (how === 'edit')
          sql(path, 'UPDATE events SET raw = ? WHERE arrival = ?', r.raw.replace('"n":', '"n": '), r.arrival);
        if (how === 'delete') sql(path, 'DELETE FROM events WHERE arrival = ?', r.arrival);
        let at = how === 'delete' ? `row ${next.arrival}` : `row ${r.arrival}`;
        if (how === 'insert') {
          // Room between two arrivals, then a row forged to link to the one before it.
          sql(path, 'UPDATE events SET arrival = -arrival * 2');
          sql(path, 'UPDATE events SET arrival = -arrival');
          const raw = r.raw.replace('"data":{', '"data":{"forged":true,');
          sql(
            path,
            'INSERT INTO events (arrival, session, epoch, seq, source, id, raw, n, prev) VALUES (?, ?, 0, 0, ?, ?, ?, ?, ?)',
            ...[r.arrival * 2 + 1, 'forged', source, 'forged', raw, r.n + 1, rowHash(r.n, r.prev, r.raw)],
          );
          at = `row ${r.arrival * 2 + 1}`;
        }
        if (how === 'swap') {
          sql(path, 'UPDATE events SET arrival = -1 WHERE arrival = ?', r.arrival);
          sql(path, 'UPDATE events SET arrival = ? WHERE arrival = ?', r.arrival, next.arrival);
          sql(path, 'UPDATE events SET arrival = ? WHERE arrival = -1', next.arrival);
        }
        const b = verifyStore(path, pub).breaks;
        const want = { edit: 'changed', delete: 'removed', insert: 'inserted', swap: 'reordered' }[how];
        assert.is(b[0]?.chain, source);
        assert.is(b[0]?.kind, want, JSON.stringify(b[0]));
        assert.is(b[0]?.at, at);
      },
    ),
    { numRuns: 40 },
  );
});

test('D47 one byte of an old event edited in the file is named at its row, with the checkpoint it contradicts', async () => {
  const path = copy();
  const [first] = rowsOf(path, SOURCES[1]!);
  const bytes = readFileSync(path);
  const at = bytes.indexOf(Buffer.from(first!.raw.slice(0, 60)));
  assert.ok(at > 0, 'the row is in the file');
  const mark = bytes.indexOf(Buffer.from('"data":{"n":'), at) + 12;
  bytes[mark] = bytes[mark] === 0x39 ? 0x38 : bytes[mark]! + 1;
  writeFileSync(path, bytes);
  const v = verifyStore(path, pub);
  assert.is(v.breaks[0]?.at, `row ${first!.arrival}`);
  assert.is(v.breaks[0]?.kind, 'changed');
  assert.ok(v.breaks[0]?.contradicts, 'a signed head covers it');
  const out: string[] = [];
  const io = { out: { write: (s: string) => out.push(s) }, err: { write: (s: string) => out.push(s) } };
  const code = await runVerify(path, { key: keyFile }, io as never);
  assert.is(code, VERIFY_EXIT.broken);
  assert.match(out.join(''), `changed at row ${first!.arrival}`);
});

test('D47 the last row deleted is named against the head the store and its checkpoint hold', () => {
  const path = copy();
  const rows = rowsOf(path, SOURCES[0]!);
  sql(path, 'DELETE FROM events WHERE arrival = ?', rows.at(-1)!.arrival);
  const b = verifyStore(path, pub).breaks;
  assert.is(b[0]?.kind, 'removed');
  assert.match(b[0]!.at, `after row ${rows.at(-2)!.arrival}`);
});

test('D47 checkpoints checked with another key all fail, and the verdict says so with its own exit code', async () => {
  const other = createPublicKey(generateKeyPairSync('ed25519').privateKey);
  const v = verifyStore(BASE, other);
  assert.ok(v.checkpoints > 0);
  assert.is(v.badCheckpoints.length, v.checkpoints);
  const otherFile = join(dir, 'other.pem');
  writeFileSync(otherFile, other.export({ type: 'spki', format: 'pem' }));
  const out: string[] = [];
  const io = { out: { write: (s: string) => out.push(s) }, err: { write: (s: string) => out.push(s) } };
  assert.is(await runVerify(BASE, { key: otherFile }, io as never), VERIFY_EXIT.badCheckpoint);
  assert.match(out.join(''), 'signature does not verify');
  assert.is(await runVerify(BASE, { key: keyFile }, io as never), VERIFY_EXIT.intact);
});

test.run();
