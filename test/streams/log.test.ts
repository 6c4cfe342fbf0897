import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync, writeFileSync } from 'node:fs';
import { openEventLog, parseLog, readEventLog } from '../../src/streams/log.js';
import { tempLog } from '../support/adapter.js';

test('records round-trip as one JSON line each', () => {
  const path = tempLog();
  const { log } = openEventLog(path);
  log.append([{ k: 'flight', s: 's', hook: 'h', ids: ['a', 'b'] }, { k: 'flight', s: 's', hook: 'h2', ids: [] }]);
  log.append([]);
  log.close();
  assert.is(readFileSync(path, 'utf8').split('\n').length, 3);
  assert.equal(readEventLog(path).records.map((r) => r.k === 'flight' && r.hook), ['h', 'h2']);
});

test('a bad middle line is reported and skipped; the lines after it still count', () => {
  const r = parseLog('{"k":"flight","s":"s","hook":"a","ids":[]}\nnot json\n{"k":"flight","s":"s","hook":"b","ids":[]}\n');
  assert.is(r.records.length, 2);
  assert.equal(r.problems.map((p) => p.code), ['LOG_TORN_RECORD']);
});

test('opening a log with a torn tail cuts it before appending', () => {
  const path = tempLog();
  writeFileSync(path, '{"k":"flight","s":"s","hook":"a","ids":[]}\n{"k":"fli');
  const { log, existing } = openEventLog(path);
  assert.equal(existing.problems.map((p) => p.code), ['LOG_TORN_RECORD']);
  log.append([{ k: 'flight', s: 's', hook: 'b', ids: [] }]);
  log.close();
  const again = readEventLog(path);
  assert.equal(again.problems, []);
  assert.equal(again.records.map((r) => r.k === 'flight' && r.hook), ['a', 'b']);
});

test('appending after close fails with LOG_WRITE_FAILED', () => {
  const { log } = openEventLog(tempLog());
  log.close();
  try {
    log.append([{ k: 'flight', s: 's', hook: 'x', ids: [] }]);
    assert.unreachable('append after close must throw');
  } catch (e) {
    assert.is((e as { code?: string }).code, 'LOG_WRITE_FAILED');
  }
});

test.run();
