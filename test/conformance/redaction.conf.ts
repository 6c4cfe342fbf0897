// Redaction corpus (AEP-0003 §9.4 plus hardening): 28 text cases and 5 value cases.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { redactText, redactValue, type RedactOptions } from '../../src/protocol/redact.js';
import { corpusAvailable, readJson, report } from './corpus.js';

interface Case<I> {
  name: string;
  input: I;
  opts?: RedactOptions;
  must_contain?: string[];
  must_not_contain?: string[];
}

function check(name: string, out: string, c: Case<unknown>): void {
  for (const s of c.must_not_contain ?? [])
    assert.not.ok(out.includes(s), `${name}: must not contain ${JSON.stringify(s)} in ${JSON.stringify(out)}`);
  for (const s of c.must_contain ?? [])
    assert.ok(out.includes(s), `${name}: must contain ${JSON.stringify(s)} in ${JSON.stringify(out)}`);
}

if (corpusAvailable('redaction')) {
  const corpus = readJson<{ text_cases: Case<string>[]; value_cases: Case<unknown>[] }>(
    'fixtures/redaction/cases.json',
  );

  test('redaction: 28 text cases', () => {
    assert.is(corpus.text_cases.length, 28);
    for (const c of corpus.text_cases) check(c.name, redactText(c.input, { home: '/nonexistent-home', ...c.opts }), c);
    report('redaction text', corpus.text_cases.length, corpus.text_cases.length);
  });

  test('redaction: 5 value cases', () => {
    assert.is(corpus.value_cases.length, 5);
    for (const c of corpus.value_cases) {
      const before = JSON.stringify(c.input);
      check(c.name, JSON.stringify(redactValue(c.input, { home: '/nonexistent-home', ...c.opts })), c);
      assert.is(JSON.stringify(c.input), before, `${c.name}: input not mutated`);
    }
    report('redaction value', corpus.value_cases.length, corpus.value_cases.length);
  });
}

test.run();
