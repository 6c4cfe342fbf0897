import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeTime, isValid } from 'ulid';
import { ulidSource } from '../../src/protocol/ids.js';
import { newId } from '../../src/protocol/build.js';

test('ids are valid ULIDs carrying their time, strictly increasing within and across milliseconds', () => {
  const next = ulidSource();
  const ids: string[] = [];
  for (let ms = 1_700_000_000_000; ms < 1_700_000_000_050; ms += 1) for (let k = 0; k < 40; k += 1) ids.push(next(ms));
  for (const id of ids) assert.ok(isValid(id), id);
  assert.is(decodeTime(ids[0]!), 1_700_000_000_000);
  assert.is(decodeTime(ids.at(-1)!), 1_700_000_000_049);
  for (let i = 1; i < ids.length; i += 1) assert.ok(ids[i - 1]! < ids[i]!, `${ids[i - 1]} < ${ids[i]}`);
});

test('a clock stepping back keeps ids increasing under the last time seen', () => {
  const next = ulidSource();
  const a = next(2_000);
  const b = next(1_000);
  assert.ok(a < b);
  assert.is(decodeTime(b), 2_000);
});

test('randomness comes from a pool: one fill serves many new milliseconds', () => {
  let fills = 0;
  const next = ulidSource((buf) => {
    fills += 1;
    for (let i = 0; i < buf.length; i += 1) buf[i] = (i * 37 + fills * 11) & 255;
  }, 160);
  // 160 bytes hold ten 16-digit random parts: 100 new milliseconds take 10 fills, not 1,600 draws.
  const seen = new Set<string>();
  for (let ms = 0; ms < 100; ms += 1) seen.add(next(10_000 + ms).slice(10));
  assert.is(fills, 10);
  assert.ok(seen.size > 1, 'random parts differ between milliseconds');
});

test('the default source uses crypto randomness: fresh milliseconds get different random parts', () => {
  const parts = new Set<string>();
  for (let ms = 0; ms < 200; ms += 1) parts.add(newId(5_000_000 + ms).slice(10));
  assert.is(parts.size, 200);
});

test('out-of-range times are refused', () => {
  const next = ulidSource();
  assert.throws(() => next(-1), /ULID time/);
  assert.throws(() => next(2 ** 48), /ULID time/);
  assert.throws(() => next(1.5), /ULID time/);
});

test.run();
