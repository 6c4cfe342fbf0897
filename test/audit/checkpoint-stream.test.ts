// D47: the relay puts each checkpoint it signs on the stream, not only in its store: a live
// subscriber gets it as a valid AEP event whose signature verifies with the key in discovery. An
// idle relay's last rows are signed by a tick within the checkpoint interval of arriving (the
// tick's clock is the test's own: nothing waits 60 s), and a tick with nothing new signs nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { startRelay } from '../../src/relay/server.js';
import { CHECKPOINT_EVERY, CHECKPOINT_MS } from '../../src/relay/store-chain.js';
import { CHECKPOINT_TYPE, publicKeyFrom, verifyHeads, type SignedHead } from '../../src/protocol/chain.js';
import { validateEvent } from '../../src/protocol/validate.js';
import { openDatabase } from '../../src/relay/sqlite.js';
import { runVerify, VERIFY_EXIT } from '../../src/cli/audit-verify.js';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { emitterFor, ndjson, post, SseClient } from '../support/relay-harness.js';
import { aepFile, readJson } from '../support/shared-dir.js';

const dir = mkdtempSync(join(tmpdir(), 'checkpoint-stream-'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
const envelope = ajv.compile(readJson(aepFile('schemas', 'aep-event.schema.json')));

/** A ticker the test drives: the interval it was asked for, and a tick on demand. */
function manualTicker() {
  const t = { ms: 0, tick: () => {}, stopped: false };
  return {
    t,
    ticker: (tick: () => void, ms: number) => {
      t.tick = tick;
      t.ms = ms;
      return () => {
        t.stopped = true;
      };
    },
  };
}

const checkpointsIn = (sse: SseClient): AepEvent[] => sse.events.filter((e) => e.type === CHECKPOINT_TYPE);

async function publicKeyOf(url: string) {
  const doc = (await (await fetch(`${url}/.well-known/aep`)).json()) as { audit: { public_key: string } };
  return publicKeyFrom(doc.audit.public_key)!;
}

/** Each checkpoint a subscriber got: valid AEP (the standard's schema and the project's rules), signed by the relay. */
function assertSigned(e: AepEvent, key: ReturnType<typeof publicKeyFrom>): SignedHead[] {
  assert.ok(envelope(e), ajv.errorsText(envelope.errors));
  assert.equal(validateEvent(e, { registry: false }), []);
  const data = e.data as { heads: SignedHead[]; sig: string };
  assert.ok(verifyHeads(data.heads, data.sig, key!), 'the signature verifies with the public key in discovery');
  return data.heads;
}

test('D47 a checkpoint the store signs after 1,000 rows reaches a live subscriber, valid and signed', async () => {
  const { ticker } = manualTicker();
  const storePath = join(dir, 'batch.db');
  const relay = await startRelay({ port: 0, storePath, signingKey: join(dir, 'k1.pem'), checkpointTicker: ticker });
  const sse = await SseClient.open(relay.url, {});
  try {
    const key = await publicKeyOf(relay.url);
    const em = emitterFor('cp-batch');
    for (let b = 0; b < CHECKPOINT_EVERY / 100 + 1; b += 1) {
      const evs = Array.from({ length: 100 }, () => em.emit({ type: 'progress.status', data: { phase: 'p' } }));
      assert.is((await post(relay.url, ndjson(evs))).status, 202);
    }
    await sse.until((c) => checkpointsIn(c).length > 0);
    const [cp] = checkpointsIn(sse);
    const heads = assertSigned(cp!, key);
    assert.is(heads.length, 1);
    assert.ok(heads[0]!.n >= CHECKPOINT_EVERY, `signed ${heads[0]!.n} rows`);
    // The same event the store kept.
    const db = openDatabase(storePath);
    const kept = db.prepare('SELECT raw FROM checkpoints').all() as { raw: string }[];
    db.close();
    assert.ok(
      kept.some((k) => (JSON.parse(k.raw) as AepEvent).id === cp!.id),
      'the fanned-out checkpoint is the stored one',
    );
  } finally {
    sse.close();
    await relay.close();
  }
});

test('D47 an idle relay signs its last rows on the next tick, within the checkpoint interval, and a quiet tick signs nothing', async () => {
  const { t, ticker } = manualTicker();
  const storePath = join(dir, 'idle.db');
  const relay = await startRelay({ port: 0, storePath, signingKey: join(dir, 'k2.pem'), checkpointTicker: ticker });
  const sse = await SseClient.open(relay.url, {});
  try {
    assert.ok(t.ms > 0 && t.ms <= 60_000, `the tick runs every ${t.ms} ms`);
    assert.is(t.ms, CHECKPOINT_MS);
    const key = await publicKeyOf(relay.url);
    const em = emitterFor('cp-idle');
    const evs = Array.from({ length: 5 }, () => em.emit({ type: 'progress.status', data: { phase: 'p' } }));
    assert.is((await post(relay.url, ndjson(evs))).status, 202);
    await sse.until((c) => c.events.filter((e) => e.session === 'cp-idle').length === 5);
    // Five rows are no batch's checkpoint: nothing is signed until the tick.
    assert.is(checkpointsIn(sse).length, 0);
    t.tick();
    await sse.until((c) => checkpointsIn(c).length === 1);
    const heads = assertSigned(checkpointsIn(sse)[0]!, key);
    assert.equal(
      heads.map((h) => [h.source, h.n]),
      [[evs[0]!.source, 5]],
    );
    // A tick with no new row signs nothing; the next row is signed by the tick after it.
    t.tick();
    const more = em.emit({ type: 'progress.status', data: { phase: 'q' } });
    assert.is((await post(relay.url, ndjson([more]))).status, 202);
    await sse.until((c) => c.events.some((e) => e.id === more.id));
    t.tick();
    await sse.until((c) => checkpointsIn(c).length === 2);
    assert.equal(
      assertSigned(checkpointsIn(sse)[1]!, key).map((h) => h.n),
      [6],
    );
    assert.is(checkpointsIn(sse).length, 2, 'the quiet tick made none');
  } finally {
    sse.close();
    await relay.close();
  }
  assert.ok(t.stopped, 'closing the relay stops the tick');
  const out: string[] = [];
  const w = { write: (s: string) => out.push(s) };
  assert.is(
    await runVerify(storePath, { key: join(dir, 'k2.pem') }, { out: w, err: w } as never),
    VERIFY_EXIT.intact,
    out.join(''),
  );
  assert.match(out.join(''), /6 rows in 1 chains, 2 checkpoints/);
});

test('D47 a relay that closes signs the rows no checkpoint covers yet', async () => {
  const { ticker } = manualTicker();
  const storePath = join(dir, 'close.db');
  const relay = await startRelay({ port: 0, storePath, signingKey: join(dir, 'k3.pem'), checkpointTicker: ticker });
  const em = emitterFor('cp-close');
  const evs = Array.from({ length: 3 }, () => em.emit({ type: 'progress.status', data: { phase: 'p' } }));
  assert.is((await post(relay.url, ndjson(evs))).status, 202);
  await relay.close();
  const db = openDatabase(storePath);
  const kept = db.prepare('SELECT raw FROM checkpoints').all() as { raw: string }[];
  db.close();
  assert.equal(
    kept.map((k) => (JSON.parse(k.raw) as { data: { heads: SignedHead[] } }).data.heads.map((h) => h.n)),
    [[3]],
  );
});

test.run();
