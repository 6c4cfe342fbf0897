// Down-level corpus DL1–DL18 (AEP-0001 §8.2, AEP-0003 §6.4) and the capture-gating corpus (AEP-0006).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AepEvent, CaptureLevel } from '../../src/protocol/envelope.js';
import { downLevel, gateFormValues } from '../../src/protocol/capture.js';
import type { FieldSpec } from '../../src/protocol/payloads.js';
import { validateEvent } from '../../src/protocol/validate.js';
import { corpusAvailable, readJson, report } from './corpus.js';

interface DlCase {
  name: string;
  ceiling: CaptureLevel;
  event: AepEvent;
  expect_capture: CaptureLevel;
  expect_data: unknown;
}
interface GateCase {
  name: string;
  fields: FieldSpec[];
  values: Record<string, unknown>;
  ceiling: CaptureLevel;
  expect: Record<string, unknown>;
}

if (corpusAvailable('downlevel')) {
  const { cases } = readJson<{ cases: DlCase[] }>('fixtures/downlevel/cases.json');

  test('downlevel: 18 cases give the pinned capture and data', () => {
    assert.is(cases.length, 18);
    let passed = 0;
    for (const c of cases) {
      const before = JSON.stringify(c.event);
      const out = downLevel(c.event, c.ceiling);
      assert.is(JSON.stringify(c.event), before, `${c.name}: input not mutated`);
      assert.is(out.capture ?? 'metadata', c.expect_capture, `${c.name}: capture`);
      assert.equal(out.data ?? null, c.expect_data, `${c.name}: data`);
      // Everything but capture and data is untouched (AEP-0001 §5.4: a hop never changes core attributes).
      const { capture: _a, data: _b, ...restOut } = out;
      const { capture: _c, data: _d, ...restIn } = c.event;
      assert.equal(restOut, restIn, `${c.name}: envelope`);
      // The result is a valid event that honours its new level.
      assert.equal(validateEvent(out), [], `${c.name}: valid and honest`);
      passed++;
    }
    report('downlevel', passed, cases.length);
  });

  test('downlevel: a ceiling at or above the level returns the same object', () => {
    for (const c of cases) {
      assert.is(downLevel(c.event, 'full'), c.event);
      assert.is(downLevel(c.event, c.event.capture ?? 'metadata'), c.event);
    }
  });

  const gating = readJson<{ cases: GateCase[] }>('fixtures/capture-gating/cases.json').cases;
  test('capture-gating: 6 cases give the pinned values', () => {
    assert.is(gating.length, 6);
    for (const c of gating) assert.equal(gateFormValues(c.fields, c.values, c.ceiling), c.expect, c.name);
    report('capture-gating', gating.length, gating.length);
  });
}

test.run();
