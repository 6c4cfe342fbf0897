// Golden corpus: all 64 events pass the full validation tier and the stream rules.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { relayCheck, validateEvent } from '../../src/protocol/validate.js';
import { checkStream } from '../../src/protocol/stream-checks.js';
import { corpusAvailable, readJsonl, report } from './corpus.js';

if (corpusAvailable('golden')) {
  const golden = readJsonl<AepEvent>('fixtures/golden/golden.jsonl');

  test('golden: 64 events', () => {
    assert.is(golden.length, 64);
  });

  test('golden: every event passes the full check (envelope, registry, payload, capture)', () => {
    let passed = 0;
    for (const e of golden) {
      assert.equal(validateEvent(e), [], `${e.id} ${e.type}`);
      assert.is(relayCheck(e), undefined, `${e.id} relay tier`);
      passed++;
    }
    report('golden events', passed, golden.length);
  });

  test('golden: the stream as a whole breaks no stream rule', () => {
    assert.equal(checkStream(golden), []);
    // Redelivering the whole corpus byte-identically is legal and changes nothing.
    assert.equal(checkStream([...golden, ...golden.map((e) => JSON.parse(JSON.stringify(e)) as AepEvent)]), []);
    report('golden stream rules', 1, 1);
  });
}

test.run();
