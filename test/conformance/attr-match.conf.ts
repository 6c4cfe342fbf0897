// attr-match corpus (AEP-0003 §6): 14 verdicts and 10 filters that must fail closed.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent } from '../../src/protocol/envelope.js';
import { FilterError } from '../../src/protocol/errors.js';
import { compileFilter, parseFilterParam } from '../../src/protocol/filter.js';
import { corpusAvailable, readJson, report } from './corpus.js';

interface Corpus {
  match: { name: string; filter: unknown; event: AepEvent; match: boolean }[];
  invalid: { name: string; filter: unknown }[];
}

if (corpusAvailable('attr-match')) {
  const corpus = readJson<Corpus>('fixtures/attr-match/cases.json');

  test('attr-match: 14 verdicts', () => {
    assert.is(corpus.match.length, 14);
    for (const c of corpus.match) {
      assert.is(compileFilter(c.filter)(c.event), c.match, c.name);
      // The SSE query form carries the same filter as JSON text.
      assert.is(parseFilterParam(JSON.stringify(c.filter))(c.event), c.match, `${c.name} (query form)`);
    }
    report('attr-match verdicts', corpus.match.length, corpus.match.length);
  });

  test('attr-match: 10 filters fail closed with FilterError', () => {
    assert.is(corpus.invalid.length, 10);
    for (const c of corpus.invalid) {
      assert.throws(
        () => compileFilter(c.filter),
        (err: unknown) => err instanceof FilterError && err.message.length > 0,
        c.name,
      );
      assert.throws(
        () => parseFilterParam(JSON.stringify(c.filter)),
        (err: unknown) => err instanceof FilterError,
        c.name,
      );
    }
    report('attr-match fail-closed', corpus.invalid.length, corpus.invalid.length);
  });
}

test.run();
