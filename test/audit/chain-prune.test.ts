// D47: `chain_gone`, the places and links evicted rows leave, does not grow with the history: of
// each source's evicted places below its oldest row still held only the highest stays, so the
// table is bounded by what the buffer holds, whatever was written; the pruned store still
// verifies whole, and a deleted oldest row is still named.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RelayStore, type Admission } from '../../src/relay/store.js';
import { ensureSigningKey } from '../../src/relay/signing-key.js';
import { openDatabase } from '../../src/relay/sqlite.js';
import { CHECKPOINT_EVERY } from '../../src/relay/store-chain.js';
import { verifyStore } from '../../src/audit/verify-store.js';

const dir = mkdtempSync(join(tmpdir(), 'chain-prune-'));
const keyFile = join(dir, 'key.pem');
const { publicKey } = ensureSigningKey(keyFile);

/** Two agents' sources, each its own session, and a CLI source whose commands land in both. */
const sourceOf = (k: number): [string, string] =>
  k % 5 === 0 ? ['aep://cli/agent/aep-steer', `w${(k >> 3) % 2}`] : [`aep://host/agent/a${k % 2}`, `w${k % 2}`];

/** Writes `total` events in batches of 40 through the relay's store class, with a small buffer. */
async function write(path: string, total: number): Promise<void> {
  const store = RelayStore.open({ path, bufferCap: 60, sessionCap: 4, signingKey: keyFile });
  for (let k = 1; k <= total; ) {
    const batch: Admission[] = [];
    for (const end = Math.min(total, k + 39); k <= end; k += 1) {
      const [source, session] = sourceOf(k);
      const positioned = !source.startsWith('aep://cli');
      const raw = JSON.stringify({ aep: '0.1', id: `p${k}`, type: 'session.status', source, session, data: { k } });
      batch.push(
        positioned ? { session, source, id: `p${k}`, epoch: 0, seq: k, raw } : { session, source, id: `p${k}`, raw },
      );
    }
    store.admitAll(batch);
  }
  await store.close();
}

const count = (path: string, sql: string, ...p: string[]): number => {
  const db = openDatabase(path);
  try {
    return (db.prepare(sql).get(...p) as { c: number }).c;
  } finally {
    db.close();
  }
};

test('D47 chain_gone stays bounded by what the buffer holds, and the pruned store verifies whole', async () => {
  const small = join(dir, 'small.db');
  const large = join(dir, 'large.db');
  await write(small, 3 * CHECKPOINT_EVERY);
  await write(large, 12 * CHECKPOINT_EVERY);
  const goneSmall = count(small, 'SELECT count(*) AS c FROM chain_gone');
  const goneLarge = count(large, 'SELECT count(*) AS c FROM chain_gone');
  const evicted = 12 * CHECKPOINT_EVERY - count(large, 'SELECT count(*) AS c FROM events');
  // Without pruning it holds one place per evicted row; pruned, at most a pass's worth of them
  // plus the places between rows still held.
  assert.ok(evicted > 11_000, `${evicted} rows evicted`);
  assert.ok(goneLarge < 2 * CHECKPOINT_EVERY, `${goneLarge} evicted places kept of ${evicted}`);
  assert.ok(goneLarge < goneSmall + CHECKPOINT_EVERY, `four times the writes: ${goneSmall} then ${goneLarge} places`);
  const v = verifyStore(large, publicKey);
  assert.equal(v.breaks, []);
  assert.equal(v.badCheckpoints, []);
  assert.ok(v.checkpoints >= 12);
});

test('D47 in a pruned store, the oldest row of a source deleted is named removed', () => {
  const path = join(dir, 'tampered.db');
  copyFileSync(join(dir, 'large.db'), path);
  const db = openDatabase(path);
  const source = 'aep://host/agent/a1';
  const rows = db.prepare('SELECT arrival, n FROM events WHERE source = ? ORDER BY n').all(source) as {
    arrival: number;
    n: number;
  }[];
  const below = db
    .prepare('SELECT count(*) AS c FROM chain_gone WHERE source = ? AND n < ?')
    .get(source, rows[0]!.n) as {
    c: number;
  };
  assert.is(below.c, 1, 'only the highest evicted place below the oldest row is kept');
  db.prepare('DELETE FROM events WHERE arrival = ?').run(rows[0]!.arrival);
  db.close();
  const b = verifyStore(path, publicKey).breaks;
  assert.is(b[0]?.kind, 'removed', JSON.stringify(b[0]));
  assert.is(b[0]?.at, `row ${rows[1]!.arrival}`);
});

test.run();
